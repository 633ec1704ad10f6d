#include "gpu_document.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "gpu_fields.h"
#include "trainscope/core/errors.h"

namespace ts::gpudb {
namespace {

using nlohmann::json;

// Where in the document a problem is, for messages like
// "gpus.json: GPU 'a100-sxm4-40gb', field 'sms': expected a number".
struct Where {
    std::string origin;
    std::string entry;

    [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
        std::string where = entry;
        if (!field.empty()) where += (where.empty() ? "field '" : ", field '") + field + "'";
        throw ModelError(origin, where.empty() ? problem : where + ": " + problem);
    }
};

const std::set<std::string> kFigureKeys = {"value", "source", "estimate", "note", "unknown", "unsupported"};
const std::set<std::string> kTensorKeys = {"tf32", "fp16", "bf16", "fp8", "int8_tops"};
const std::set<std::string> kGpuKeys = {
    "id", "name", "device_names", "architecture", "chip", "compute_capability", "segment", "form_factor",
    "release_year", "memory_type", "tensor_tflops", "tensor_tflops_fp16_accumulate", "interconnect", "prices",
    "purchase", "prices_note", "calibration", "notes", "_origin", "_history"};
const std::set<std::string> kSegments = {"datacenter", "workstation", "geforce"};

bool isFigureObject(const json& j) {
    return j.is_object() && (j.contains("value") || j.contains("unknown") || j.contains("unsupported"));
}

std::string str(const json& obj, const char* key, const Where& w, bool required = false) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        if (required) w.fail(key, "is required");
        return {};
    }
    if (!it->is_string()) w.fail(key, "expected a string");
    return it->get<std::string>();
}

double number(const json& j, const std::string& field, const Where& w) {
    if (!j.is_number()) w.fail(field, "expected a number, got " + std::string(j.type_name()));
    double v = j.get<double>();
    if (!std::isfinite(v) || v < 0) w.fail(field, "must be a finite number >= 0");
    return v;
}

void checkKeys(const json& obj, const std::set<std::string>& allowed, const std::string& field, const Where& w) {
    for (auto it = obj.begin(); it != obj.end(); ++it)
        if (!allowed.count(it.key()))
            w.fail(field.empty() ? it.key() : field + "." + it.key(), "is not a known field");
}

Figure parseFigure(const json& j, const std::string& field, const Where& w, const std::string& defaultSource,
                   bool mayBeUnsupported) {
    Figure f;
    if (j.is_number()) {  // user-file shorthand: a bare number, sourced to that file
        f.value = number(j, field, w);
        f.source = defaultSource;
        return f;
    }
    if (!j.is_object()) w.fail(field, "expected a number or {\"value\": ..., \"source\": ...}");
    checkKeys(j, kFigureKeys, field, w);
    f.source = str(j, "source", w);
    f.note = str(j, "note", w);
    f.unknown = str(j, "unknown", w);
    if (j.contains("estimate")) {
        if (!j["estimate"].is_boolean()) w.fail(field + ".estimate", "expected true or false");
        f.estimate = j["estimate"].get<bool>();
    }
    if (j.contains("unsupported")) {
        if (!j["unsupported"].is_boolean()) w.fail(field + ".unsupported", "expected true or false");
        f.unsupported = j["unsupported"].get<bool>();
        if (f.unsupported && !mayBeUnsupported) w.fail(field, "only a precision can be \"unsupported\"");
    }
    if (j.contains("value") && !j["value"].is_null()) {
        f.value = number(j["value"], field, w);
        if (f.unsupported) w.fail(field, "has a value but is marked unsupported");
    } else if (!f.unsupported && f.unknown.empty()) {
        w.fail(field, "has no value: give one, or say why with \"unknown\" (or \"unsupported\": true)");
    }
    if (f.source.empty() && f.value) w.fail(field, "has a value without a \"source\"");
    return f;
}

