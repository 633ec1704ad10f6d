// Cross-GPU kernel scaling (issue 9): the models on synthetic work, the leave-one-GPU-out rule,
// the measurement reader on good and malformed files, and the shipped table.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/scaling/kernel_fit.h"
#include "trainscope/predictors/scaling/kernel_measurements.h"
#include "trainscope/predictors/scaling/kernel_scaling.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"
#include "trainscope/predictors/scaling/kernel_validation.h"

using namespace ts;
using namespace ts::predictors;

namespace {

const std::string kSubset = std::string(TRAINSCOPE_TEST_DATA_DIR) + "/kernel-measurements";

const GpuDatabase& db() {
    static const GpuDatabase d = GpuDatabase::builtin();
    return d;
}

std::string writeTemp(const std::string& name, const std::string& text) {
    auto dir = std::filesystem::temp_directory_path() / "trainscope-kernel-scaling-test";
    std::filesystem::create_directories(dir);
    std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
}

const char* kHeader =
    "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,"
    "Grid z,Block x,Block y,Block z,CUDA Version,B,H\n";

}  // namespace

TEST(KernelScaling, BandwidthBoundScalesWithBandwidth) {
    const GpuSpec& a100 = db().get("a100-pcie-40gb");
    const GpuSpec& v100 = db().get("v100-pcie-32gb");
    KernelWork w = memoryWork("add", 1e9);  // 12 GB of traffic: floors are negligible
    ScalingParams p;
    p.tauUs = 0;
    GpuOpStats st{0.0, 0.8};
    const double tA = predictModelOnly(w, a100, st, p);
    const double tV = predictModelOnly(w, v100, st, p);
    EXPECT_NEAR(tV / tA, *a100.memoryBandwidthGBs / *v100.memoryBandwidthGBs, 1e-9);
    // From a measurement on the A100 (whatever its own efficiency), the V100 is bandwidth-scaled.
    p.alpha = 1;
    w.kernelName = "vectorized_elementwise_kernel";
    const double predicted = predictCross(w, 1.3 * tA, a100, st, v100, st, p);
    EXPECT_NEAR(predicted / (1.3 * tA), *a100.memoryBandwidthGBs / *v100.memoryBandwidthGBs, 1e-6);
}

TEST(KernelScaling, ComputeBoundScalesWithPeakRate) {
    const GpuSpec& a100 = db().get("a100-pcie-40gb");
    const GpuSpec& p100 = db().get("p100-pcie-16gb");
    const KernelWork w = gemmWork("bmm", 64, 4096, 4096, 4096);  // 2.8e14 FLOPs: seconds, floors negligible
    ScalingParams p;
    p.structured = false;  // roofline: no wave quantisation
    p.wattsPerTflop16nm = 0;
    const GpuOpStats st{0.0, 0.7};
    const double tA = predictModelOnly(w, a100, st, p);
    EXPECT_NEAR(predictModelOnly(w, p100, st, p) / tA, *a100.fp32Tflops / *p100.fp32Tflops, 1e-6);
    // A measurement 30% off the model on the A100 carries over (alpha = 1), scaled by the peak ratio.
    p.alpha = 1;
    const double cross = predictCross(w, 1.3 * tA, a100, st, p100, st, p);
    EXPECT_NEAR(cross / (1.3 * tA), *a100.fp32Tflops / *p100.fp32Tflops, 1e-6);
}

// The origin's efficiency ratio is clipped to [1 / maxRatio, maxRatio] before it transfers.
TEST(KernelScaling, OriginRatioIsClippedToMaxRatio) {
    const GpuSpec& a100 = db().get("a100-pcie-40gb");
    const GpuSpec& p100 = db().get("p100-pcie-16gb");
    const KernelWork w = gemmWork("bmm", 64, 4096, 4096, 4096);  // seconds: floors negligible
    ScalingParams p;
    p.structured = false;
    p.alpha = 1;
    const GpuOpStats st{0.0, 0.7};
    const double modelA = predictModelOnly(w, a100, st, p), modelP = predictModelOnly(w, p100, st, p);
    EXPECT_NEAR(predictCross(w, 3 * modelA, a100, st, p100, st, p) / modelP, 3.0, 1e-6);  // within 10
    p.maxRatio = 1.5;
    EXPECT_NEAR(predictCross(w, 3 * modelA, a100, st, p100, st, p) / modelP, 1.5, 1e-6);
    EXPECT_NEAR(predictCross(w, modelA / 3, a100, st, p100, st, p) / modelP, 1 / 1.5, 1e-6);
    EXPECT_NEAR(predictCross(w, 1.2 * modelA, a100, st, p100, st, p) / modelP, 1.2, 1e-6);  // inside: kept
}

