// The built-in GPU database: coverage, provenance of every field, consistency of the figures
// with each other and with the compute capability, and the traps of widely copied tables.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "trainscope/core/calibration_compare.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/gpu_json.h"

namespace ts {
namespace {

nlohmann::json rawDatabase() {
    std::ifstream in(std::string(TRAINSCOPE_SOURCE_DIR) + "/resources/gpus.json");
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str());
}

const GpuSpec& byDevice(const GpuDatabase& db, const std::string& cudaName) {
    const GpuSpec* g = db.matchDevice(cudaName);
    if (!g) throw std::runtime_error("no GPU matches " + cudaName);
    return *g;
}

TEST(GpuDatabase, CoversTheGpusUsersRent) {
    const GpuDatabase db = GpuDatabase::builtin();
    EXPECT_GE(db.gpus().size(), 20u);
    for (const char* name :
         {"Tesla P100-PCIE-16GB", "Tesla P100-SXM2-16GB", "Tesla P4", "Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB",
          "Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB", "Tesla T4", "NVIDIA GeForce RTX 2080 Ti",
          "NVIDIA GeForce RTX 3090", "NVIDIA A10", "NVIDIA A40", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB",
          "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA L4", "NVIDIA L40S", "NVIDIA GeForce RTX 4090",
          "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA B200"})
        EXPECT_NE(db.matchDevice(name), nullptr) << name << " is missing";
    std::set<std::string> distinct;
    for (const GpuSpec& g : db.gpus()) distinct.insert(g.id);
    EXPECT_EQ(distinct.size(), db.gpus().size());
}

TEST(GpuDatabase, EveryFieldIsPresentWithASourceOrExplicitlyUnknown) {
    const nlohmann::json raw = rawDatabase();
    const std::vector<std::string> figures = {"sms", "base_clock_mhz", "boost_clock_mhz", "memory_gb",
                                              "memory_bandwidth_gbs", "memory_bus_width_bits", "l2_cache_mb",
                                              "fp32_tflops", "fp64_tflops", "tdp_w", "memory_type"};
    auto checkFigure = [&](const nlohmann::json& f, const std::string& where) {
        ASSERT_TRUE(f.is_object()) << where << " must be {value, source}";
        bool hasValue = f.contains("value") && !f["value"].is_null();
        if (hasValue) {
            ASSERT_TRUE(f.contains("source")) << where;
            EXPECT_TRUE(raw["sources"].contains(f["source"].get<std::string>())) << where;
        } else {
            EXPECT_TRUE(f.contains("unknown") || f.value("unsupported", false)) << where << " has no value and no reason";
        }
    };
    for (const nlohmann::json& g : raw["gpus"]) {
        const std::string id = g["id"];
        for (const std::string& key : figures) {
            ASSERT_TRUE(g.contains(key)) << id << " lacks " << key;
            checkFigure(g[key], id + "." + key);
        }
        for (const char* p : {"tf32", "fp16", "bf16", "fp8"}) {
            ASSERT_TRUE(g["tensor_tflops"].contains(p)) << id << " lacks tensor_tflops." << p;
            checkFigure(g["tensor_tflops"][p], id + ".tensor_tflops." + p);
        }
        for (const char* k : {"pcie_generation", "pcie_lanes", "nvlink_generation", "nvlink_bandwidth_gbs"}) {
            ASSERT_TRUE(g["interconnect"].contains(k)) << id << " lacks interconnect." << k;
            checkFigure(g["interconnect"][k], id + ".interconnect." + k);
        }
        for (const char* k : {"name", "device_names", "architecture", "compute_capability", "segment", "form_factor"})
            EXPECT_TRUE(g.contains(k)) << id << " lacks " << k;
        for (const nlohmann::json& p : g["prices"]) {
            EXPECT_TRUE(raw["sources"].contains(p["source"].get<std::string>())) << id << " price source";
            EXPECT_FALSE(p["date"].get<std::string>().empty()) << id << " price date";
        }
    }
    for (auto it = raw["sources"].begin(); it != raw["sources"].end(); ++it)
        EXPECT_FALSE(it.value().value("url", "").empty()) << "source " << it.key() << " has no URL";
}

TEST(GpuDatabase, Fp32PeakFollowsFromSmsLanesAndBoostClock) {
    for (const GpuSpec& g : GpuDatabase::builtin().gpus()) {
        if (!g.sms.known() || !g.boostClockMHz.known() || !g.fp32Tflops.known()) continue;
        int lanes = (g.ccMajor == 6 && g.ccMinor == 0) || g.ccMajor == 7 || (g.ccMajor == 8 && g.ccMinor == 0) ? 64 : 128;
        double computed = 2.0 * *g.sms * lanes * *g.boostClockMHz * 1e6 / 1e12;
        EXPECT_NEAR(*g.fp32Tflops / computed, 1.0, 0.035) << g.id << ": datasheet " << *g.fp32Tflops
                                                           << " vs 2 x SMs x lanes x boost " << computed;
    }
}

TEST(GpuDatabase, PrecisionSupportFollowsTheArchitecture) {
    for (const GpuSpec& g : GpuDatabase::builtin().gpus()) {
        const bool tensorCores = g.ccMajor >= 7;
        EXPECT_EQ(g.limits.tensorCores, tensorCores) << g.id;
        EXPECT_EQ(g.supports(ComputePrecision::Tf32), g.ccMajor >= 8) << g.id;
        EXPECT_EQ(g.supports(ComputePrecision::Bf16), g.ccMajor >= 8) << g.id;
        EXPECT_EQ(g.supports(ComputePrecision::Fp8), g.ccMajor * 10 + g.ccMinor >= 89) << g.id;
        EXPECT_TRUE(g.supports(ComputePrecision::Fp32)) << g.id;
        if (!tensorCores) continue;
        double fp16 = *g.peakTflops(ComputePrecision::Fp16);
        if (g.supports(ComputePrecision::Bf16)) {
            EXPECT_DOUBLE_EQ(*g.peakTflops(ComputePrecision::Bf16), fp16) << g.id;
        }
        if (g.supports(ComputePrecision::Fp8)) {
            // 3%: the L40S datasheet itself gives FP8 733 against FP16 362.05.
            EXPECT_NEAR(*g.peakTflops(ComputePrecision::Fp8) / fp16, 2.0, 0.03) << g.id;
        }
        if (g.supports(ComputePrecision::Tf32)) {
            EXPECT_NEAR(*g.peakTflops(ComputePrecision::Tf32) / fp16, 0.5, 0.02) << g.id;
        }
        // Tensor cores beat CUDA cores at FP16 everywhere (by ~2x on GeForce Ampere/Ada, far more elsewhere).
        EXPECT_GT(fp16, 1.9 * *g.fp32Tflops) << g.id;
        if (g.segment == "geforce") {
            // GeForce parts run FP16 with FP32 accumulation (mixed precision) at half the FP16-accumulate rate.
            auto it = g.tensorTflopsFp16Accumulate.find("fp16");
            ASSERT_NE(it, g.tensorTflopsFp16Accumulate.end()) << g.id << " needs its FP16-accumulate rate";
            EXPECT_NEAR(*it->second / fp16, 2.0, 0.02) << g.id;
        }
    }
}

TEST(GpuDatabase, RidgePointsArePeakOverBandwidthAndOrderedByPrecision) {
    const GpuDatabase db = GpuDatabase::builtin();
    for (const GpuSpec& g : db.gpus()) {
        double previous = 0;
        for (ComputePrecision p : {ComputePrecision::Fp32, ComputePrecision::Tf32, ComputePrecision::Bf16,
                                   ComputePrecision::Fp8}) {
            std::optional<double> r = g.ridgePoint(p);
            if (!g.supports(p)) {
                EXPECT_FALSE(r.has_value()) << g.id << " " << precisionName(p);
                continue;
            }
            ASSERT_TRUE(r.has_value()) << g.id << " " << precisionName(p);
            EXPECT_NEAR(*r, *g.peakTflops(p) * 1e12 / (*g.memoryBandwidthGBs * 1e9), 1e-9 * *r);
            // TF32 tensor math only matches the FP32 CUDA cores on GeForce and Ada workstation parts.
            if (p == ComputePrecision::Tf32) {
                EXPECT_GE(*r, previous) << g.id;
            } else {
                EXPECT_GT(*r, previous) << g.id << " " << precisionName(p);
            }
            previous = *r;
        }
    }
    // methods.md's worked example: H100 SXM BF16 989e12 / 3.35e12 = 295 FLOP per byte.
    EXPECT_NEAR(*byDevice(db, "NVIDIA H100 80GB HBM3").ridgePoint(ComputePrecision::Bf16), 295.2, 0.5);
}

TEST(GpuDatabase, PerSmLimitsMatchTheComputeCapability) {
    const GpuDatabase db = GpuDatabase::builtin();
    for (const GpuSpec& g : db.gpus()) {
        const ArchLimits& l = g.limits;
        SCOPED_TRACE(g.id + " CC " + g.computeCapability());
        EXPECT_EQ(l.ccMajor, g.ccMajor);
        EXPECT_EQ(l.ccMinor, g.ccMinor);
        EXPECT_EQ(l.registersPerSm, 65536);
        EXPECT_EQ(l.warpSize, 32);
        EXPECT_EQ(l.maxThreadsPerBlock, 1024);
        EXPECT_EQ(l.maxRegistersPerThread, 255);
        EXPECT_EQ(l.sharedMemoryPerBlockBytes, 48 * 1024);
        EXPECT_GE(l.sharedMemoryPerBlockOptinBytes, 48 * 1024);  // never 0
        EXPECT_EQ(l.reservedSharedMemoryPerBlockBytes, g.ccMajor >= 8 ? 1024 : 0);
        int cc = g.ccMajor * 10 + g.ccMinor;
        EXPECT_EQ(l.maxThreadsPerSm, cc == 75 ? 1024 : (cc == 86 || cc == 89) ? 1536 : 2048);
        EXPECT_EQ(l.maxBlocksPerSm, (cc == 75 || cc == 86) ? 16 : cc == 89 ? 24 : 32);
        if (g.ccMajor >= 7) {
            EXPECT_EQ(l.sharedMemoryPerBlockOptinBytes + 1024 * (g.ccMajor >= 8), l.sharedMemoryPerSmBytes);
        }
    }
}

TEST(GpuDatabase, AvoidsTheErrorsOfWidelyCopiedTables) {
    const GpuDatabase db = GpuDatabase::builtin();
    EXPECT_EQ(*byDevice(db, "NVIDIA L4").sms, 58);
    EXPECT_EQ(*byDevice(db, "Tesla P4").sms, 20);
    EXPECT_NEAR(*byDevice(db, "NVIDIA H200").memoryBandwidthGBs, 4800, 1);
    EXPECT_NEAR(*byDevice(db, "NVIDIA H100 80GB HBM3").memoryBandwidthGBs, 3350, 1);
    EXPECT_NEAR(*byDevice(db, "NVIDIA H100 80GB HBM3").peakTflops(ComputePrecision::Bf16), 989, 2);  // dense
    EXPECT_NEAR(*byDevice(db, "NVIDIA A100-SXM4-40GB").peakTflops(ComputePrecision::Fp16), 312, 1);
    EXPECT_NEAR(*byDevice(db, "NVIDIA GeForce RTX 3090").peakTflops(ComputePrecision::Fp16), 71, 1.5);
    EXPECT_FALSE(byDevice(db, "Tesla V100-SXM2-16GB").supports(ComputePrecision::Bf16));
    EXPECT_FALSE(byDevice(db, "Tesla T4").supports(ComputePrecision::Bf16));
}

TEST(GpuDatabase, MatchesWhatCudaReports) {
    const GpuDatabase db = GpuDatabase::builtin();
    EXPECT_EQ(db.matchDevice("Tesla T4"), db.find("t4"));
    EXPECT_EQ(byDevice(db, "NVIDIA A100-PCIE-40GB").memoryGB.value, 40);
    EXPECT_EQ(byDevice(db, "NVIDIA A100-PCIE-40GB").formFactor, "PCIe");
    EXPECT_EQ(byDevice(db, "NVIDIA A100 80GB PCIe").memoryGB.value, 80);
    EXPECT_NE(db.matchDevice("nvidia  a100-pcie-40gb"), nullptr);  // case and spacing
    EXPECT_EQ(db.matchDevice("A100-PCIE-40GB"), db.matchDevice("NVIDIA A100-PCIE-40GB"));  // old drivers drop the prefix
    EXPECT_EQ(db.matchDevice("NVIDIA Imaginary GPU 9000"), nullptr);
    EXPECT_THROW(db.get("imaginary-9000"), ModelError);
}

TEST(GpuDatabase, UnknownGpuGetsAnEntryFromItsPropertiesAndCalibration) {
    const GpuDatabase db = GpuDatabase::builtin();
    DeviceProperties p;
    p.name = "NVIDIA Future GPU";
    p.ccMajor = 9;
    p.ccMinor = 0;
    p.sms = 100;
    p.totalMemoryBytes = uint64_t(96) << 30;
    p.maxSmClockMHz = 2000;
    p.memoryClockMHz = 2600;
    p.memoryBusWidthBits = 5120;
    p.l2CacheBytes = 50 << 20;
    GpuSpec s = db.specFromDevice(p, nullptr);
    EXPECT_EQ(s.id, "local-nvidia-future-gpu");
    EXPECT_EQ(*s.sms, 100);
    EXPECT_NEAR(*s.memoryGB, 96, 0.05);
    EXPECT_NEAR(*s.memoryBandwidthGBs, 2 * 2600e6 * 640 / 1e9, 1e-6);
    EXPECT_NEAR(*s.fp32Tflops, 2 * 100 * 128 * 2000e6 / 1e12, 1e-9);
    EXPECT_EQ(s.limits.maxThreadsPerSm, 2048);  // from the database's CC 9.0 row
    EXPECT_FALSE(s.supports(ComputePrecision::Bf16));  // not known without a datasheet or calibration

    CalibrationResult c;
    c.device = p;
    c.measurements.push_back({"tensor_bf16", 600.0, "TFLOP/s", 0.01, 10, "8192^3"});
    c.measurements.push_back({"tensor_fp8", std::nullopt, "TFLOP/s", 0, 0, "no algorithm"});
    GpuSpec calibrated = db.specFromDevice(p, &c);
    ASSERT_TRUE(calibrated.supports(ComputePrecision::Bf16));
    EXPECT_EQ(*calibrated.peakTflops(ComputePrecision::Bf16), 600.0);
    EXPECT_TRUE(calibrated.peakTflops(ComputePrecision::Bf16).estimate);
    EXPECT_FALSE(calibrated.supports(ComputePrecision::Fp8));
    ASSERT_TRUE(calibrated.calibration.has_value());
    EXPECT_EQ(calibrated.calibration->measured.at("tensor_bf16"), 600.0);
    // Its JSON is a valid user GPU file entry.
    nlohmann::json file = {{"format", kGpuDatabaseFormat}, {"version", 1},
                           {"sources", {{"cuda-runtime", {{"title", "CUDA runtime"}, {"url", "https://docs.nvidia.com/cuda"}}}}},
                           {"gpus", {gpuToJson(calibrated)}}};
    GpuDatabase extended = db;
    extended.applyOverrides(file.dump(), "calibrated.json");
    ASSERT_NE(extended.matchDevice("NVIDIA Future GPU"), nullptr);
    EXPECT_EQ(*extended.matchDevice("NVIDIA Future GPU")->peakTflops(ComputePrecision::Bf16), 600.0);
}

TEST(GpuDatabase, CalibrationIsComparedWithTheMatchingDatasheetFigure) {
    const GpuSpec& h100 = byDevice(GpuDatabase::builtin(), "NVIDIA H100 80GB HBM3");
    CalibrationResult c;
    c.measurements = {{"dram_copy", 2680.0, "GB/s", 0.01, 20, ""},
                      {"tensor_bf16", 791.2, "TFLOP/s", 0.01, 20, ""},
                      {"launch_latency", 4.1, "us", 0.05, 100, ""},
                      {"tensor_fp8", std::nullopt, "TFLOP/s", 0, 0, "cuBLASLt found no algorithm"}};
    auto rows = compareWithDatasheet(h100, c);
    ASSERT_EQ(rows.size(), 4u);
    auto row = [&](const std::string& name) {
        for (const CalibrationComparison& r : rows)
            if (r.name == name) return r;
        throw std::runtime_error(name + " missing");
    };
    EXPECT_NEAR(*row("dram_copy").ratio(), 2680.0 / 3350.0, 1e-9);
    EXPECT_EQ(row("tensor_bf16").datasheetField, "tensor_tflops.bf16");
    EXPECT_NEAR(*row("tensor_bf16").ratio(), 0.8, 0.001);
    EXPECT_FALSE(row("launch_latency").datasheet.has_value());  // no datasheet figure for launch latency
    EXPECT_FALSE(row("tensor_fp8").ratio().has_value());
    EXPECT_EQ(row("tensor_fp8").detail, "cuBLASLt found no algorithm");
}

TEST(GpuDatabase, PricesHaveProvenance) {
    int priced = 0;
    for (const GpuSpec& g : GpuDatabase::builtin().gpus())
        for (const Price& p : g.prices) {
            ++priced;
            // A sanity range: the cheapest listing is a marketplace's lowest bid for a P4, $0.03.
            EXPECT_GT(p.usdPerGpuHour, 0.01) << g.id;
            EXPECT_LT(p.usdPerGpuHour, 50) << g.id;
            EXPECT_FALSE(p.provider.empty()) << g.id;
        }
    EXPECT_GE(priced, 4);
}

}  // namespace
}  // namespace ts