void parseCompute(const std::string& cc, int& major, int& minor, const Where& w) {
    size_t dot = cc.find('.');
    try {
        if (dot == std::string::npos) throw std::invalid_argument(cc);
        size_t used = 0;
        major = std::stoi(cc.substr(0, dot), &used);
        minor = std::stoi(cc.substr(dot + 1));
        if (used != dot || major < 1 || major > 20 || minor < 0 || minor > 9) throw std::invalid_argument(cc);
    } catch (const std::exception&) {
        w.fail("compute_capability", "expected \"MAJOR.MINOR\" such as \"8.0\", got \"" + cc + "\"");
    }
}

ArchLimits parseArch(const json& a, const Where& w0) {
    if (!a.is_object()) w0.fail("", "each architecture must be an object");
    ArchLimits l;
    Where w{w0.origin, "architecture " + str(a, "compute_capability", w0, true)};
    parseCompute(str(a, "compute_capability", w, true), l.ccMajor, l.ccMinor, w);
    l.name = str(a, "name", w);
    l.source = str(a, "source", w, true);
    auto integer = [&](const char* key, int& out, bool required = true) {
        if (!a.contains(key)) {
            if (required) w.fail(key, "is required");
            return;
        }
        double v = number(a[key], key, w);
        if (v != std::floor(v) || v > 1e9) w.fail(key, "expected a whole number");
        out = int(v);
    };
    integer("max_threads_per_sm", l.maxThreadsPerSm);
    integer("max_blocks_per_sm", l.maxBlocksPerSm);
    integer("registers_per_sm", l.registersPerSm);
    integer("max_registers_per_block", l.maxRegistersPerBlock);
    integer("max_registers_per_thread", l.maxRegistersPerThread);
    integer("max_threads_per_block", l.maxThreadsPerBlock);
    integer("warp_size", l.warpSize);
    auto kb = [&](const char* key, int& out, bool required = true) {
        if (!a.contains(key)) {
            if (required) w.fail(key, "is required");
            return;
        }
        const double kib = number(a[key], key, w);
        if (kib > 1e6) w.fail(key, "expected at most 1,000,000 KB");
        out = int(std::lround(kib * 1024));
    };
    kb("shared_memory_per_sm_kb", l.sharedMemoryPerSmBytes);
    kb("shared_memory_per_block_kb", l.sharedMemoryPerBlockBytes);
    kb("shared_memory_per_block_optin_kb", l.sharedMemoryPerBlockOptinBytes);
    kb("reserved_shared_memory_per_block_kb", l.reservedSharedMemoryPerBlockBytes);
    if (a.contains("tensor_cores")) {
        if (!a["tensor_cores"].is_boolean()) w.fail("tensor_cores", "expected true or false");
        l.tensorCores = a["tensor_cores"].get<bool>();
    }
    if (l.maxThreadsPerSm == 0 || l.maxBlocksPerSm == 0 || l.registersPerSm == 0 || l.warpSize == 0 ||
        l.maxThreadsPerBlock == 0 || l.sharedMemoryPerSmBytes == 0)
        w.fail("", "per-SM limits must be positive");
    if (l.sharedMemoryPerBlockOptinBytes < l.sharedMemoryPerBlockBytes)
        w.fail("shared_memory_per_block_optin_kb", "is smaller than the default per-block limit");
    if (l.sharedMemoryPerBlockOptinBytes > l.sharedMemoryPerSmBytes)
        w.fail("shared_memory_per_block_optin_kb", "exceeds the shared memory of an SM");
    return l;
}

std::vector<Price> parsePrices(const json& j, const Where& w) {
    if (!j.is_array()) w.fail("prices", "expected a list");
    std::vector<Price> out;
    for (const json& p : j) {
        if (!p.is_object()) w.fail("prices", "each price must be an object");
        checkKeys(p, {"provider", "instance", "region", "usd_per_gpu_hour", "source", "date", "note"}, "prices", w);
        Price price;
        price.provider = str(p, "provider", w, true);
        price.instance = str(p, "instance", w);
        price.region = str(p, "region", w);
        price.source = str(p, "source", w, true);
        price.date = str(p, "date", w, true);
        price.note = str(p, "note", w);
        if (!p.contains("usd_per_gpu_hour")) w.fail("prices", "a price needs \"usd_per_gpu_hour\"");
        price.usdPerGpuHour = number(p["usd_per_gpu_hour"], "prices.usd_per_gpu_hour", w);
        if (price.usdPerGpuHour <= 0 || price.usdPerGpuHour > 1000)
            w.fail("prices.usd_per_gpu_hour", "must be between 0 and 1000 USD per GPU-hour");
        out.push_back(std::move(price));
    }
    return out;
}