TEST(KernelScaling, PowerCapSlowsLowPowerParts) {
    ScalingParams p;
    p.wattsPerTflop16nm = 30;
    const GpuSpec& t4 = db().get("t4");
    const GpuSpec& a100 = db().get("a100-pcie-40gb");
    EXPECT_EQ(processNodeNm(t4), 12.0);
    EXPECT_NEAR(sustainedFp32Tflops(t4, p), 70.0 / (30 * 12.0 / 16), 1e-9);    // 3.1, not 0.75 x 8.1
    EXPECT_NEAR(sustainedFp32Tflops(a100, p), 0.75 * *a100.fp32Tflops, 1e-9);  // 250 W at 7 nm: no cap
}

// The architecture correction is a kernel-time factor per architecture: the limit laws above
// hold between GPUs of one architecture and are shifted by the factor ratio across them.
TEST(KernelScaling, ArchitectureFactorScalesKernelTime) {
    const GpuSpec& a100 = db().get("a100-pcie-40gb");
    const GpuSpec& p100 = db().get("p100-pcie-16gb");
    const KernelWork w = gemmWork("bmm", 64, 4096, 4096, 4096);
    ScalingParams p;
    p.structured = false;
    const GpuOpStats st{0.0, 0.7};
    const double plainP = predictModelOnly(w, p100, st, p), plainCross = predictCross(w, 2.0, a100, st, p100, st, p);
    p.architectureLogOffset = {{p100.architecture, std::log(1.5)}};
    EXPECT_NEAR(architectureFactor(p100, p), 1.5, 1e-12);
    EXPECT_EQ(architectureFactor(a100, p), 1.0);  // no entry: no correction
    EXPECT_NEAR(predictModelOnly(w, p100, st, p) / plainP, 1.5, 1e-9);
    EXPECT_NEAR(predictCross(w, 2.0, a100, st, p100, st, p) / plainCross, 1.5, 1e-9);
}

// The shape term multiplies the constant architecture factor only for work of its shape class.
TEST(KernelScaling, ShapeOffsetAppliesToItsShapeClassOnly) {
    const GpuSpec& a100 = db().get("a100-pcie-40gb");
    const GpuSpec& p100 = db().get("p100-pcie-16gb");
    const KernelWork w = gemmWork("bmm", 64, 4096, 1024, 256);  // rows 4096, cols 256, reduction 1024
    EXPECT_EQ(gemmShapeClass(*w.gemm), "r5c2m4");
    const KernelWork other = gemmWork("bmm", 64, 4096, 16, 256);  // reduction 16: another class
    ASSERT_NE(gemmShapeClass(*other.gemm), gemmShapeClass(*w.gemm));
    ScalingParams p;
    p.structured = false;
    const GpuOpStats st{0.0, 0.7};
    const double plainCross = predictCross(w, 2.0, a100, st, p100, st, p);
    p.architectureLogOffset = {{p100.architecture, std::log(1.5)}};
    p.shapeLogOffset = {{p100.architecture, {{gemmShapeClass(*w.gemm), std::log(2.0)}}}};
    EXPECT_NEAR(architectureFactor(p100, p, w), 3.0, 1e-12);
    EXPECT_NEAR(architectureFactor(p100, p, other), 1.5, 1e-12);                   // constant only
    EXPECT_NEAR(architectureFactor(p100, p, memoryWork("add", 1e6)), 1.5, 1e-12);  // no GEMM shape
    EXPECT_EQ(architectureFactor(a100, p, w), 1.0);
    EXPECT_NEAR(predictCross(w, 2.0, a100, st, p100, st, p) / plainCross, 3.0, 1e-9);
    // From the P100 to the A100 the origin's factor is removed.
    const double back = predictCross(w, 2.0, p100, st, a100, st, p);
    p.architectureLogOffset.clear();
    p.shapeLogOffset.clear();
    EXPECT_NEAR(predictCross(w, 2.0, p100, st, a100, st, p) / back, 3.0, 1e-9);
}

