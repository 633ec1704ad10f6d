#include "trainscope/predictors/scaling/kernel_scaling_table.h"

#include "trainscope/core/errors.h"
#include "trainscope/predictors/scaling/kernel_fit.h"
#include "trainscope/predictors/scaling/kernel_validation.h"

namespace ts::predictors {

extern const char* const kBuiltinKernelScalingJson;  // generated from resources/kernel-scaling.json

namespace {

using nlohmann::json;

// mem_eff only where the class model uses it (memory-bound classes).
json statsJson(const GpuOpStats& s, bool memory) {
    json j = {{"floor_ms", s.floorMs}};
    if (memory) j["mem_eff"] = s.memEff;
    return j;
}

double number(const json& j, const char* key, const std::string& where, const std::string& origin) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number())
        throw ModelError(origin, where + ": '" + key + "' must be a number");
    return j[key].get<double>();
}

GpuOpStats statsFrom(const json& j, const std::string& where, const std::string& origin) {
    GpuOpStats s;
    s.floorMs = number(j, "floor_ms", where, origin);
    if (j.contains("mem_eff")) s.memEff = number(j, "mem_eff", where, origin);
    if (s.floorMs < 0 || s.memEff <= 0) throw ModelError(origin, where + ": floor_ms >= 0 and mem_eff > 0 needed");
    return s;
}

ScalingParams paramsFrom(const json& j, const std::string& where, const std::string& origin) {
    ScalingParams p;
    if (!j.is_object() || !j.contains("structured") || !j["structured"].is_boolean())
        throw ModelError(origin, where + ": 'structured' must be true or false");
    p.structured = j["structured"].get<bool>();
    p.floorQuantile = number(j, "floor_quantile", where, origin);
    p.softness = number(j, "softness", where, origin);
    p.alpha = number(j, "alpha", where, origin);
    if (j.contains("max_ratio")) p.maxRatio = number(j, "max_ratio", where, origin);  // optional: 10 before
    p.tauUs = number(j, "tau_us", where, origin);
    p.n0 = number(j, "n0", where, origin);
    p.wattsPerTflop16nm = number(j, "watts_per_tflop_16nm", where, origin);
    p.computeEff = number(j, "compute_eff", where, origin);
    p.memoryEff = number(j, "memory_eff", where, origin);
    // Optional (tables written before the architecture correction have none: factor 1).
    if (j.contains("architecture_log_offsets")) {
        const json& a = j["architecture_log_offsets"];
        if (!a.is_object()) throw ModelError(origin, where + ": 'architecture_log_offsets' must be an object");
        for (auto it = a.begin(); it != a.end(); ++it) {
            if (!it.value().is_number())
                throw ModelError(origin, where + ".architecture_log_offsets." + it.key() + " must be a number");
            p.architectureLogOffset[it.key()] = it.value().get<double>();
        }
    }
    // Optional (tables written before the shape classes have none: no shape term).
    if (j.contains("shape_log_offsets")) {
        const json& a = j["shape_log_offsets"];
        if (!a.is_object()) throw ModelError(origin, where + ": 'shape_log_offsets' must be an object");
        for (auto arch = a.begin(); arch != a.end(); ++arch) {
            const std::string at = where + ".shape_log_offsets." + arch.key();
            if (!arch.value().is_object()) throw ModelError(origin, at + " must be an object");
            for (auto it = arch.value().begin(); it != arch.value().end(); ++it) {
                if (!it.value().is_number()) throw ModelError(origin, at + "." + it.key() + " must be a number");
                p.shapeLogOffset[arch.key()][it.key()] = it.value().get<double>();
            }
        }
    }
    if (p.softness < 1 || p.computeEff <= 0 || p.memoryEff <= 0 || !(p.maxRatio >= 1))
        throw ModelError(origin, where + ": softness >= 1, compute_eff > 0, memory_eff > 0 and max_ratio >= 1 needed");
    return p;
}

}  // namespace

const KernelScalingTable& KernelScalingTable::builtin() {
    static const KernelScalingTable table = fromJson(kBuiltinKernelScalingJson, "built-in kernel-scaling.json");
    return table;
}

