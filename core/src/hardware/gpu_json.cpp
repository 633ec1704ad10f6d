#include "trainscope/core/gpu_json.h"

#include <cmath>

#include "gpu_fields.h"

namespace ts {

using nlohmann::json;

json figureToJson(const Figure& f) {
    json j = json::object();
    j["value"] = f.value ? json(*f.value) : json(nullptr);
    if (!f.source.empty()) j["source"] = f.source;
    if (f.estimate) j["estimate"] = true;
    if (f.unsupported) j["unsupported"] = true;
    if (!f.unknown.empty()) j["unknown"] = f.unknown;
    if (!f.note.empty()) j["note"] = f.note;
    return j;
}

json archLimitsToJson(const ArchLimits& l) {
    auto kb = [](int bytes) { return bytes % 1024 == 0 ? json(bytes / 1024) : json(bytes / 1024.0); };
    return {{"compute_capability", std::to_string(l.ccMajor) + "." + std::to_string(l.ccMinor)},
            {"name", l.name},
            {"max_threads_per_sm", l.maxThreadsPerSm},
            {"max_blocks_per_sm", l.maxBlocksPerSm},
            {"registers_per_sm", l.registersPerSm},
            {"max_registers_per_block", l.maxRegistersPerBlock},
            {"max_registers_per_thread", l.maxRegistersPerThread},
            {"max_threads_per_block", l.maxThreadsPerBlock},
            {"warp_size", l.warpSize},
            {"shared_memory_per_sm_kb", kb(l.sharedMemoryPerSmBytes)},
            {"shared_memory_per_block_kb", kb(l.sharedMemoryPerBlockBytes)},
            {"shared_memory_per_block_optin_kb", kb(l.sharedMemoryPerBlockOptinBytes)},
            {"reserved_shared_memory_per_block_kb", kb(l.reservedSharedMemoryPerBlockBytes)},
            {"tensor_cores", l.tensorCores},
            {"source", l.source}};
}

json gpuToJson(const GpuSpec& g) {
    json j = {{"id", g.id}, {"name", g.name}, {"device_names", g.deviceNames},
              {"architecture", g.architecture}, {"chip", g.chip},
              {"compute_capability", g.computeCapability()}, {"segment", g.segment},
              {"form_factor", g.formFactor}};
    if (g.releaseYear) j["release_year"] = g.releaseYear;
    auto put = [&](const char* key, const Figure& f) {
        if (f.known() || f.unsupported || !f.unknown.empty()) j[key] = figureToJson(f);
    };
    for (const gpudb::FigureField& f : gpudb::kFigureFields) put(f.key, g.*f.member);
    if (!g.memoryType.empty()) j["memory_type"] = g.memoryType;
    for (auto [key, table] : {std::pair{"tensor_tflops", &g.tensorTflops},
                              {"tensor_tflops_fp16_accumulate", &g.tensorTflopsFp16Accumulate}}) {
        if (table->empty()) continue;
        json t = json::object();
        for (const auto& [k, f] : *table) t[k] = figureToJson(f);
        j[key] = t;
    }
    json ic = json::object();
    for (const gpudb::InterconnectField& f : gpudb::kInterconnectFields) {
        const Figure& fig = g.interconnect.*f.member;
        if (fig.known() || !fig.unknown.empty()) ic[f.key] = figureToJson(fig);
    }
    const NvLinkTopologyInfo& topo = g.interconnect.nvlinkTopology;
    if (topo.kind != NvLinkTopology::Unknown) {
        ic["nvlink_topology"] = {{"kind", nvlinkTopologyName(topo.kind)}, {"max_gpus", topo.maxGpus}, {"source", topo.source}};
        if (!topo.note.empty()) ic["nvlink_topology"]["note"] = topo.note;
        if (!topo.links.empty()) ic["nvlink_topology"]["links"] = topo.links;
    }
    if (!ic.empty()) j["interconnect"] = ic;
    json prices = json::array();
    for (const Price& p : g.prices) {
        json pj = {{"provider", p.provider}, {"usd_per_gpu_hour", p.usdPerGpuHour}, {"source", p.source},
                   {"date", p.date}};
        if (!p.instance.empty()) pj["instance"] = p.instance;
        if (!p.region.empty()) pj["region"] = p.region;
        if (!p.note.empty()) pj["note"] = p.note;
        prices.push_back(pj);
    }
    j["prices"] = prices;
    if (!g.pricesNote.empty()) j["prices_note"] = g.pricesNote;
    if (!g.purchases.empty()) {
        json buy = json::array();
        for (const PurchasePrice& p : g.purchases) {
            json pj = {{"kind", p.kind}, {"usd", p.usd}, {"date", p.date}, {"source", p.source}};
            if (!p.note.empty()) pj["note"] = p.note;
            if (p.watts > 0) pj["watts"] = p.watts;
            buy.push_back(pj);
        }
        j["purchase"] = buy;
    }
    if (g.calibration) {
        json m = json::object();
        for (const auto& [name, value] : g.calibration->measured) {
            auto unit = g.calibration->units.find(name);
            m[name] = {{"value", value}, {"unit", unit == g.calibration->units.end() ? "" : unit->second}};
        }
        j["calibration"] = {{"date", g.calibration->date}, {"driver", g.calibration->driver},
                            {"software", g.calibration->software}, {"origin", g.calibration->origin},
                            {"measurements", m}};
    }
    return j;
}

json calibrationToJson(const CalibrationResult& r) {
    json m = json::object();
    for (const Measurement& x : r.measurements) {
        json e = {{"value", x.value ? json(*x.value) : json(nullptr)}, {"unit", x.unit}};
        if (x.repetitions) {
            e["cv"] = std::round(x.cv * 1e5) / 1e5;
            e["repetitions"] = x.repetitions;
        }
        if (!x.detail.empty()) e["detail"] = x.detail;
        m[x.name] = e;
    }
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
    json j = {{"date", r.date},
              {"driver", "CUDA driver API " + version(r.driverVersion)},
              {"software", "CUDA runtime " + version(r.runtimeVersion) +
                               (r.cublasVersion.empty() ? "" : ", cuBLASLt " + r.cublasVersion)},
              {"origin", "trainscope-cli calibrate on device " + std::to_string(r.device.index) + " (" +
                             r.device.name + (r.device.pciBusId.empty() ? "" : ", " + r.device.pciBusId) + ")"},
              {"measurements", m}};
    if (!r.warnings.empty()) j["warnings"] = r.warnings;
    return j;
}

GpuCalibration calibrationFromResult(const CalibrationResult& r, const std::string& origin) {
    json j = calibrationToJson(r);
    GpuCalibration c;
    c.date = j["date"];
    c.driver = j["driver"];
    c.software = j["software"];
    c.origin = origin.empty() ? j["origin"].get<std::string>() : origin;
    for (const Measurement& m : r.measurements)
        if (m.value) {
            c.measured[m.name] = *m.value;
            c.units[m.name] = m.unit;
        }
    return c;
}

}  // namespace ts
