// Predictions from a measured profile, on profiles built here from known laws: the fit reproduces
// the runs it was fitted on (time, per layer, memory), follows wave steps between and beyond them,
// moves to another precision by the analytic ratio and to another GPU by the kernel-scaling cross
// path (or by the clock for a kernel smaller than a wave), and refuses profiles of other models.
#include <gtest/gtest.h>

#include <cmath>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/iteration/training_predictor.h"

#include "mlp_test_model.h"

using namespace ts;
using namespace ts::predictors;

namespace {

const GpuSpec& gpu(const std::string& id) {
    return GpuDatabase::builtin().get(id);
}

using predictor_test::mlp;

// fc1 forward: exactly 0.2 + 0.05 ceil(n / 8) ms, its kernel a grid of 10 n blocks of 1024 threads
// and 64 registers: one block per SM, so 80 blocks a wave on a V100 and ceil(n / 8) waves.
double fc1(double n) {
    return 0.2 + 0.05 * std::ceil(n / 8);
}
double fc1Backward(double n) {
    return 0.3 + 0.004 * n;
}
double relu(double n) {
    return 0.03 + 0.001 * n;
}  // one block of 128 threads at every batch
double reluBackward(double n) {
    return 0.04 + 0.002 * n;
}
double fc2(double n) {
    return 0.1 + 0.003 * n;
}
double fc2Backward(double n) {
    return 0.15 + 0.006 * n;
}
constexpr double kOutsideMs = 0.7;  // the rest of the measured iteration

TimingStat stat(double ms, double cv = 0.01) {
    TimingStat t;
    t.medianMs = ms;
    t.cv = cv;
    t.minMs = t.maxMs = ms;
    t.repeats = 20;
    return t;
}

KernelRecord kernel(const std::string& name, int grid, int threads, int registers) {
    KernelRecord k;
    k.name = name;
    k.grid[0] = grid;
    k.block[0] = threads;
    k.registersPerThread = registers;
    k.durationUs = 100;
    return k;
}

LayerProfile layer(const Graph& g, int op, double fwd, double bwd) {
    LayerProfile l;
    l.op = op;
    l.name = g.ops[size_t(op)].name;
    l.type = g.ops[size_t(op)].type;
    l.forward = stat(fwd);
    l.backward = stat(bwd);
    l.hasBackward = true;
    return l;
}

double peakAllocated(double n) {
    return 1e8 + 1e6 * n;
}

Profile measuredProfile(const Graph& g, const std::vector<int64_t>& batches, const std::string& precision = "fp32") {
    Profile p;
    p.environment.device = "cuda:0";
    p.environment.deviceName = gpu("v100-sxm2-16gb").deviceNames.at(0);
    DeviceProperties props;
    props.name = p.environment.deviceName;
    props.ccMajor = 7;
    props.sms = 80;
    props.totalMemoryBytes = uint64_t(16) << 30;
    p.environment.gpu = props;
    p.scenario.model = "mlp.json";
    p.scenario.precision = precision;
    p.scenario.optimizer = "sgd";
    for (int64_t b : batches) {
        const double n = double(b);
        ProfileRun r;
        r.batch = b;
        r.layers = {layer(g, 0, fc1(n), fc1Backward(n)), layer(g, 1, relu(n), reluBackward(n)),
                    layer(g, 2, fc2(n), fc2Backward(n))};
        r.layers[0].forwardKernels = {kernel("volta_sgemm_128x64_nn", int(10 * b), 1024, 64)};
        r.layers[1].forwardKernels = {kernel("vectorized_elementwise_kernel", 1, 128, 16)};
        double layers = 0;
        for (const LayerProfile& l : r.layers) layers += l.forward.medianMs + l.backward.medianMs;
        r.iteration = stat(layers + kOutsideMs, 0.02);
        r.memory.peakAllocated = peakAllocated(n);
        r.memory.peakReserved = 1.1 * peakAllocated(n);
        r.memory.cudaContext = 5e8;
        p.runs.push_back(r);
    }
    return p;
}

const std::vector<int64_t> kBatches = {8, 16, 32, 64};

TrainingPrediction at(const TrainingPredictor& p, const std::string& id, int64_t batch,
                      TrainingPrecision precision = TrainingPrecision::Fp32) {
    TrainingScenario s;
    s.batch = batch;
    s.precision = precision;
    s.optimizer = Optimizer::Sgd;
    return p.predict(gpu(id), s);
}

const LayerTime& layerOf(const TrainingPrediction& r, int op) {
    for (const LayerTime& l : r.layers)
        if (l.op == op) return l;
    throw std::runtime_error("no layer " + std::to_string(op));
}

}  // namespace