KernelScalingTable KernelScalingTable::fromJson(const std::string& text, const std::string& origin) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e309
        throw ModelError(origin, std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != kKernelScalingFormat)
        throw ModelError(
            origin, std::string("not a kernel scaling table (\"format\": \"") + kKernelScalingFormat + "\" expected)");
    if (!doc.contains("version") || doc["version"] != kKernelScalingVersion)
        throw ModelError(
            origin, "unsupported version (this build reads version " + std::to_string(kKernelScalingVersion) + ")");
    if (!doc.contains("classes") || !doc["classes"].is_object())
        throw ModelError(origin, "'classes' must be an object");
    KernelScalingTable t;
    t.provenance = doc.value("origin", json::object());
    for (auto it = doc["classes"].begin(); it != doc["classes"].end(); ++it) {
        const std::string where = "classes." + it.key();
        ClassScaling c;
        c.opClass = it.key();
        c.params = paramsFrom(it.value().value("params", json()), where + ".params", origin);
        c.unseen = statsFrom(it.value().value("unseen_gpu", json()), where + ".unseen_gpu", origin);
        const json gpus = it.value().value("gpus", json::object());
        if (!gpus.is_object()) throw ModelError(origin, where + ".gpus must be an object");
        for (auto g = gpus.begin(); g != gpus.end(); ++g)
            c.gpus[g.key()] = statsFrom(g.value(), where + ".gpus." + g.key(), origin);
        t.classes.push_back(std::move(c));
    }
    return t;
}

nlohmann::ordered_json KernelScalingTable::toJson() const {
    nlohmann::ordered_json classesJson = nlohmann::ordered_json::object();
    for (const ClassScaling& c : classes) {
        const bool memory = workKindOf(c.opClass) == WorkKind::Memory;
        json gpus = json::object();
        for (const auto& [id, s] : c.gpus) gpus[id] = statsJson(s, memory);
        nlohmann::ordered_json e;
        e["params"] = scalingParamsJson(c.params);
        e["unseen_gpu"] = statsJson(c.unseen, memory);
        e["gpus"] = gpus;
        classesJson[c.opClass] = e;
    }
    nlohmann::ordered_json out;  // ordered, so the file reads top-down: what it is, where from, values
    out["format"] = kKernelScalingFormat;
    out["version"] = kKernelScalingVersion;
    out["origin"] = nlohmann::ordered_json::parse(provenance.dump());
    out["classes"] = classesJson;
    return out;
}

const ClassScaling& KernelScalingTable::forClass(const std::string& opClass) const {
    for (const ClassScaling& c : classes)
        if (c.opClass == opClass) return c;
    const WorkKind kind = workKindOf(opClass);
    const char* fallback = kind == WorkKind::Gemm ? "linear" : kind == WorkKind::Conv ? "conv" : "add";
    for (const ClassScaling& c : classes)
        if (c.opClass == fallback) return c;
    throw ModelError(opClass, std::string("the kernel scaling table has no entry for it nor for ") + fallback);
}

GpuOpStats KernelScalingTable::statsFor(const ClassScaling& c, const GpuSpec& gpu) const {
    auto it = c.gpus.find(gpu.id);
    return it == c.gpus.end() ? c.unseen : it->second;
}

double KernelScalingTable::predictCross(const KernelWork& originWork, double originLatencyMs, const GpuSpec& origin,
                                        const GpuSpec& target) const {
    const ClassScaling& c = forClass(originWork.opClass);
    return ts::predictors::predictCross(originWork, originLatencyMs, origin, statsFor(c, origin), target,
                                        statsFor(c, target), c.params);
}

double KernelScalingTable::predictModelOnly(const KernelWork& work, const GpuSpec& target) const {
    const ClassScaling& c = forClass(work.opClass);
    return ts::predictors::predictModelOnly(work, target, statsFor(c, target), c.params);
}

KernelScalingTable fitScalingTable(const MeasurementSet& set, json provenance) {
    KernelScalingTable t;
    t.provenance = std::move(provenance);
    for (const OperatorMeasurements& op : set.ops) {
        const PreparedOperator prep(op, set);
        std::vector<size_t> all;
        for (size_t g = 0; g < op.gpus.size(); ++g) all.push_back(g);
        ClassScaling c;
        c.opClass = op.opClass;
        c.params = prep.fit(all);
        c.unseen = prep.estimateFrom(all, c.params.floorQuantile);
        for (size_t g = 0; g < op.gpus.size(); ++g) c.gpus[op.gpus[g].id] = prep.ownStats(g);
        t.classes.push_back(std::move(c));
    }
    return t;
}

}  // namespace ts::predictors
