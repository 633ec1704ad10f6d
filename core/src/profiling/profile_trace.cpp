// A Timeline as a Chrome trace-event document (the "JSON Object Format" of the Trace Event
// Format that chrome://tracing and ui.perfetto.dev load): one complete ("X") event per span,
// one thread row per track, named and ordered by metadata ("M") events.
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "profile_json.h"
#include "trainscope/core/profile_file.h"

namespace ts {
namespace {

using json = nlohmann::ordered_json;

constexpr int kPid = 1;

std::string trackName(const TraceSpan& s) {
    return s.track.empty() ? "(no track)" : s.track;
}

bool isHostTrack(const std::string& track) {
    return track.rfind("host", 0) == 0;
}

// Thread ids by track: host rows first, then the rest, each in order of first appearance
// (spans come in time order, so the stream that started first is listed first).
std::vector<std::string> trackOrder(const Timeline& t) {
    std::vector<std::string> host, other;
    std::map<std::string, bool> seen;
    for (const TraceSpan& s : t.spans) {
        const std::string track = trackName(s);
        if (seen.emplace(track, true).second) (isHostTrack(track) ? host : other).push_back(track);
    }
    host.insert(host.end(), other.begin(), other.end());
    return host;
}

json metadata(const char* name, int tid, json args) {
    return {{"name", name}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

}  // namespace

namespace profilefile {

json orderedTraceJson(const Timeline& t, const std::string& title) {
    json events = json::array();
    events.push_back(metadata("process_name", 0, {{"name", title}}));
    std::map<std::string, int> tids;
    for (const std::string& track : trackOrder(t)) {
        const int tid = int(tids.size()) + 1;
        tids[track] = tid;
        events.push_back(metadata("thread_name", tid, {{"name", track}}));
        events.push_back(metadata("thread_sort_index", tid, {{"sort_index", tid}}));
    }
    for (size_t i = 0; i < t.spans.size(); ++i) {
        const TraceSpan& s = t.spans[i];
        const std::string where = "span " + std::to_string(i) + " (\"" + s.name + "\")";
        if (!std::isfinite(s.startUs) || !std::isfinite(s.durationUs))
            throw std::invalid_argument(where + ": start or duration is not a finite number");
        if (s.durationUs < 0) throw std::invalid_argument(where + ": negative duration");
        json e = {{"name", s.name}};
        if (!s.category.empty()) e["cat"] = s.category;
        e["ph"] = "X";
        e["ts"] = s.startUs;
        e["dur"] = s.durationUs;
        e["pid"] = kPid;
        e["tid"] = tids.at(trackName(s));
        if (!s.layer.empty()) e["args"] = {{"layer", s.layer}};
        events.push_back(std::move(e));
    }
    return {{"traceEvents", std::move(events)},
            {"displayTimeUnit", "ms"},
            {"otherData", {{"title", title}, {"generator", "TrainScope"}}}};
}

}  // namespace profilefile

nlohmann::json timelineToTraceJson(const Timeline& t, const std::string& title) {
    return nlohmann::json(profilefile::orderedTraceJson(t, title));
}

}  // namespace ts