// Only the training GPUs' architectures get a fitted factor: a GPU whose architecture no training
// GPU shares (T4, the only Turing part) is predicted without one.
TEST(KernelScalingFit, ArchitectureOffsetsOnlyForTrainingArchitectures) {
    const MeasurementSet set = readKernelMeasurements({kSubset}, db());
    const OperatorMeasurements* linear = set.find("linear");
    ASSERT_NE(linear, nullptr);
    const PreparedOperator prep(*linear, set);
    std::vector<size_t> train;
    for (size_t g = 0; g < prep.gpuCount(); ++g)
        if (linear->gpus[g].id != "t4") train.push_back(g);
    const ScalingParams p = prep.fit(train);
    EXPECT_EQ(p.architectureLogOffset.count("Turing"), 0u);
    EXPECT_EQ(p.architectureLogOffset.size(), 3u);  // Pascal (P100, P4), Volta, Ampere
    for (const auto& [arch, v] : p.architectureLogOffset) EXPECT_LT(std::abs(v), 1.0) << arch;
    // The shape terms likewise, and every configuration's shape class has one per architecture.
    EXPECT_EQ(p.shapeLogOffset.count("Turing"), 0u);
    EXPECT_EQ(p.shapeLogOffset.size(), 3u);
    for (const auto& [arch, shapes] : p.shapeLogOffset)
        for (const MeasuredConfig& c : linear->configs) {
            auto it = shapes.find(gemmShapeClass(*c.work.gemm));
            ASSERT_NE(it, shapes.end()) << arch;
            EXPECT_LT(std::abs(it->second), 1.0) << arch << " " << it->first;
        }
    // Memory-bound classes run the framework's own kernels everywhere: no correction.
    const PreparedOperator add(*set.find("add"), set);
    EXPECT_TRUE(add.fit(train).architectureLogOffset.empty());
    EXPECT_TRUE(add.fit(train).shapeLogOffset.empty());
}

TEST(KernelScaling, FloorDominatesTinyWork) {
    const GpuSpec& t4 = db().get("t4");
    ScalingParams p;
    const double t = predictModelOnly(memoryWork("relu", 16), t4, GpuOpStats{0.030, 0.7}, p);
    EXPECT_NEAR(t, 0.030, 0.0005);
}

TEST(KernelScaling, TileFromKernelName) {
    EXPECT_EQ(tileFromKernelName("ampere_sgemm_32x128_tn").x, 32);
    EXPECT_EQ(tileFromKernelName("ampere_sgemm_32x128_tn").y, 128);
    EXPECT_EQ(tileFromKernelName("maxwell_sgemm_128x64_nn").y, 64);
    EXPECT_EQ(tileFromKernelName("void implicit_convolve_sgemm<float, float, 128, 5, 5>").x, 128);  // default
}

TEST(KernelMeasurementsRead, SubsetHasFiveGpusPerClass) {
    MeasurementSet set = readKernelMeasurements({kSubset}, db());
    EXPECT_TRUE(set.unknownDevices.empty());
    ASSERT_EQ(set.ops.size(), 10u);
    for (const OperatorMeasurements& op : set.ops) {
        EXPECT_EQ(op.gpus.size(), 5u) << op.opClass;
        for (const MeasuredConfig& c : op.configs)
            for (const auto& m : c.byGpu) EXPECT_TRUE(m.has_value()) << op.opClass;
    }
    const OperatorMeasurements* conv = set.find("conv");
    ASSERT_NE(conv, nullptr);
    bool has80 = false;
    for (const GpuSpec& g : conv->gpus) has80 = has80 || g.id == "a100-pcie-80gb";
    EXPECT_TRUE(has80);
}

TEST(KernelMeasurementsRead, UnknownDeviceIsReportedNotGuessed) {
    std::string path = writeTemp("unknown.csv", std::string(kHeader) +
                                                    "relu,0.03,Tesla T4,p2.1.0,8902,k,1,1,4,1,1,128,1,1,cu121,2,64\n"
                                                    "relu,0.03,Imaginary GPU 9000,p2.1.0,8902,k,1,1,4,1,1,128,1,1,"
                                                    "cu121,2,64\n");
    MeasurementSet set = readKernelMeasurements({path}, db());
    ASSERT_EQ(set.unknownDevices.size(), 1u);
    EXPECT_EQ(set.unknownDevices[0].device, "Imaginary GPU 9000");
    ASSERT_EQ(set.ops.size(), 1u);
    EXPECT_EQ(set.ops[0].gpus.at(0).id, "t4");
}

