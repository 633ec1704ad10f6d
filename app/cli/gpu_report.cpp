#include "gpu_report.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "trainscope/core/gpu_json.h"

namespace ts::cli {
namespace {

std::string fixed(double v, int decimals) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(decimals) << v;
    return os.str();
}

// "989", "~96" (estimate), "-" (unsupported), "?" (unknown).
std::string cell(const Figure& f, int decimals = 0) {
    if (f.unsupported) return "-";
    if (!f.known()) return "?";
    return (f.estimate ? "~" : "") + fixed(*f, decimals);
}

std::string figureLine(const GpuDatabase& db, const Figure& f, const std::string& unit) {
    std::string text;
    if (f.unsupported) text = "not supported";
    else if (!f.known()) text = "unknown (" + f.unknown + ")";
    else text = fixed(*f, *f < 10 && *f != int(*f) ? 2 : (*f != int(*f) ? 1 : 0)) + (unit.empty() ? "" : " " + unit);
    if (f.estimate) text += "  [estimate]";
    if (!f.note.empty()) text += "  (" + f.note + ")";
    if (!f.source.empty()) {
        auto it = db.sources().find(f.source);
        text += "  <- " + (it == db.sources().end() ? f.source : it->second.title);
    }
    return text;
}

std::string pad(std::string s, size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
}

std::string padLeft(std::string s, size_t width) {
    if (s.size() < width) s.insert(0, width - s.size(), ' ');
    return s;
}

}  // namespace

void printGpuTable(std::ostream& os, const GpuDatabase& db) {
    os << "Dense peaks in TFLOP/s (tensor rates with FP32 accumulation); '-' not supported, '?' unknown,\n"
          "'~' estimate. `trainscope-cli gpus ID` shows every figure with its source.\n\n";
    const std::vector<std::pair<std::string, size_t>> header = {
        {"id", 18}, {"CC", 5}, {"SMs", 5}, {"mem GB", 7}, {"GB/s", 6}, {"L2 MB", 6}, {"FP32", 6}, {"TF32", 6},
        {"FP16", 6}, {"BF16", 6}, {"FP8", 6}, {"W", 5}, {"$/GPU-h", 8}};
    for (size_t i = 0; i < header.size(); ++i)
        os << (i == 0 ? pad(header[i].first, header[i].second) : padLeft(header[i].first, header[i].second)) << " ";
    os << " name\n";
    for (const GpuSpec& g : db.gpus()) {
        auto tensor = [&](const char* p) {
            auto it = g.tensorTflops.find(p);
            return it == g.tensorTflops.end() ? std::string("?") : cell(it->second);
        };
        const Price* price = g.cheapestPrice();
        std::vector<std::string> cells = {g.id, g.computeCapability(), cell(g.sms), cell(g.memoryGB),
                                          cell(g.memoryBandwidthGBs), cell(g.l2CacheMB, g.l2CacheMB.known() && *g.l2CacheMB < 10 ? 1 : 0),
                                          cell(g.fp32Tflops, 1), tensor("tf32"), tensor("fp16"), tensor("bf16"),
                                          tensor("fp8"), cell(g.tdpW),
                                          price ? (price->amortised ? "*" : "") + fixed(price->usdPerGpuHour, 2) : "-"};
        for (size_t i = 0; i < cells.size(); ++i)
            os << (i == 0 ? pad(cells[i], header[i].second) : padLeft(cells[i], header[i].second)) << " ";
        os << " " << g.name << (g.origin != "built-in" ? "  [" + g.origin + "]" : "") << "\n";
    }
    os << "\n" << db.gpus().size() << " GPUs; $/GPU-h: the cheapest on-demand listing of the price snapshot of "
       << (db.priceSnapshot().date.empty() ? "?" : db.priceSnapshot().date)
       << ", * a purchase price amortised where no cloud lists the GPU";
    if (!db.appliedFiles().empty()) {
        os << "; user files applied:";
        for (const std::string& f : db.appliedFiles()) os << " " << f;
    }
    os << "\n";
}