std::vector<PurchasePrice> parsePurchases(const json& j, const Where& w) {
    if (!j.is_array()) w.fail("purchase", "expected a list");
    std::vector<PurchasePrice> out;
    for (const json& p : j) {
        if (!p.is_object()) w.fail("purchase", "each purchase price must be an object");
        checkKeys(p, {"kind", "usd", "date", "source", "note", "watts"}, "purchase", w);
        PurchasePrice price;
        price.kind = str(p, "kind", w, true);
        if (price.kind != "msrp" && price.kind != "street") w.fail("purchase.kind", "expected \"msrp\" or \"street\"");
        price.date = str(p, "date", w, true);
        price.source = str(p, "source", w, true);
        price.note = str(p, "note", w);
        if (!p.contains("usd")) w.fail("purchase", "a purchase price needs \"usd\"");
        price.usd = number(p["usd"], "purchase.usd", w);
        if (price.usd <= 0 || price.usd > 1e7) w.fail("purchase.usd", "must be between 0 and 10,000,000 USD");
        if (p.contains("watts")) {
            price.watts = number(p["watts"], "purchase.watts", w);
            if (!(price.watts > 0) || price.watts > 1e5) w.fail("purchase.watts", "must be between 0 and 100,000 W");
        }
        out.push_back(std::move(price));
    }
    return out;
}

NvLinkTopologyInfo parseTopology(const json& j, const Where& w) {
    const std::string field = "interconnect.nvlink_topology";
    if (!j.is_object()) w.fail(field, "expected {\"kind\": \"switch\", \"max_gpus\": 8, \"source\": ...}");
    checkKeys(j, {"kind", "max_gpus", "links", "source", "note"}, field, w);
    NvLinkTopologyInfo t;
    const std::string kind = str(j, "kind", w, true);
    for (NvLinkTopology k : {NvLinkTopology::None, NvLinkTopology::Bridge, NvLinkTopology::Mesh, NvLinkTopology::Switch})
        if (kind == nvlinkTopologyName(k)) t.kind = k;
    if (t.kind == NvLinkTopology::Unknown) w.fail(field + ".kind", "expected none, bridge, mesh or switch");
    t.source = str(j, "source", w, true);
    t.note = str(j, "note", w);
    if (!j.contains("max_gpus") || !j["max_gpus"].is_number_integer())
        w.fail(field + ".max_gpus", "expected a whole number of GPUs");
    const int64_t n = j["max_gpus"].get<int64_t>();
    const int64_t least = t.kind == NvLinkTopology::None ? 1 : 2;
    if (n < least || n > 576) w.fail(field + ".max_gpus", "must be between " + std::to_string(least) + " and 576");
    if (t.kind == NvLinkTopology::Bridge && n != 2) w.fail(field + ".max_gpus", "a bridge joins 2 GPUs");
    if (t.kind == NvLinkTopology::None && n != 1) w.fail(field + ".max_gpus", "is 1 without NVLink");
    t.maxGpus = int(n);
    if (j.contains("links")) {
        // The board's link matrix: checked whole, so that a ring bandwidth read from it is never a
        // guess over a malformed row.
        const std::string lf = field + ".links";
        if (t.kind != NvLinkTopology::Mesh) w.fail(lf, "only a mesh board has a link matrix");
        const json& m = j["links"];
        if (!m.is_array() || m.size() != size_t(n))
            w.fail(lf, "expected " + std::to_string(n) + " rows, one per GPU of the board (max_gpus)");
        for (size_t i = 0; i < m.size(); ++i) {
            const json& row = m[i];
            if (!row.is_array() || row.size() != size_t(n))
                w.fail(lf, "row " + std::to_string(i) + " must have " + std::to_string(n) + " entries");
            std::vector<int> r;
            int total = 0;
            for (size_t k = 0; k < row.size(); ++k) {
                if (!row[k].is_number_integer() || row[k].get<int64_t>() < 0 || row[k].get<int64_t>() > 18)
                    w.fail(lf, "row " + std::to_string(i) + ": a link count is a whole number from 0 to 18");
                r.push_back(int(row[k].get<int64_t>()));
                total += r.back();
            }
            if (r[i] != 0) w.fail(lf, "row " + std::to_string(i) + ": a GPU has no link to itself");
            if (total == 0) w.fail(lf, "row " + std::to_string(i) + ": a GPU of a mesh has at least one link");
            t.links.push_back(std::move(r));
        }
        for (size_t i = 0; i < t.links.size(); ++i)
            for (size_t k = 0; k < i; ++k)
                if (t.links[i][k] != t.links[k][i])
                    w.fail(lf, "not symmetric: GPU " + std::to_string(i) + " to " + std::to_string(k) + " has " +
                                   std::to_string(t.links[i][k]) + " links, the way back " +
                                   std::to_string(t.links[k][i]));
    }
    return t;
}

