#pragma once
// The profile file: a versioned JSON document (docs/profile-format.md) that a GPU server writes
// and a laptop reads. Reading checks the format and version and every field's type, and throws
// ModelError(path, problem) naming the field; writing is atomic (a crash never leaves half a file).
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "trainscope/core/profile.h"

namespace ts {

nlohmann::json profileToJson(const Profile& p);
// `source` names the document in errors ("profile.json").
Profile profileFromJson(const nlohmann::json& j, const std::string& source);

void writeProfile(const Profile& p, const std::string& path);
Profile readProfile(const std::string& path);
// Whether `path` is a TrainScope profile file (a .json whose opening names the format), so that
// every input that takes a MODEL also takes a PROFILE. False for a missing or unreadable file:
// the model loader then reports it.
bool isProfileFile(const std::string& path);

// Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): one complete event per span,
// one thread row per track, with the layer in args.
nlohmann::json timelineToTraceJson(const Timeline& t, const std::string& title);
void writeTrace(const Timeline& t, const std::string& title, const std::string& path);

}  // namespace ts