TEST(KernelMeasurementsRead, MalformedFilesNameFileAndLine) {
    struct Case {
        const char* name;
        std::string text;
        const char* fragment;
    };
    const std::string good = "relu,0.03,Tesla T4,p2.1.0,8902,\"k<1, 2>\",1,1,4,1,1,128,1,1,cu121,2,64\n";
    std::string noLatency = kHeader;
    noLatency.replace(noLatency.find("Latency,"), 8, "");
    const std::vector<Case> cases = {
        {"empty.csv", "", "line 1: the file is empty"},
        {"missing_column.csv", noLatency + "relu,Tesla T4,p2.1.0,8902,k,1,1,4,1,1,128,1,1,cu121,2,64\n",
         "line 1: missing column 'Latency'"},
        {"bad_latency.csv",
         std::string(kHeader) + good + "relu,fast,Tesla T4,p2.1.0,8902,k,1,1,4,1,1,128,1,1,cu121,2,64\n",
         "line 3: Latency 'fast' is not a non-negative number"},
        {"missing_size.csv",
         "OPName,Latency,Device,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,Block z,B\n"
         "relu,0.03,Tesla T4,k,1,1,1,1,1,1,2\n",
         "line 2: missing column 'H'"},
        {"short_row.csv", std::string(kHeader) + "relu,0.03,Tesla T4\n", "line 2: 3 fields"},
        {"open_quote.csv", std::string(kHeader) + "relu,0.03,Tesla T4,p,8902,\"k<1,2>,1\n", "never closed"},
    };
    for (const Case& c : cases) {
        const std::string path = writeTemp(c.name, c.text);
        try {
            readKernelMeasurements({path}, db());
            ADD_FAILURE() << c.name << ": no error";
        } catch (const ModelError& e) {
            EXPECT_EQ(e.source(), path) << c.name;
            EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << c.name << ": " << e.what();
        }
    }
}

// Issue 23 audit: every field is read bounded by the row. A header naming a column twice made the
// column map shorter than the header, so a row of the map's length was indexed past its end; a
// row holding only `""` passed the length check and was indexed at the header's positions; and
// the Kernel_Size alias counted as a column, so files using that spelling were refused.
TEST(KernelMeasurementsRead, FieldsAreReadWithinTheRow) {
    const std::string header = kHeader;
    const std::string row = "relu,0.03,Tesla T4,p2.1.0,8902,k,1,1,4,1,1,128,1,1,cu121,2,64\n";
    // Device and OPName last: their indices are the largest.
    const std::string twice = "Latency,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,Block z,B,H,Latency,Device,"
                              "OPName\n0.03,k,1,1,1,1,1,1,2,64,0.03,Tesla T4\n";
    std::string path = writeTemp("twice.csv", twice);
    try {
        readKernelMeasurements({path}, db());
        ADD_FAILURE() << "no error";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("line 1: column 'Latency' appears twice in the header"),
                  std::string::npos)
            << e.what();
    }
    // A line that holds only an empty quoted field is no row (as a blank line is not).
    path = writeTemp("quoted_empty.csv", header + row + "\"\"\n" + row);
    MeasurementSet set = readKernelMeasurements({path}, db());
    EXPECT_EQ(set.rows, 2);
    // The spelling Kernel_Size is an alias of Kernel_Szie, not a column more.
    path = writeTemp("alias.csv",
                     "OPName,Latency,Device,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,Block z,B,Input_Channel,"
                     "Output_Channel,Kernel_Size,Input_Size,Stride,Padding\n"
                     "conv,0.05,Tesla T4,k,1,1,1,1,1,1,8,3,16,3,32,1,1\n");
    set = readKernelMeasurements({path}, db());
    EXPECT_EQ(set.rows, 1);
    ASSERT_EQ(set.ops.size(), 1u);
    EXPECT_EQ(set.ops[0].opClass, "conv");
}