TEST(PredictProfile, ReproducesTheRunsItWasFittedOn) {
    const Graph g = mlp();
    const Profile profile = measuredProfile(g, kBatches);
    TrainingPredictor p(g);
    p.useProfile(profile, GpuDatabase::builtin());
    for (size_t i = 0; i < kBatches.size(); ++i) {
        const TrainingPrediction r = at(p, "v100-sxm2-16gb", kBatches[i]);
        SCOPED_TRACE(kBatches[i]);
        EXPECT_EQ(r.source, PredictionSource::MeasuredProfile);
        const ProfileRun& run = profile.runs[i];
        // The sums run in single precision (the sweep's speed): equal to 1e-6.
        EXPECT_NEAR(r.iterationMs.value, run.iteration.medianMs, 1e-6 * run.iteration.medianMs);
        EXPECT_NEAR(r.otherMs.value + r.optimizerMs.value, kOutsideMs, 1e-9);
        for (int op = 0; op < 3; ++op) {
            EXPECT_NEAR(layerOf(r, op).forwardMs.value, run.layers[size_t(op)].forward.medianMs, 1e-12);
            EXPECT_NEAR(layerOf(r, op).backwardMs.value, run.layers[size_t(op)].backward.medianMs, 1e-12);
            EXPECT_EQ(layerOf(r, op).source, PredictionSource::MeasuredProfile);
        }
        // On the measured GPU the peak is the measured reserved memory and context.
        EXPECT_NEAR(r.peakMemoryBytes.value, run.memory.peakReserved + run.memory.cudaContext, 1.0);
        EXPECT_LE(r.iterationMs.low, r.iterationMs.value);
        EXPECT_GT(r.iterationMs.high, r.iterationMs.value);  // the measured spread at least
        EXPECT_EQ(r.capacityBytes, double(uint64_t(16) << 30));
    }
}

TEST(PredictProfile, FollowsWaveStepsBetweenAndBeyondTheMeasuredBatches) {
    const Graph g = mlp();
    TrainingPredictor p(g);
    p.useProfile(measuredProfile(g, kBatches), GpuDatabase::builtin());
    for (int64_t n : {4, 9, 12, 17, 20, 40, 63, 65, 100, 128, 1000}) {
        SCOPED_TRACE(n);
        EXPECT_NEAR(layerOf(at(p, "v100-sxm2-16gb", n), 0).forwardMs.value, fc1(double(n)), 1e-12);
    }
    // Without kernel records the units are the analytic kernel time: a straight law stays close.
    for (int64_t n : {12, 24, 48})
        EXPECT_NEAR(layerOf(at(p, "v100-sxm2-16gb", n), 2).forwardMs.value, fc2(double(n)), 0.02 * fc2(double(n)));
}

TEST(PredictProfile, OneMeasuredBatchScalesByTheAnalyticModel) {
    const Graph g = mlp();
    TrainingPredictor p(g);
    p.useProfile(measuredProfile(g, {16}), GpuDatabase::builtin());
    ModelAnalysis m(g);
    const OperationTimes rows = prepareOperationTimes(m, gpu("v100-sxm2-16gb"), TrainingPrecision::Fp32);
    const double expected = fc2(16) * rows.forward[2].at(256) / rows.forward[2].at(16);
    EXPECT_NEAR(layerOf(at(p, "v100-sxm2-16gb", 256), 2).forwardMs.value, expected, 1e-12);
}