void printGpuDetail(std::ostream& os, const GpuDatabase& db, const GpuSpec& g) {
    os << g.name << "  (" << g.id << ")\n";
    os << "  architecture        " << g.architecture << (g.chip.empty() ? "" : " " + g.chip) << ", compute capability "
       << g.computeCapability() << ", " << g.segment << ", " << g.formFactor << "\n";
    if (!g.deviceNames.empty()) {
        os << "  CUDA reports it as ";
        for (size_t i = 0; i < g.deviceNames.size(); ++i) os << (i ? ", " : "") << '"' << g.deviceNames[i] << '"';
        os << "\n";
    }
    os << "  origin              " << g.origin << "\n";
    auto line = [&](const std::string& label, const Figure& f, const std::string& unit) {
        os << "  " << pad(label, 20) << figureLine(db, f, unit) << "\n";
    };
    line("SMs", g.sms, "");
    line("base clock", g.baseClockMHz, "MHz");
    line("boost clock", g.boostClockMHz, "MHz");
    line("memory", g.memoryGB, "GB " + g.memoryType);
    line("memory bandwidth", g.memoryBandwidthGBs, "GB/s");
    line("memory bus", g.memoryBusWidthBits, "bits");
    line("L2 cache", g.l2CacheMB, "MB");
    line("FP32 (CUDA cores)", g.fp32Tflops, "TFLOP/s");
    line("FP64", g.fp64Tflops, "TFLOP/s");
    for (const auto& [p, f] : g.tensorTflops) line(("tensor " + p).c_str(), f, p == "int8_tops" ? "TOPS" : "TFLOP/s");
    for (const auto& [p, f] : g.tensorTflopsFp16Accumulate)
        line("tensor " + p + " FP16-acc", f, "TFLOP/s");
    line("TDP", g.tdpW, "W");
    line("PCIe generation", g.interconnect.pcieGeneration, "");
    line("PCIe lanes", g.interconnect.pcieLanes, "");
    line("NVLink generation", g.interconnect.nvlinkGeneration, "");
    line("NVLink bandwidth", g.interconnect.nvlinkBandwidthGBs, "GB/s");
    if (const NvLinkTopologyInfo& t = g.interconnect.nvlinkTopology; t.kind != NvLinkTopology::Unknown) {
        auto src = db.sources().find(t.source);
        os << "  NVLink topology     " << nvlinkTopologyName(t.kind) << ", up to " << t.maxGpus << " GPU"
           << (t.maxGpus == 1 ? "" : "s") << (t.note.empty() ? "" : "  (" + t.note + ")") << "  <- "
           << (src == db.sources().end() ? t.source : src->second.title) << "\n";
    }
    os << "  ridge points        ";
    bool any = false;
    for (ComputePrecision p : kAllComputePrecisions)
        if (auto r = g.ridgePoint(p)) {
            os << (any ? ", " : "") << precisionName(p) << " " << fixed(*r, 0);
            any = true;
        }
    os << (any ? " FLOP/byte" : "unknown") << "\n";
    const ArchLimits& l = g.limits;
    os << "  per SM (CC " << g.computeCapability() << ")     " << l.maxThreadsPerSm << " threads, " << l.maxBlocksPerSm
       << " blocks, " << l.registersPerSm << " registers, " << l.sharedMemoryPerSmBytes / 1024
       << " KB shared (per block " << l.sharedMemoryPerBlockBytes / 1024 << " KB, opt-in "
       << l.sharedMemoryPerBlockOptinBytes / 1024 << " KB)\n";
    if (g.prices.empty() && !g.amortisedPurchase)
        os << "  prices              none known (add one in a user file: docs/gpu-database.md)\n";
    if (!g.pricesNote.empty()) os << "  prices note         " << g.pricesNote << "\n";
    for (const Price& p : g.prices) {
        auto src = db.sources().find(p.source);
        os << "  price               " << fixed(p.usdPerGpuHour, 3) << " USD/GPU-hour, " << p.provider
           << (p.instance.empty() ? "" : " " + p.instance) << (p.region.empty() ? "" : " (" + p.region + ")") << ", "
           << p.date << "  <- " << (src == db.sources().end() ? p.source : src->second.url)
           << (p.note.empty() ? "" : "  (" + p.note + ")") << "\n";
    }
    for (const PurchasePrice& p : g.purchases) {
        auto src = db.sources().find(p.source);
        os << "  purchase            " << fixed(p.usd, 0) << " USD (" << (p.kind == "street" ? "street price" : "launch MSRP")
           << "), " << p.date << "  <- " << (src == db.sources().end() ? p.source : src->second.url)
           << (p.note.empty() ? "" : "  (" + p.note + ")") << "\n";
    }
    if (g.amortisedPurchase)
        os << "  amortised purchase  " << fixed(g.amortisedPurchase->usdPerGpuHour, 3) << " USD/GPU-hour ("
           << g.amortisedPurchase->note << ")" << (g.prices.empty() ? ", used for costs" : ", not used: a cloud lists it")
           << "\n";
    if (g.calibration) {
        os << "  calibrated          " << g.calibration->date << ", " << g.calibration->software << "\n";
        for (const auto& [name, value] : g.calibration->measured)
            os << "    " << pad(name, 22) << fixed(value, value < 100 ? 2 : 0) << " "
               << g.calibration->units.at(name) << "\n";
    }
}