// Changing everything GPU X measured changes nothing that is used to predict X.
TEST(KernelScalingValidation, PredictionsForXNeverUseXsRows) {
    const MeasurementSet original = readKernelMeasurements({kSubset}, db());
    MeasurementSet changed = original;
    const std::string X = "t4";
    for (OperatorMeasurements& op : changed.ops)
        for (size_t g = 0; g < op.gpus.size(); ++g)
            if (op.gpus[g].id == X)
                for (MeasuredConfig& c : op.configs) {
                    c.byGpu[g]->latencyMs *= 3.7;
                    c.byGpu[g]->kernelName = std::make_shared<const std::string>("turing_sgemm_32x32_nn");
                    c.byGpu[g]->grid = {7, 7, 7};
                }
    for (size_t i = 0; i < original.ops.size(); ++i) {
        const PreparedOperator a(original.ops[i], original), b(changed.ops[i], changed);
        size_t x = 0;
        while (original.ops[i].gpus[x].id != X) ++x;
        std::vector<size_t> train;
        for (size_t g = 0; g < a.gpuCount(); ++g)
            if (g != x) train.push_back(g);
        const ScalingParams pa = a.fit(train), pb = b.fit(train);
        const GpuOpStats ea = a.estimateFrom(train, pa.floorQuantile), eb = b.estimateFrom(train, pb.floorQuantile);
        for (size_t c = 0; c < original.ops[i].configs.size(); ++c) {
            EXPECT_EQ(a.predictModelOnly(c, x, ea, pa), b.predictModelOnly(c, x, eb, pb));
            for (size_t y : train)
                EXPECT_EQ(a.predictCross(c, y, a.ownStats(y), x, ea, pa),
                          b.predictCross(c, y, b.ownStats(y), x, eb, pb));
        }
    }
    // And the validation's own record of what it fitted for X is unchanged.
    const ValidationReport ra = validateKernels(original), rb = validateKernels(changed);
    ASSERT_EQ(ra.fitted.size(), rb.fitted.size());
    for (size_t i = 0; i < ra.fitted.size(); ++i) {
        if (ra.fitted[i].heldOut != X) continue;
        EXPECT_EQ(scalingParamsJson(ra.fitted[i].params), scalingParamsJson(rb.fitted[i].params));
        EXPECT_EQ(ra.fitted[i].heldOutEstimate.floorMs, rb.fitted[i].heldOutEstimate.floorMs);
        EXPECT_EQ(ra.fitted[i].heldOutEstimate.memEff, rb.fitted[i].heldOutEstimate.memEff);
    }
}

// The diagnostic replaces exactly the two machine statistics of X with X's own, and says so.
TEST(KernelScalingValidation, TargetHostKnownUsesOnlyXsFloorAndBandwidth) {
    const MeasurementSet set = readKernelMeasurements({kSubset}, db());
    const ValidationReport loo = validateKernels(set);
    ValidationOptions diagnostic;
    diagnostic.targetHostKnown = true;
    const ValidationReport known = validateKernels(set, diagnostic);
    EXPECT_FALSE(loo.targetHostKnown);
    EXPECT_TRUE(known.targetHostKnown);
    EXPECT_TRUE(validationReportJson(known)["target_host_known"].get<bool>());
    ASSERT_EQ(loo.fitted.size(), known.fitted.size());
    size_t differing = 0;
    for (size_t i = 0; i < known.fitted.size(); ++i) {
        const FittedParams& f = known.fitted[i];
        const OperatorMeasurements* op = set.find(f.opClass);
        ASSERT_NE(op, nullptr);
        const PreparedOperator prep(*op, set);
        size_t x = 0;
        while (op->gpus[x].id != f.heldOut) ++x;
        EXPECT_EQ(f.heldOutEstimate.floorMs, prep.ownStats(x).floorMs) << f.opClass << " " << f.heldOut;
        EXPECT_EQ(f.heldOutEstimate.memEff, prep.ownStats(x).memEff) << f.opClass << " " << f.heldOut;
        // The parameters are still fitted without X.
        EXPECT_EQ(scalingParamsJson(f.params), scalingParamsJson(loo.fitted[i].params))
            << f.opClass << " " << f.heldOut;
        if (f.heldOutEstimate.floorMs != loo.fitted[i].heldOutEstimate.floorMs) ++differing;
    }
    EXPECT_GT(differing, 0u);
    EXPECT_NE(known.cross.overall.medianPct, loo.cross.overall.medianPct);
}