GpuCalibration parseCalibration(const json& j, const Where& w) {
    if (!j.is_object() || !j.contains("measurements") || !j["measurements"].is_object())
        w.fail("calibration", "expected {\"measurements\": {...}, \"date\": ...}");
    GpuCalibration c;
    c.date = str(j, "date", w);
    c.driver = str(j, "driver", w);
    c.software = str(j, "software", w);
    c.origin = str(j, "origin", w);
    for (auto it = j["measurements"].begin(); it != j["measurements"].end(); ++it) {
        const json& m = it.value();
        if (!m.is_object()) w.fail("calibration." + it.key(), "expected an object");
        if (!m.contains("value") || m["value"].is_null()) continue;  // recorded as not measured
        c.measured[it.key()] = number(m["value"], "calibration." + it.key(), w);
        c.units[it.key()] = str(m, "unit", w);
    }
    return c;
}

GpuSpec parseGpu(const json& g, const std::string& origin, size_t index) {
    Where w{origin, "gpus[" + std::to_string(index) + "]"};
    if (!g.is_object()) w.fail("", "each GPU must be an object");
    GpuSpec s;
    s.id = str(g, "id", w, true);
    w.entry = "GPU '" + s.id + "'";
    checkKeys(g, [] {
        std::set<std::string> keys = kGpuKeys;
        for (const FigureField& f : kFigureFields) keys.insert(f.key);
        return keys;
    }(), "", w);
    // _origin and _history are written by mergeDocument, but a file may carry them too.
    const std::string defaultSource = g.contains("_origin") ? str(g, "_origin", w) : std::string("built-in");
    s.origin = "built-in";
    if (g.contains("_history")) {
        if (!g["_history"].is_array()) w.fail("_history", "expected a list of file names");
        s.origin.clear();
        for (const json& h : g["_history"]) {
            if (!h.is_string()) w.fail("_history", "expected a list of file names");
            s.origin += (s.origin.empty() ? "" : ", then ") + h.get<std::string>();
        }
    }
    s.name = str(g, "name", w, true);
    s.architecture = str(g, "architecture", w);
    s.chip = str(g, "chip", w);
    s.segment = str(g, "segment", w);
    if (!s.segment.empty() && !kSegments.count(s.segment))
        w.fail("segment", "expected datacenter, workstation or geforce");
    s.formFactor = str(g, "form_factor", w);
    parseCompute(str(g, "compute_capability", w, true), s.ccMajor, s.ccMinor, w);
    if (g.contains("release_year")) {
        // Checked before the conversion: a double past int's range is undefined behaviour to convert.
        const double year = number(g["release_year"], "release_year", w);
        if (year != std::floor(year) || year < 1990 || year > 2100)
            w.fail("release_year", "expected a year between 1990 and 2100");
        s.releaseYear = int(year);
    }
    if (g.contains("device_names")) {
        if (!g["device_names"].is_array()) w.fail("device_names", "expected a list of strings");
        for (const json& n : g["device_names"]) {
            if (!n.is_string() || n.get<std::string>().empty()) w.fail("device_names", "expected non-empty strings");
            s.deviceNames.push_back(n.get<std::string>());
        }
    }
    for (const FigureField& f : kFigureFields)
        if (g.contains(f.key)) s.*f.member = parseFigure(g[f.key], f.key, w, defaultSource, false);
    if (g.contains("memory_type")) {
        const json& m = g["memory_type"];
        if (m.is_string()) s.memoryType = m.get<std::string>();
        else if (m.is_object() && m.contains("value") && m["value"].is_string()) s.memoryType = m["value"];
        else if (!(m.is_object() && m.contains("unknown"))) w.fail("memory_type", "expected {\"value\": \"HBM3\", ...}");
    }
    for (const char* table : {"tensor_tflops", "tensor_tflops_fp16_accumulate"}) {
        if (!g.contains(table)) continue;
        if (!g[table].is_object()) w.fail(table, "expected an object keyed by precision");
        auto& out = std::string(table) == "tensor_tflops" ? s.tensorTflops : s.tensorTflopsFp16Accumulate;
        for (auto it = g[table].begin(); it != g[table].end(); ++it) {
            std::string field = std::string(table) + "." + it.key();
            if (!kTensorKeys.count(it.key())) w.fail(field, "is not a known precision (tf32, fp16, bf16, fp8, int8_tops)");
            out[it.key()] = parseFigure(it.value(), field, w, defaultSource, true);
        }
    }
    if (g.contains("interconnect")) {
        const json& ic = g["interconnect"];
        if (!ic.is_object()) w.fail("interconnect", "expected an object");
        std::set<std::string> known = {"nvlink_topology"};
        for (const InterconnectField& f : kInterconnectFields) known.insert(f.key);
        checkKeys(ic, known, "interconnect", w);
        for (const InterconnectField& f : kInterconnectFields)
            if (ic.contains(f.key))
                s.interconnect.*f.member =
                    parseFigure(ic[f.key], std::string("interconnect.") + f.key, w, defaultSource, false);
        if (ic.contains("nvlink_topology")) s.interconnect.nvlinkTopology = parseTopology(ic["nvlink_topology"], w);
        const Figure& bw = s.interconnect.nvlinkBandwidthGBs;
        const NvLinkTopology kind = s.interconnect.nvlinkTopology.kind;
        if (bw.known() && kind != NvLinkTopology::Unknown && (*bw > 0) != (kind != NvLinkTopology::None))
            w.fail("interconnect.nvlink_topology", *bw > 0 ? "is \"none\" but the GPU has an NVLink bandwidth"
                                                           : "names an NVLink topology but the NVLink bandwidth is 0");
    }
    if (g.contains("prices")) s.prices = parsePrices(g["prices"], w);
    if (g.contains("purchase")) s.purchases = parsePurchases(g["purchase"], w);
    s.pricesNote = str(g, "prices_note", w);
    if (g.contains("calibration")) s.calibration = parseCalibration(g["calibration"], w);
    // A GPU must carry at least what every prediction needs.
    for (auto [key, fig] : {std::pair{"sms", &s.sms}, {"memory_gb", &s.memoryGB},
                            {"memory_bandwidth_gbs", &s.memoryBandwidthGBs}, {"fp32_tflops", &s.fp32Tflops}}) {
        if (!g.contains(key)) w.fail(key, "is required for every GPU");
        if (fig->known() && **fig <= 0) w.fail(key, "must be positive");
    }
    return s;
}

}  // namespace

