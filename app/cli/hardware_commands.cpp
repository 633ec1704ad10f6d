#include "hardware_commands.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "gpu_report.h"
#include "trainscope/core/atomic_file.h"
#include "trainscope/core/calibration_compare.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/gpu_json.h"
#include "trainscope/core/gpu_user_file.h"
#include "trainscope/core/occupancy.h"
#include "trainscope/kernels/calibration.h"
#include "trainscope/kernels/device_query.h"

namespace ts::cli {
namespace {

using nlohmann::json;

// Writes `entry` into the GPU file at `path`, replacing an entry with the same id and keeping
// everything else the user put there.
void writeGpuEntry(const std::string& path, const json& entry, const json& sources) {
    json doc = {{"format", kGpuDatabaseFormat}, {"version", kGpuDatabaseVersion}, {"sources", json::object()},
                {"gpus", json::array()}};
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        try {
            doc = json::parse(ss.str());
        } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e309
            throw ModelError(path, std::string("exists but is not valid JSON, so the calibration was not written "
                                               "into it (choose another file with -o): ") + e.what());
        }
        if (!doc.is_object() || !doc.contains("format") || doc["format"] != kGpuDatabaseFormat)
            throw ModelError(path, "exists but is not a TrainScope GPU file; choose another file with -o");
    }
    for (auto it = sources.begin(); it != sources.end(); ++it) doc["sources"][it.key()] = it.value();
    json& gpus = doc["gpus"];
    bool replaced = false;
    for (json& g : gpus)
        if (g.value("id", "") == entry["id"]) {
            g = entry;
            replaced = true;
        }
    if (!replaced) gpus.push_back(entry);
    writeFileAtomically(path, doc.dump(2) + "\n");
}

}  // namespace

std::string defaultUserGpuFile() {
    const std::string path = userGpuFilePath();
    return path.empty() ? "trainscope-gpus.json" : path;
}

int runGpus(const GpusOptions& o) {
    GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    if (!o.gpu.empty()) {
        const GpuSpec& g = db.get(o.gpu);
        if (o.json) std::cout << gpuToJson(g).dump(1) << "\n";
        else printGpuDetail(std::cout, db, g);
        return 0;
    }
    DeviceQuery local = kernels::queryDevices();
    if (o.json) {
        json gpus = json::array();
        for (const GpuSpec& g : db.gpus()) gpus.push_back(gpuToJson(g));
        json archs = json::array();
        for (const auto& [cc, l] : db.architectures()) archs.push_back(archLimitsToJson(l));
        json sources = json::object();
        for (const auto& [key, s] : db.sources())
            sources[key] = {{"title", s.title}, {"url", s.url}, {"accessed", s.accessed}};
        std::cout << json{{"format", kGpuDatabaseFormat}, {"version", kGpuDatabaseVersion},
                          {"user_files", db.appliedFiles()}, {"gpus", gpus}, {"architectures", archs},
                          {"sources", sources}, {"local", devicesJson(db, local)}}
                         .dump(1)
                  << "\n";
        return 0;
    }
    printGpuTable(std::cout, db);
    std::cout << "\nLocal GPU\n";
    printDevices(std::cout, db, local);
    return 0;
}