// Every counted error comes with its prediction: the records reproduce the summary, the origin is
// never the target, and the model-only path has no origin.
TEST(KernelScalingValidation, ReportsEveryPredictionItCounts) {
    const MeasurementSet set = readKernelMeasurements({kSubset}, db());
    std::vector<double> crossApes, modelApes;
    size_t wrongActual = 0;
    ValidationOptions options;
    options.onPrediction = [&](const ValidationPrediction& p) {
        ASSERT_NE(p.op, nullptr);
        ASSERT_NE(p.target, nullptr);
        ASSERT_LT(p.config, p.op->configs.size());
        const auto& m = p.op->configs[p.config].byGpu;
        size_t x = 0;
        while (&p.op->gpus[x] != p.target) ++x;
        if (!m[x] || m[x]->latencyMs != p.measuredMs) ++wrongActual;
        const double e = std::abs(p.predictedMs - p.measuredMs) / p.measuredMs;
        (p.origin ? crossApes : modelApes).push_back(std::isfinite(e) ? e : 1.0);
        if (p.origin) {
            EXPECT_NE(p.origin->id, p.target->id);
        }
    };
    const ValidationReport r = validateKernels(set, options);
    EXPECT_EQ(wrongActual, 0u);
    ASSERT_EQ(int64_t(crossApes.size()), r.cross.overall.n);
    ASSERT_EQ(int64_t(modelApes.size()), r.modelOnly.overall.n);
    EXPECT_DOUBLE_EQ(summarize("x", crossApes).medianPct, r.cross.overall.medianPct);
    EXPECT_DOUBLE_EQ(summarize("x", crossApes).meanPct, r.cross.overall.meanPct);
    EXPECT_DOUBLE_EQ(summarize("x", modelApes).meanPct, r.modelOnly.overall.meanPct);
    // The callback does not change what is measured.
    EXPECT_EQ(validationReportJson(r)["overall"], validationReportJson(validateKernels(set))["overall"]);
}

TEST(KernelScalingTable, BuiltinCoversTheTenClassesAndAnyGpu) {
    const KernelScalingTable& t = KernelScalingTable::builtin();
    EXPECT_EQ(t.classes.size(), 10u);
    EXPECT_TRUE(t.provenance.contains("dataset"));
    const GpuSpec& t4 = db().get("t4");
    const GpuSpec& h100 = db().get("h100-sxm");  // not in the measurements: estimated statistics
    KernelWork w = gemmWork("linear", 1, 4096, 4096, 4096);
    w.kernelName = "turing_sgemm_128x64_nn";
    w.grid = {64, 32, 1};
    w.block = {256, 1, 1};
    const double onH100 = t.predictCross(w, 40.0, t4, h100);
    EXPECT_TRUE(std::isfinite(onH100));
    EXPECT_LT(onH100, 40.0);
    EXPECT_GT(t.predictModelOnly(memoryWork("some_new_elementwise_op", 1e6), h100), 0);
}

TEST(KernelScalingTable, RoundTripsThroughJson) {
    const KernelScalingTable& t = KernelScalingTable::builtin();
    const KernelScalingTable u = KernelScalingTable::fromJson(t.toJson().dump(), "round trip");
    EXPECT_EQ(u.toJson(), t.toJson());
    EXPECT_THROW(KernelScalingTable::fromJson("{\"format\": \"other\"}", "x"), ModelError);
    // max_ratio is optional (tables before it clipped at 10) and must be at least 1.
    nlohmann::json j = nlohmann::json::parse(t.toJson().dump());
    for (auto& [name, c] : j["classes"].items()) c["params"].erase("max_ratio");
    const KernelScalingTable old = KernelScalingTable::fromJson(j.dump(), "older table");
    for (const ClassScaling& c : old.classes) EXPECT_EQ(c.params.maxRatio, 10.0) << c.opClass;
    j["classes"]["linear"]["params"]["max_ratio"] = 0.5;
    EXPECT_THROW(KernelScalingTable::fromJson(j.dump(), "bad table"), ModelError);
}
