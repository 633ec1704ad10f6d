#pragma once
// Inside the profile-file code: the writer's key-ordered document and the text parser that
// readProfile and the fuzz target share.
#include <nlohmann/json.hpp>
#include <string>

namespace ts {
struct Profile;
struct Timeline;
}  // namespace ts

namespace ts::profilefile {

// profileToJson with the keys in the documented order ("format" and "version" first).
// Throws std::invalid_argument naming the field when a figure is NaN or infinite.
nlohmann::ordered_json orderedProfileJson(const Profile& p);

// timelineToTraceJson with keys in the order Chrome's own traces use ("traceEvents" first).
// Throws std::invalid_argument naming the span when a time is NaN or infinite, or a duration negative.
nlohmann::ordered_json orderedTraceJson(const Timeline& t, const std::string& title);

// JSON text -> document; a ModelError naming `source` when it is not JSON (truncated, binary)
// or nests deeper than limits::kMaxNesting.
nlohmann::json parseProfileText(const std::string& text, const std::string& source);

}  // namespace ts::profilefile
