#pragma once
// Inside the profile-file code: the key-ordered documents that the writers dump.
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

// timelineToTraceJson with its keys in a fixed order ("traceEvents" first, then each event's name).
// Throws std::invalid_argument naming the span when a time is NaN or infinite, or a duration negative.
nlohmann::ordered_json orderedTraceJson(const Timeline& t, const std::string& title);

}  // namespace ts::profilefile