int runOccupancy(const OccupancyOptions& o) {
    GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    std::vector<const GpuSpec*> gpus;
    if (o.gpu == "all") {
        for (const GpuSpec& g : db.gpus()) gpus.push_back(&g);
    } else {
        gpus.push_back(&db.get(o.gpu));
    }
    json rows = json::array();
    if (!o.json)
        std::cout << "Kernel of " << o.threads << " threads x " << o.registers << " registers, " << o.sharedMemory
                  << " B shared memory per block" << (o.grid ? ", " + std::to_string(o.grid) + " blocks" : "")
                  << " (occupancy from cuda_occupancy.h)\n\n"
                  << "gpu                   blocks/SM  warps/SM  occupancy  limited by          wave   waves  last wave\n";
    for (const GpuSpec* g : gpus) {
        KernelLaunch k{o.threads, o.registers, 0, o.sharedMemory, o.grid};
        std::string error;
        Occupancy occ;
        try {
            if (k.gridBlocks == 0) k.gridBlocks = 1;
            occ = computeOccupancy(*g, k);
            if (o.grid == 0) occ = computeOccupancy(*g, {o.threads, o.registers, 0, o.sharedMemory, occ.waveSize});
        } catch (const ModelError& e) {
            error = e.problem();
            if (size_t at = error.find("cannot run: "); at != std::string::npos) error = error.substr(at + 12);
        }
        if (o.json) {
            json r = {{"gpu", g->id}};
            if (error.empty())
                r.update({{"blocks_per_sm", occ.blocksPerSm}, {"active_warps_per_sm", occ.activeWarpsPerSm},
                          {"occupancy", occ.fraction}, {"limited_by", occ.limitedBy}, {"wave_size", occ.waveSize},
                          {"waves", occ.waves}, {"last_wave_fill", occ.lastWaveFill}});
            else
                r["error"] = error;
            rows.push_back(r);
            continue;
        }
        char line[256];
        if (error.empty())
            std::snprintf(line, sizeof line, "%-20s %10d %9d %9.0f%%  %-16s %7lld %7lld %9.0f%%", g->id.c_str(),
                          occ.blocksPerSm, occ.activeWarpsPerSm, occ.fraction * 100, occ.limitedBy.c_str(),
                          static_cast<long long>(occ.waveSize), static_cast<long long>(occ.waves),
                          occ.lastWaveFill * 100);
        else
            std::snprintf(line, sizeof line, "%-20s cannot run: %s", g->id.c_str(), error.c_str());
        std::cout << line << "\n";
    }
    if (o.json) std::cout << rows.dump(1) << "\n";
    return 0;
}

int runDevices(const DevicesOptions& o) {
    GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    DeviceQuery q = kernels::queryDevices();
    if (o.json) std::cout << devicesJson(db, q).dump(1) << "\n";
    else printDevices(std::cout, db, q);
    return 0;
}

int runCalibrate(const CalibrateOptions& o) {
    GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    DeviceQuery q = kernels::queryDevices();
    if (!q.available) throw DeviceError("cannot calibrate: " + q.status);
    if (o.device < 0 || o.device >= int(q.devices.size()))
        throw DeviceError("cannot calibrate cuda:" + std::to_string(o.device) + ": this machine has " +
                          std::to_string(q.devices.size()) + " CUDA device(s)");

    kernels::CalibrationOptions copts;
    copts.device = o.device;
    copts.quick = o.quick;
    copts.progress = [](const std::string& stage, double fraction) {
        std::cerr << "\r[" << int(fraction * 100) << "%] " << stage << "            " << std::flush;
    };
    CalibrationResult result = kernels::calibrate(copts);
    std::cerr << "\r" << std::string(60, ' ') << "\r";

    const GpuSpec* known = db.matchDevice(result.device.name);
    GpuSpec spec = known ? *known : db.specFromDevice(result.device, &result);
    std::vector<CalibrationComparison> rows = compareWithDatasheet(spec, result);

    json calibration = calibrationToJson(result);
    calibration["versus_datasheet"] = comparisonJson(rows);
    json entry;
    if (known) {
        entry = {{"id", known->id}, {"calibration", calibration}};  // overrides only the calibration
    } else {
        entry = gpuToJson(spec);
        entry["calibration"] = calibration;
    }
    json sources = {{"cuda-runtime", {{"title", "CUDA runtime device properties (cudaGetDeviceProperties)"},
                                      {"url", "https://docs.nvidia.com/cuda/cuda-runtime-api/"},
                                      {"accessed", result.date}}}};
    std::string output = o.output.empty() ? defaultUserGpuFile() : o.output;
    writeGpuEntry(output, entry, sources);

    if (o.json) {
        std::cout << json{{"gpu", spec.id}, {"known_gpu", known != nullptr}, {"output", output},
                          {"calibration", calibration}}
                         .dump(1)
                  << "\n";
    } else {
        printCalibration(std::cout, spec, rows);
        for (const std::string& w : result.warnings) std::cout << "warning: " << w << "\n";
        std::cout << "\n" << (known ? "Calibration of database entry " + known->id : "New entry " + spec.id)
                  << " written to " << output << "\n";
    }
    return 0;
}

}  // namespace ts::cli
