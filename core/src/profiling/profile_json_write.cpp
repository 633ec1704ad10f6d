// Profile -> JSON (docs/profile-format.md). Every field is written so that reading the document
// back gives the same Profile; doubles go through nlohmann::json's shortest round-trip printing.
// Keys keep the order written here (ordered_json), so a file starts with its format and version
// and reads top-down; profileToJson hands out the same content as a plain nlohmann::json.
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "profile_fields.h"
#include "profile_json.h"
#include "trainscope/core/profile_file.h"

namespace ts {
namespace {

using json = nlohmann::ordered_json;
using namespace profilefile;

// JSON has no NaN or infinity (nlohmann would write null), so such a figure would make a file
// that cannot be read back: refuse it here, naming the field, before anything is written.
double finite(double v, const std::string& path) {
    if (!std::isfinite(v)) throw std::invalid_argument(path + ": is not a finite number (" + std::to_string(v) + ")");
    return v;
}

json timingToJson(const TimingStat& t, const std::string& path) {
    json j = json::object();
    for (const auto& f : kTimingFields) j[f.key] = finite(t.*f.member, path + "." + f.key);
    j["repeats"] = t.repeats;
    return j;
}

json kernelsToJson(const std::vector<KernelRecord>& kernels, const std::string& path) {
    json list = json::array();
    for (size_t i = 0; i < kernels.size(); ++i) {
        const KernelRecord& k = kernels[i];
        json j = {{"name", k.name},
                  {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                  {"block", {k.block[0], k.block[1], k.block[2]}}};
        for (const auto& f : kKernelIntFields) j[f.key] = k.*f.member;
        j["duration_us"] = finite(k.durationUs, path + "[" + std::to_string(i) + "].duration_us");
        j["launches"] = k.launches;
        j["tensor_core"] = k.tensorCore;
        list.push_back(std::move(j));
    }
    return list;
}

json layerToJson(const LayerProfile& l, const std::string& path) {
    json j = {{"op", l.op},
              {"name", l.name},
              {"type", l.type},
              {"module_path", l.modulePath},
              {"output_shape", l.outputShape},
              {"forward", timingToJson(l.forward, path + ".forward")},
              {"has_backward", l.hasBackward}};
    if (l.hasBackward || !isDefault(l.backward)) j["backward"] = timingToJson(l.backward, path + ".backward");
    j["saved_bytes"] = finite(l.savedBytes, path + ".saved_bytes");
    j["output_bytes"] = finite(l.outputBytes, path + ".output_bytes");
    if (!l.forwardKernels.empty()) j["forward_kernels"] = kernelsToJson(l.forwardKernels, path + ".forward_kernels");
    if (!l.backwardKernels.empty())
        j["backward_kernels"] = kernelsToJson(l.backwardKernels, path + ".backward_kernels");
    if (!l.note.empty()) j["note"] = l.note;
    return j;
}

json runToJson(const ProfileRun& r, const std::string& path) {
    json j = {{"batch", r.batch}, {"fits", r.fits}};
    if (!r.error.empty()) j["error"] = r.error;
    j["complete"] = r.complete;
    j["wall_seconds"] = finite(r.wallSeconds, path + ".wall_seconds");
    j["iteration"] = timingToJson(r.iteration, path + ".iteration");
    json parts = json::array();
    for (size_t i = 0; i < r.parts.size(); ++i)
        parts.push_back(
            {{"name", r.parts[i].name}, {"ms", finite(r.parts[i].ms, path + ".parts[" + std::to_string(i) + "].ms")}});
    j["parts"] = std::move(parts);
    json memory = json::object();
    for (const auto& f : kMemoryFields) memory[f.key] = finite(r.memory.*f.member, path + ".memory." + f.key);
    j["memory"] = std::move(memory);
    json layers = json::array();
    for (size_t i = 0; i < r.layers.size(); ++i)
        layers.push_back(layerToJson(r.layers[i], path + ".layers[" + std::to_string(i) + "]"));
    j["layers"] = std::move(layers);
    return j;
}

json deviceToJson(const DeviceProperties& d) {
    json j = json::object();
    for (const auto& f : kDeviceTextFields) j[f.key] = d.*f.member;
    j["compute_capability"] = std::to_string(d.ccMajor) + "." + std::to_string(d.ccMinor);
    j["total_memory_bytes"] = d.totalMemoryBytes;
    for (const auto& f : kDeviceIntFields) j[f.key] = d.*f.member;
    j["ecc_enabled"] = d.eccEnabled;
    return j;
}

json environmentToJson(const ProfileEnvironment& e) {
    json software = json::object();
    for (const auto& f : kSoftwareFields)
        if (!(e.software.*f.member).empty()) software[f.key] = e.software.*f.member;
    json j = {{"device", e.device}, {"device_name", e.deviceName}, {"cpu_threads", e.cpuThreads},
              {"host", e.host},     {"started_at", e.startedAt},   {"software", std::move(software)}};
    if (e.gpu) j["gpu"] = deviceToJson(*e.gpu);
    return j;
}

json scenarioToJson(const ProfileScenario& s) {
    json j = json::object();
    for (const auto& f : kScenarioTextFields) j[f.key] = s.*f.member;
    j["seq"] = s.seq;
    j["cudnn_benchmark"] = s.cudnnBenchmark;
    return j;
}

}  // namespace

namespace profilefile {

json orderedProfileJson(const Profile& p) {
    json j = {{"format", kFormat}, {"version", Profile::kFormatVersion}, {"complete", p.complete}};
    if (!p.incompleteReason.empty()) j["incomplete_reason"] = p.incompleteReason;
    j["environment"] = environmentToJson(p.environment);
    j["scenario"] = scenarioToJson(p.scenario);
    json kernels = {{"recorded", p.kernelsRecorded}};
    if (!p.kernelsMissingReason.empty()) kernels["missing_reason"] = p.kernelsMissingReason;
    j["kernels"] = std::move(kernels);
    j["notes"] = p.notes;
    json runs = json::array();
    for (size_t i = 0; i < p.runs.size(); ++i) runs.push_back(runToJson(p.runs[i], "runs[" + std::to_string(i) + "]"));
    j["runs"] = std::move(runs);
    return j;
}

}  // namespace profilefile

nlohmann::json profileToJson(const Profile& p) {
    return nlohmann::json(profilefile::orderedProfileJson(p));
}

}  // namespace ts