TEST(PredictProfile, OtherPrecisionByTheAnalyticRatio) {
    const Graph g = mlp();
    TrainingPredictor p(g);
    p.useProfile(measuredProfile(g, kBatches), GpuDatabase::builtin());
    ModelAnalysis m(g);
    const OperationTimes fp32 = prepareOperationTimes(m, gpu("v100-sxm2-16gb"), TrainingPrecision::Fp32);
    const OperationTimes amp = prepareOperationTimes(m, gpu("v100-sxm2-16gb"), TrainingPrecision::AmpFp16);
    const TrainingPrediction r = at(p, "v100-sxm2-16gb", 16, TrainingPrecision::AmpFp16);
    EXPECT_EQ(r.source, PredictionSource::MeasuredProfile);
    EXPECT_NEAR(layerOf(r, 2).forwardMs.value, fc2(16) * amp.forward[2].at(16) / fp32.forward[2].at(16), 1e-12);
    EXPECT_NE(r.sourceDetail.find("scaled analytically to amp-fp16"), std::string::npos);
    EXPECT_FALSE(at(p, "v100-sxm2-16gb", 16, TrainingPrecision::AmpBf16).supported);
}

TEST(PredictProfile, OtherGpuByTheKernelScalingCrossPath) {
    const Graph g = mlp();
    TrainingPredictor p(g);
    p.useProfile(measuredProfile(g, kBatches), GpuDatabase::builtin());
    ModelAnalysis m(g);
    const AnalyzedOp& op = m.ops[2];
    KernelWork w;
    w.opClass = op.opClass;
    w.kind = workKindOf(op.opClass);
    w.flops = op.forwardFlops.at(16);
    w.bytes = m.bytes(op, TrainingPrecision::Fp32).read.at(16) + m.bytes(op, TrainingPrecision::Fp32).write.at(16);
    const double expected =
        KernelScalingTable::builtin().predictCross(w, fc2(16), gpu("v100-sxm2-16gb"), gpu("a100-pcie-40gb"));
    const TrainingPrediction r = at(p, "a100-pcie-40gb", 16);
    EXPECT_NEAR(layerOf(r, 2).forwardMs.value, expected, 1e-9 * expected);
    EXPECT_NE(r.sourceDetail.find("cross path"), std::string::npos);
    // The measured GPU's memory figures stay with it: elsewhere context and fragmentation are estimates.
    EXPECT_NE(r.peakMemoryBytes.value, at(p, "v100-sxm2-16gb", 16).peakMemoryBytes.value);
}

TEST(PredictProfile, KernelSmallerThanAWaveScalesWithTheClock) {
    const Graph g = mlp();
    TrainingPredictor p(g);
    p.useProfile(measuredProfile(g, kBatches), GpuDatabase::builtin());
    const double clocks = *gpu("v100-sxm2-16gb").boostClockMHz / *gpu("a100-pcie-40gb").boostClockMHz;
    for (int64_t n : {8, 24, 64})
        EXPECT_NEAR(layerOf(at(p, "a100-pcie-40gb", n), 1).forwardMs.value, relu(double(n)) * clocks, 1e-12);
}

TEST(PredictProfile, ARunOutOfMemoryBoundsTheLargestBatch) {
    const Graph g = mlp();
    Profile profile = measuredProfile(g, kBatches);
    ProfileRun failed;
    failed.batch = 48;
    failed.fits = false;
    failed.error = "CUDA out of memory";
    profile.runs.push_back(failed);
    TrainingPredictor p(g);
    p.useProfile(profile, GpuDatabase::builtin());
    const TrainingPrediction r = at(p, "v100-sxm2-16gb", 47);
    EXPECT_EQ(r.maxBatch.value, 47);
    EXPECT_TRUE(r.fits);
    EXPECT_FALSE(at(p, "v100-sxm2-16gb", 48).fits);
    EXPECT_GT(at(p, "a100-pcie-40gb", 47).maxBatch.value, 47);  // another GPU is not bound by it
}

TEST(PredictProfile, RefusesAProfileOfAnotherModel) {
    const Graph g = mlp();
    Profile profile = measuredProfile(g, kBatches);
    profile.runs[1].layers[2].name = "classifier/Gemm";
    TrainingPredictor p(g);
    try {
        p.useProfile(profile, GpuDatabase::builtin());
        FAIL() << "accepted a profile of another model";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("classifier/Gemm"), std::string::npos) << e.what();
    }
    Profile seq = measuredProfile(g, kBatches);
    seq.scenario.seq = 128;
    EXPECT_THROW(p.useProfile(seq, GpuDatabase::builtin()), ModelError);
    Profile none = measuredProfile(g, kBatches);
    for (ProfileRun& r : none.runs) r.fits = false;
    EXPECT_THROW(p.useProfile(none, GpuDatabase::builtin()), ModelError);
}