json parseDocumentText(const std::string& text, const std::string& origin) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
        throw ModelError(origin, std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_object()) throw ModelError(origin, "a GPU database file must be a JSON object");
    if (!doc.contains("format") || doc["format"] != json(kGpuDatabaseFormat))
        throw ModelError(origin, std::string("not a GPU database file: expected \"format\": \"") +
                                     kGpuDatabaseFormat + "\"");
    if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"] != kGpuDatabaseVersion)
        throw ModelError(origin, "unsupported GPU database version (this TrainScope reads version " +
                                     std::to_string(kGpuDatabaseVersion) + ")");
    for (const char* key : {"gpus", "architectures"})
        if (doc.contains(key) && !doc[key].is_array()) throw ModelError(origin, std::string("\"") + key + "\" must be a list");
    if (doc.contains("sources") && !doc["sources"].is_object())
        throw ModelError(origin, "\"sources\" must be an object keyed by source name");
    return doc;
}

ParsedDatabase parseDocument(const json& doc, const std::string& origin) {
    ParsedDatabase db;
    Where w{origin, ""};
    if (doc.contains("sources")) {
        for (auto it = doc["sources"].begin(); it != doc["sources"].end(); ++it) {
            Where ws{origin, "source '" + it.key() + "'"};
            if (!it->is_object()) ws.fail("", "expected {\"title\": ..., \"url\": ...}");
            db.sources[it.key()] = {str(*it, "title", ws, true), str(*it, "url", ws), str(*it, "accessed", ws)};
        }
    }
    if (doc.contains("architectures")) {
        for (const json& a : doc["architectures"]) {
            ArchLimits l = parseArch(a, w);
            std::string key = std::to_string(l.ccMajor) + "." + std::to_string(l.ccMinor);
            if (db.architectures.count(key)) w.fail("", "architecture " + key + " is listed twice");
            db.architectures[key] = l;
        }
    }
    if (doc.contains("prices_snapshot")) {
        const json& p = doc["prices_snapshot"];
        Where ws{origin, "prices_snapshot"};
        if (!p.is_object()) ws.fail("", "expected {\"date\": ..., \"note\": ...}");
        checkKeys(p, {"date", "note"}, "", ws);
        db.priceSnapshot = {str(p, "date", ws, true), str(p, "note", ws)};
    }
    if (doc.contains("amortisation")) {
        const json& a = doc["amortisation"];
        Where wa{origin, "amortisation"};
        if (!a.is_object()) wa.fail("", "expected {\"years\": ..., \"utilisation\": ..., \"usd_per_kwh\": ...}");
        checkKeys(a, {"years", "utilisation", "usd_per_kwh", "source", "note"}, "", wa);
        Amortisation& m = db.amortisation;
        if (a.contains("years")) m.years = number(a["years"], "years", wa);
        if (a.contains("utilisation")) m.utilisation = number(a["utilisation"], "utilisation", wa);
        if (a.contains("usd_per_kwh")) m.usdPerKWh = number(a["usd_per_kwh"], "usd_per_kwh", wa);
        m.source = str(a, "source", wa);
        m.note = str(a, "note", wa);
        if (m.years <= 0 || m.years > 50) wa.fail("years", "must be between 0 and 50");
        if (m.utilisation <= 0 || m.utilisation > 1) wa.fail("utilisation", "must be in (0, 1]");
        if (m.usdPerKWh > 100) wa.fail("usd_per_kwh", "must be at most 100 USD per kWh");
        if (!m.source.empty() && !db.sources.count(m.source))
            wa.fail("source", "names source '" + m.source + "', which \"sources\" lacks");
    }
    std::set<std::string> ids, names;
    size_t index = 0;
    for (const json& g : doc.value("gpus", json::array())) {
        GpuSpec s = parseGpu(g, origin, index++);
        Where wg{origin, "GPU '" + s.id + "'"};
        std::string lowerId = s.id;
        for (char& c : lowerId) c = char(std::tolower(static_cast<unsigned char>(c)));
        if (!ids.insert(lowerId).second) wg.fail("id", "is used by two GPUs");
        for (const std::string& n : s.deviceNames)
            if (!names.insert(n).second) wg.fail("device_names", "\"" + n + "\" is claimed by two GPUs");
        auto it = db.architectures.find(s.computeCapability());
        if (it == db.architectures.end())
            wg.fail("compute_capability", "no per-SM limits are known for compute capability " +
                                              s.computeCapability() + " (add it to \"architectures\")");
        s.limits = it->second;
        db.gpus.push_back(std::move(s));
    }
    // Every figure's source must be listed, so provenance can always be shown.
    auto checkSource = [&](const GpuSpec& s, const std::string& field, const std::string& src) {
        if (!src.empty() && !db.sources.count(src))
            Where{origin, "GPU '" + s.id + "'"}.fail(field, "names source '" + src + "', which \"sources\" lacks");
    };
    for (const GpuSpec& s : db.gpus) {
        for (const FigureField& f : kFigureFields) checkSource(s, f.key, (s.*f.member).source);
        for (const InterconnectField& f : kInterconnectFields)
            checkSource(s, std::string("interconnect.") + f.key, (s.interconnect.*f.member).source);
        for (const auto& [k, f] : s.tensorTflops) checkSource(s, "tensor_tflops." + k, f.source);
        for (const auto& [k, f] : s.tensorTflopsFp16Accumulate) checkSource(s, "tensor_tflops_fp16_accumulate." + k, f.source);
        for (const Price& p : s.prices) checkSource(s, "prices", p.source);
        for (const PurchasePrice& p : s.purchases) checkSource(s, "purchase", p.source);
        checkSource(s, "interconnect.nvlink_topology", s.interconnect.nvlinkTopology.source);
    }
    return db;
}

