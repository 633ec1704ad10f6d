#include "trainscope/core/gpu_database.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpu_document.h"
#include "trainscope/core/gpu_user_file.h"
#include "trainscope/core/errors.h"

namespace ts {

extern const char* const kBuiltinGpuDatabaseJson;  // generated from resources/gpus.json

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Lowercase without spaces, dashes and underscores: "NVIDIA A100-PCIE-40GB" -> "nvidiaa100pcie40gb".
std::string squash(const std::string& s) {
    std::string out;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c))) out += char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string withoutVendorPrefix(std::string s) {
    for (const char* prefix : {"nvidia", "tesla", "geforce"})
        if (s.rfind(prefix, 0) == 0) s = s.substr(std::string(prefix).size());
    return s;
}

// FP32 lanes per SM by compute capability (CUDA C Programming Guide, arithmetic instructions table).
int fp32LanesPerSm(int major, int minor) {
    if (major == 6) return minor == 0 ? 64 : 128;
    if (major == 7) return 64;
    if (major == 8) return minor == 0 ? 64 : 128;
    return 128;  // 9.x, 10.x, 12.x
}

std::string readFile(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw ModelError(path, "GPU database file not found");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ModelError(path, "cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

const char* precisionName(ComputePrecision p) {
    switch (p) {
        case ComputePrecision::Fp32: return "fp32";
        case ComputePrecision::Tf32: return "tf32";
        case ComputePrecision::Fp16: return "fp16";
        case ComputePrecision::Bf16: return "bf16";
        case ComputePrecision::Fp8: return "fp8";
    }
    return "?";
}

std::optional<ComputePrecision> parsePrecision(const std::string& name) {
    std::string n = lower(name);
    if (n.rfind("amp-", 0) == 0) n = n.substr(4);
    for (ComputePrecision p : kAllComputePrecisions)
        if (n == precisionName(p)) return p;
    return std::nullopt;
}

std::string GpuSpec::computeCapability() const {
    return std::to_string(ccMajor) + "." + std::to_string(ccMinor);
}

Figure GpuSpec::peakTflops(ComputePrecision p) const {
    if (p == ComputePrecision::Fp32) return fp32Tflops;
    auto it = tensorTflops.find(precisionName(p));
    if (it != tensorTflops.end()) return it->second;
    Figure unknown;
    unknown.unknown = std::string("no ") + precisionName(p) + " rate in the database for " + name;
    return unknown;
}

bool GpuSpec::supports(ComputePrecision p) const {
    Figure f = peakTflops(p);
    return f.known() && *f > 0;
}

std::optional<double> GpuSpec::ridgePoint(ComputePrecision p) const {
    Figure peak = peakTflops(p);
    if (!peak.known() || !memoryBandwidthGBs.known() || *memoryBandwidthGBs <= 0) return std::nullopt;
    return *peak * 1e12 / (*memoryBandwidthGBs * 1e9);
}

const Price* GpuSpec::cheapestPrice() const {
    const Price* best = nullptr;
    for (const Price& p : prices)
        if (!best || p.usdPerGpuHour < best->usdPerGpuHour) best = &p;
    // A card nobody rents out is costed as bought: an on-demand listing wins where there is one.
    if (!best && amortisedPurchase) best = &*amortisedPurchase;
    return best;
}

const char* nvlinkTopologyName(NvLinkTopology t) {
    switch (t) {
        case NvLinkTopology::Unknown: return "unknown";
        case NvLinkTopology::None: return "none";
        case NvLinkTopology::Bridge: return "bridge";
        case NvLinkTopology::Mesh: return "mesh";
        case NvLinkTopology::Switch: return "switch";
    }
    return "unknown";
}

// The merged JSON document is kept so later user files can override field by field.
struct GpuDatabaseDocument {
    nlohmann::json doc;
};

GpuDatabase GpuDatabase::fromJson(const std::string& text, const std::string& origin) {
    GpuDatabase db;
    db.document_ = std::make_shared<const GpuDatabaseDocument>(GpuDatabaseDocument{gpudb::parseDocumentText(text, origin)});
    db.finalize(origin);
    return db;
}

const GpuDatabase& GpuDatabase::builtin() {
    static const GpuDatabase db = fromJson(kBuiltinGpuDatabaseJson, "built-in GPU database (resources/gpus.json)");
    return db;
}

void GpuDatabase::applyOverrides(const std::string& text, const std::string& origin) {
    nlohmann::json patch = gpudb::parseDocumentText(text, origin);
    auto merged = std::make_shared<GpuDatabaseDocument>(*document_);
    gpudb::mergeDocument(merged->doc, patch, origin);
    GpuDatabase candidate = *this;  // commit only if the merged database is valid
    candidate.document_ = merged;
    candidate.finalize(origin);
    candidate.appliedFiles_.push_back(origin);
    *this = std::move(candidate);
}

void GpuDatabase::applyOverrideFile(const std::string& path) { applyOverrides(readFile(path), path); }

GpuDatabase GpuDatabase::load(const std::vector<std::string>& extraFiles) {
    GpuDatabase db = builtin();
    if (const std::string userFile = userGpuFilePath(); !userFile.empty()) {
        std::error_code ec;
        if (std::filesystem::exists(userFile, ec)) db.applyOverrideFile(userFile);
    }
    if (const char* env = std::getenv("TRAINSCOPE_GPU_DB"); env && *env) db.applyOverrideFile(env);
    for (const std::string& f : extraFiles) db.applyOverrideFile(f);
    return db;
}

void GpuDatabase::finalize(const std::string& origin) {
    gpudb::ParsedDatabase parsed = gpudb::parseDocument(document_->doc, origin);
    gpus_ = std::move(parsed.gpus);
    sources_ = std::move(parsed.sources);
    architectures_ = std::move(parsed.architectures);
    priceSnapshot_ = parsed.priceSnapshot;
    amortisation_ = parsed.amortisation;
    for (GpuSpec& g : gpus_) {
        g.amortisedPurchase.reset();
        const PurchasePrice* buy = purchaseForAmortisation(g.purchases);
        if (!buy) continue;
        if (buy->watts > 0) {
            g.amortisedPurchase = amortisedPrice(*buy, buy->watts, amortisation_);
            continue;
        }
        if (!g.tdpW.known())
            throw ModelError(origin, "GPU '" + g.id + "': a purchase price needs \"tdp_w\" (or its own \"watts\") to be amortised");
        g.amortisedPurchase = amortisedPrice(*buy, *g.tdpW, amortisation_);
    }
}

void GpuDatabase::takePricesFrom(const GpuDatabase& other) {
    for (GpuSpec& g : gpus_)
        for (const GpuSpec& o : other.gpus_)
            if (o.id == g.id) {
                g.prices = o.prices;
                g.purchases = o.purchases;
                g.amortisedPurchase = o.amortisedPurchase;
                g.pricesNote = o.pricesNote;
            }
    for (const auto& [key, source] : other.sources_) sources_[key] = source;
    priceSnapshot_ = other.priceSnapshot_;
    amortisation_ = other.amortisation_;
}

const GpuSpec* GpuDatabase::find(const std::string& idOrName) const {
    std::string key = lower(idOrName);
    for (const GpuSpec& g : gpus_)
        if (lower(g.id) == key || lower(g.name) == key) return &g;
    return matchDevice(idOrName);
}

const GpuSpec& GpuDatabase::get(const std::string& idOrName) const {
    if (const GpuSpec* g = find(idOrName)) return *g;
    std::string known;
    for (const GpuSpec& g : gpus_) known += (known.empty() ? "" : ", ") + g.id;
    throw ModelError(idOrName, "unknown GPU; known GPUs: " + known + " (`trainscope-cli gpus` lists them)");
}

const GpuSpec* GpuDatabase::matchDevice(const std::string& cudaName) const {
    for (const GpuSpec& g : gpus_)
        for (const std::string& n : g.deviceNames)
            if (n == cudaName) return &g;
    const std::string wanted = squash(cudaName);
    for (const GpuSpec& g : gpus_)
        for (const std::string& n : g.deviceNames)
            if (squash(n) == wanted) return &g;
    const std::string bare = withoutVendorPrefix(wanted);
    for (const GpuSpec& g : gpus_)
        for (const std::string& n : g.deviceNames)
            if (withoutVendorPrefix(squash(n)) == bare) return &g;
    return nullptr;
}

const ArchLimits* GpuDatabase::limitsFor(int ccMajor, int ccMinor) const {
    auto it = architectures_.find(std::to_string(ccMajor) + "." + std::to_string(ccMinor));
    return it == architectures_.end() ? nullptr : &it->second;
}

GpuSpec GpuDatabase::specFromDevice(const DeviceProperties& p, const CalibrationResult* calibration) const {
    GpuSpec s;
    std::string slug;
    for (char c : lower(p.name)) slug += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    s.id = "local-" + slug;
    s.name = p.name;
    s.deviceNames = {p.name};
    s.ccMajor = p.ccMajor;
    s.ccMinor = p.ccMinor;
    s.origin = "built from the CUDA runtime's device properties";
    const std::string runtime = "cuda-runtime";
    auto fromRuntime = [&](double v, const std::string& note = "") {
        Figure f;
        if (v > 0) f.value = v;
        else f.unknown = "the CUDA runtime did not report it";
        f.source = runtime;
        f.note = note;
        return f;
    };
    s.sms = fromRuntime(p.sms);
    s.boostClockMHz = fromRuntime(p.maxSmClockMHz, "maximum SM clock reported by the runtime");
    s.memoryGB = fromRuntime(std::round(p.totalMemoryBytes / double(1 << 30) * 10) / 10, "GiB visible to CUDA");
    s.memoryBandwidthGBs = fromRuntime(p.theoreticalBandwidthGBs(), "2 x memory clock x bus width");
    s.memoryBusWidthBits = fromRuntime(p.memoryBusWidthBits);
    s.l2CacheMB = fromRuntime(p.l2CacheBytes / double(1 << 20));
    s.fp32Tflops = fromRuntime(2.0 * p.sms * fp32LanesPerSm(p.ccMajor, p.ccMinor) * p.maxSmClockMHz * 1e6 / 1e12,
                               "2 x SMs x FP32 lanes per SM x maximum clock");
    s.interconnect.pcieGeneration = fromRuntime(p.pciGeneration);
    s.interconnect.pcieLanes = fromRuntime(p.pciLinkWidth);
    if (const ArchLimits* l = limitsFor(p.ccMajor, p.ccMinor)) {
        s.limits = *l;
    } else {  // a GPU newer than the database: its own reported limits are the best we have
        s.limits = {p.ccMajor, p.ccMinor, "reported by the CUDA runtime", p.maxThreadsPerSm, p.maxBlocksPerSm,
                    p.registersPerSm, p.registersPerBlock, 255, p.maxThreadsPerBlock, p.warpSize,
                    p.sharedMemoryPerSmBytes, p.sharedMemoryPerBlockBytes, p.sharedMemoryPerBlockOptinBytes,
                    p.reservedSharedMemoryPerBlockBytes, p.ccMajor >= 7, runtime};
    }
    if (calibration) {
        s.calibration = calibrationFromResult(*calibration, "");
        // No datasheet: the measured tensor peaks are the only rates known, and say so.
        for (const char* precision : {"tf32", "fp16", "bf16", "fp8"}) {
            Figure f;
            f.source = runtime;
            const Measurement* m = calibration->find(std::string("tensor_") + precision);
            if (m && m->value) {
                f.value = *m->value;
                f.estimate = true;
                f.note = "measured by trainscope-cli calibrate; no datasheet figure";
            } else {
                f.unknown = "not in the database and not measured";
            }
            s.tensorTflops[precision] = f;
        }
    }
    return s;
}

}  // namespace ts