TEST(PredictProfile, ACpuProfileLeavesGpuPredictionsAnalytic) {
    const Graph g = mlp();
    Profile profile = measuredProfile(g, kBatches);
    profile.environment.gpu.reset();
    profile.environment.device = "cpu";
    TrainingPredictor p(g);
    p.useProfile(profile, GpuDatabase::builtin());
    const TrainingPrediction r = at(p, "v100-sxm2-16gb", 16);
    EXPECT_NE(r.source, PredictionSource::MeasuredProfile);
    ASSERT_FALSE(r.notes.empty());
    EXPECT_NE(r.notes.back().find("CPU"), std::string::npos);
}

TEST(PredictProfile, SweepEqualsPredict) {
    const Graph g = mlp();
    TrainingPredictor p(g);
    p.useProfile(measuredProfile(g, kBatches), GpuDatabase::builtin());
    // The sweep shares what a GPU's precisions have in common; predict() computes each alone.
    const std::vector<const GpuSpec*> gpus = {&gpu("v100-sxm2-16gb"), &gpu("a100-pcie-40gb"), &gpu("h100-sxm")};
    const SweepPlan plan(
        p, gpus,
        {TrainingPrecision::Fp32, TrainingPrecision::Tf32, TrainingPrecision::AmpFp16, TrainingPrecision::AmpBf16},
        TrainingScenario{});
    int supported = 0;
    for (const GpuSweep& sw : plan.evaluate({4, 16, 100})) {
        if (!sw.supported) continue;  // tf32 and bf16 on the V100
        ++supported;
        for (const SweepPoint& pt : sw.points) {
            TrainingScenario s;
            s.batch = pt.batch;
            s.precision = sw.precision;
            const TrainingPrediction r = p.predict(gpu(sw.gpuId), s, false);
            EXPECT_NEAR(pt.iterationMs.value, r.iterationMs.value, 1e-9 * r.iterationMs.value);
            EXPECT_NEAR(pt.peakMemoryBytes.value, r.peakMemoryBytes.value, 1);
        }
    }
    EXPECT_EQ(supported, 10);
}

// The sweep's sums (single precision, vectorised, shared between a GPU's precisions) add up the
// per-layer times and errors that are computed one by one in double precision.
TEST(PredictProfile, SumsAddUpTheLayerTimesOnEveryPath) {
    const Graph g = mlp();
    TrainingPredictor p(g);
    p.useProfile(measuredProfile(g, kBatches), GpuDatabase::builtin());
    int checked = 0;
    for (const char* id : {"v100-sxm2-16gb", "a100-pcie-40gb", "h100-sxm"})
        for (TrainingPrecision precision :
             {TrainingPrecision::Fp32, TrainingPrecision::Tf32, TrainingPrecision::AmpFp16, TrainingPrecision::AmpBf16})
            for (int64_t n : {4, 24, 100}) {
                const TrainingPrediction r = at(p, id, n, precision);
                if (!r.supported) continue;
                SCOPED_TRACE(std::string(id) + " " + trainingPrecisionName(precision) + " " + std::to_string(n));
                double forward = 0, backward = 0, forwardError = 0, backwardError = 0;
                for (const LayerTime& l : r.layers) {
                    forward += l.forwardMs.value;
                    forwardError += l.forwardMs.high - l.forwardMs.value;
                    backward += l.backwardMs.value;
                    backwardError += l.backwardMs.high - l.backwardMs.value;
                }
                EXPECT_NEAR(r.forwardMs.value, forward, 1e-5 * forward);
                EXPECT_NEAR(r.backwardMs.value, backward, 1e-5 * backward);
                EXPECT_NEAR(r.forwardMs.high - r.forwardMs.value, forwardError, 1e-5 * forward);
                EXPECT_NEAR(r.backwardMs.high - r.backwardMs.value, backwardError, 1e-5 * backward);
                ++checked;
            }
    EXPECT_EQ(checked, 30);
}