void mergeDocument(json& base, const json& patch, const std::string& origin) {
    json& sources = base["sources"];
    if (patch.contains("sources"))
        for (auto it = patch["sources"].begin(); it != patch["sources"].end(); ++it) sources[it.key()] = it.value();
    // Bare numbers in a user file are sourced to the file itself.
    sources[origin] = {{"title", "user file " + origin}, {"url", "file://" + origin}};

    if (patch.contains("prices_snapshot")) base["prices_snapshot"] = patch["prices_snapshot"];
    if (patch.contains("amortisation")) {
        if (!patch["amortisation"].is_object()) throw ModelError(origin, "\"amortisation\" must be an object");
        for (auto it = patch["amortisation"].begin(); it != patch["amortisation"].end(); ++it)
            base["amortisation"][it.key()] = it.value();
    }

    json& archs = base["architectures"];
    for (const json& a : patch.value("architectures", json::array())) {
        if (!a.is_object() || !a.contains("compute_capability"))
            throw ModelError(origin, "each architecture needs a \"compute_capability\"");
        auto same = std::find_if(archs.begin(), archs.end(), [&](const json& b) {
            return b["compute_capability"] == a["compute_capability"];
        });
        if (same == archs.end()) archs.push_back(a);
        else for (auto it = a.begin(); it != a.end(); ++it) (*same)[it.key()] = it.value();
    }

    json& gpus = base["gpus"];
    for (const json& g : patch.value("gpus", json::array())) {
        if (!g.is_object() || !g.contains("id") || !g["id"].is_string())
            throw ModelError(origin, "each GPU needs an \"id\" (an existing id overrides, a new one adds)");
        std::string id = g["id"];
        auto lower = [](std::string s) {
            for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
            return s;
        };
        auto same = std::find_if(gpus.begin(), gpus.end(), [&](const json& b) {
            return lower(b.value("id", std::string())) == lower(id);
        });
        if (same == gpus.end()) {
            json added = g;
            added["_origin"] = origin;
            added["_history"] = json::array({origin});
            gpus.push_back(added);
            continue;
        }
        std::function<void(json&, const json&)> mergeInto = [&](json& dst, const json& src) {
            for (auto it = src.begin(); it != src.end(); ++it) {
                bool nested = it->is_object() && !isFigureObject(*it) && dst.contains(it.key()) &&
                              dst[it.key()].is_object() && !isFigureObject(dst[it.key()]);
                if (nested) mergeInto(dst[it.key()], *it);
                else dst[it.key()] = *it;  // figures, prices and names are replaced whole
            }
        };
        json history = same->value("_history", json::array({"built-in"}));
        history.push_back(origin);
        mergeInto(*same, g);
        (*same)["_origin"] = origin;
        (*same)["_history"] = history;
    }
}

}  // namespace ts::gpudb