void printDevices(std::ostream& os, const GpuDatabase& db, const DeviceQuery& q) {
    if (!q.available) {
        os << "No GPU: " << q.status << "\n";
        return;
    }
    os << q.status << "\n";
    for (const DeviceProperties& d : q.devices) {
        os << "cuda:" << d.index << "  " << d.name << ", compute capability " << d.ccMajor << "." << d.ccMinor << ", "
           << d.sms << " SMs, " << fixed(d.totalMemoryBytes / double(1 << 30), 1) << " GiB, max SM clock "
           << d.maxSmClockMHz << " MHz, memory " << d.memoryClockMHz << " MHz x " << d.memoryBusWidthBits
           << " bits (" << fixed(d.theoreticalBandwidthGBs(), 0) << " GB/s)";
        if (!d.pciBusId.empty()) os << ", PCI " << d.pciBusId;
        os << "\n";
        if (const GpuSpec* g = db.matchDevice(d.name)) {
            os << "        database entry: " << g->id << " (" << g->name << ")";
            if (g->sms.known() && int(*g->sms) != d.sms)
                os << "; note: the database lists " << *g->sms << " SMs, the device reports " << d.sms;
            os << "\n";
        } else {
            os << "        not in the database: predictions use an entry built from these properties "
                  "(run `trainscope-cli calibrate` to measure its peaks)\n";
        }
    }
}

nlohmann::json devicesJson(const GpuDatabase& db, const DeviceQuery& q) {
    nlohmann::json devices = nlohmann::json::array();
    for (const DeviceProperties& d : q.devices) {
        const GpuSpec* g = db.matchDevice(d.name);
        devices.push_back({{"index", d.index}, {"name", d.name}, {"compute_capability", std::to_string(d.ccMajor) + "." + std::to_string(d.ccMinor)},
                           {"sms", d.sms}, {"memory_bytes", d.totalMemoryBytes}, {"max_sm_clock_mhz", d.maxSmClockMHz},
                           {"memory_clock_mhz", d.memoryClockMHz}, {"memory_bus_width_bits", d.memoryBusWidthBits},
                           {"l2_cache_bytes", d.l2CacheBytes}, {"pci_bus_id", d.pciBusId}, {"uuid", d.uuid},
                           {"database_id", g ? nlohmann::json(g->id) : nlohmann::json(nullptr)},
                           {"entry", gpuToJson(g ? *g : db.specFromDevice(d, nullptr))}});
    }
    return {{"cuda_build", q.cudaBuild}, {"available", q.available}, {"status", q.status},
            {"driver_version", q.driverVersion}, {"runtime_version", q.runtimeVersion}, {"devices", devices}};
}

void printCalibration(std::ostream& os, const GpuSpec& gpu, const std::vector<CalibrationComparison>& rows) {
    os << "Calibration of " << gpu.name << " (" << gpu.id << ")\n\n";
    os << pad("measure", 48) << padLeft("measured", 11) << padLeft("datasheet", 11) << padLeft("ratio", 8) << "  unit\n";
    for (const CalibrationComparison& r : rows) {
        os << pad(r.label, 48) << padLeft(r.measured ? fixed(*r.measured, *r.measured < 100 ? 2 : 0) : "-", 11)
           << padLeft(r.datasheet ? fixed(*r.datasheet, *r.datasheet < 100 ? 2 : 0) : "", 11)
           << padLeft(r.ratio() ? fixed(*r.ratio() * 100, 0) + "%" : "", 8) << "  " << r.unit;
        if (!r.measured && !r.detail.empty()) os << "  (" << r.detail << ")";
        os << "\n";
    }
}

nlohmann::json comparisonJson(const std::vector<CalibrationComparison>& rows) {
    nlohmann::json j = nlohmann::json::object();
    for (const CalibrationComparison& r : rows) {
        if (!r.datasheet) continue;
        j[r.name] = {{"datasheet_field", r.datasheetField}, {"datasheet", *r.datasheet},
                     {"ratio", r.ratio() ? nlohmann::json(std::round(*r.ratio() * 1e4) / 1e4) : nlohmann::json(nullptr)}};
    }
    return j;
}

}  // namespace ts::cli
