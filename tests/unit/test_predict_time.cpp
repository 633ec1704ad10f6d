// Training time without a profile: the operation rows reproduce the shipped kernel-scaling model,
// the limit laws hold (bandwidth-bound work scales with bandwidth, compute-bound with peak rate),
// unsupported precisions are refused, every zoo model gives finite positive predictions on every
// GPU, data-parallel efficiency behaves, and the fast sweep equals predict().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "trainscope/core/builder.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/iteration/data_parallel.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/iteration/training_predictor.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"

using namespace ts;
using namespace ts::predictors;

namespace {

const GpuDatabase& db() {
    return GpuDatabase::builtin();
}
const GpuSpec& gpu(const std::string& id) {
    return db().get(id);
}

// One elementwise add over [N, 2^20] values, and one N x 8192 x 8192 Linear.
Graph bigAdd() {
    ModelBuilder b("add");
    const int x = b.input("x", {Dim::batch(), Dim(1 << 20)});
    return b.finish({b.add(x, x)});
}
Graph bigLinear() {
    ModelBuilder b("linear");
    const int x = b.input("x", {Dim::batch(), Dim(8192)});
    return b.finish({b.linear("fc", x, 8192, false)});
}

// Forward time of every operation; `kernelOnly`: without the host floor and autocast's casts.
double forwardMs(const Graph& g, const GpuSpec& spec, TrainingPrecision p, double n, bool kernelOnly = false) {
    ModelAnalysis m(g);
    const OperationTimes t = prepareOperationTimes(m, spec, p);
    double sum = 0;
    for (const TimeRow& r : t.forward) sum += kernelOnly ? r.kernelMs(n) : r.at(n);
    return sum;
}

Graph zooModel(const ZooEntry& e) {
    // The smallest images these models accept; the others run at 64 pixels.
    const std::map<std::string, std::string> smallestImage{{"vgg16", "224"}, {"inception_v3", "96"}, {"ssd300", "257"}};
    std::map<std::string, std::string> opts;
    for (const ZooParam& p : e.params) {
        if (p.name == "image") opts["image"] = smallestImage.count(e.name) ? smallestImage.at(e.name) : "64";
        if (p.name == "aux") opts["aux"] = "0";  // the auxiliary head needs 299-pixel images
        if (p.name == "seq") opts["seq"] = "16";
        if (p.name == "vocab") opts["vocab"] = "1000";
    }
    return buildZooModel(e.name, opts);
}

}  // namespace

// The kernel-scaling table was fitted on FP32 with TF32 off: its prediction is fp32-strict's row
// (PyTorch's default fp32 runs convolutions in TF32 on the H100).
TEST(PredictTime, Fp32RowsAreTheShippedModelOnlyPrediction) {
    const KernelScalingTable& table = KernelScalingTable::builtin();
    for (const char* spec : {"zoo:resnet18?image=64", "zoo:bert_base?seq=32"}) {
        ModelAnalysis m(loadModel(spec));
        for (const char* id : {"v100-pcie-32gb", "t4", "h100-sxm"}) {
            const OperationTimes t = prepareOperationTimes(m, gpu(id), TrainingPrecision::Fp32Strict);
            int checked = 0;
            for (const TimeRow& r : t.forward) {
                const AnalyzedOp& op = m.ops[size_t(r.op)];
                if (op.opClass.empty()) continue;
                for (double n : {1.0, 16.0}) {
                    KernelWork w;
                    w.opClass = op.opClass;
                    w.kind = workKindOf(op.opClass);
                    w.flops = op.forwardFlops.at(n);
                    w.bytes = m.bytes(op, TrainingPrecision::Fp32).read.at(n) +
                              m.bytes(op, TrainingPrecision::Fp32).write.at(n);
                    EXPECT_NEAR(r.at(n), table.predictModelOnly(w, gpu(id)), 1e-9 * r.at(n)) << op.name << " on " << id;
                }
                ++checked;
            }
            EXPECT_GT(checked, 10);
        }
    }
}

TEST(PredictTime, BandwidthBoundWorkScalesWithBandwidth) {
    const Graph g = bigAdd();
    GpuSpec faster = gpu("h100-sxm");
    faster.id = "test-double-bandwidth";
    faster.memoryBandwidthGBs.value = 2 * *faster.memoryBandwidthGBs;
    const double n = 4096;  // 50 GB of traffic: host floor and fixed time vanish
    EXPECT_NEAR(
        forwardMs(g, gpu("h100-sxm"), TrainingPrecision::Fp32, n) / forwardMs(g, faster, TrainingPrecision::Fp32, n),
        2.0, 2e-3);
    // Two GPUs the calibration did not measure share its estimates: only bandwidth differs.
    const double bandwidthRatio = *gpu("h100-sxm").memoryBandwidthGBs / *gpu("l4").memoryBandwidthGBs;
    EXPECT_NEAR(
        forwardMs(g, gpu("l4"), TrainingPrecision::Fp32, n) / forwardMs(g, gpu("h100-sxm"), TrainingPrecision::Fp32, n),
        bandwidthRatio, 1e-3 * bandwidthRatio);
}

TEST(PredictTime, ComputeBoundWorkScalesWithPeakRate) {
    const Graph g = bigLinear();
    GpuSpec faster = gpu("h100-sxm");
    faster.id = "test-double-peak";
    faster.fp32Tflops.value = 2 * *faster.fp32Tflops;
    faster.tdpW.value = 2 * *faster.tdpW;  // the power cap doubles with it
    for (auto& [name, f] : faster.tensorTflops)
        if (f.known()) f.value = 2 * *f;
    const double n = 262144;  // 35 TFLOP per forward: the fixed kernel time vanishes
    for (TrainingPrecision p : {TrainingPrecision::Fp32, TrainingPrecision::AmpBf16, TrainingPrecision::Fp8})
        EXPECT_NEAR(forwardMs(g, gpu("h100-sxm"), p, n, true) / forwardMs(g, faster, p, n, true), 2.0, 1e-2)
            << trainingPrecisionName(p);
    // Precision: the kernel runs at the tensor-core peak over the FP32 peak...
    const double ratio = forwardMs(g, gpu("h100-sxm"), TrainingPrecision::Fp32, n, true) /
                         forwardMs(g, gpu("h100-sxm"), TrainingPrecision::AmpFp16, n, true);
    EXPECT_NEAR(ratio / (989.0 / 66.9), 1.0, 1e-2);
    // ... and autocast's casts of the fp32 input (memory-bound) come on top.
    EXPECT_GT(forwardMs(g, gpu("h100-sxm"), TrainingPrecision::AmpFp16, n),
              forwardMs(g, gpu("h100-sxm"), TrainingPrecision::AmpFp16, n, true) * 1.05);
}

TEST(PredictTime, UnsupportedPrecisionsAreRefusedWithTheReason) {
    const Graph g = loadModel("zoo:resnet18?image=32");
    TrainingPredictor p(g);
    auto reason = [&](const char* id, TrainingPrecision prec) {
        TrainingScenario s;
        s.precision = prec;
        const TrainingPrediction r = p.predict(gpu(id), s);
        EXPECT_EQ(r.supported, r.reason.empty());
        EXPECT_TRUE(r.supported || r.layers.empty());
        return r.supported ? std::string() : r.reason;
    };
    EXPECT_NE(reason("v100-sxm2-16gb", TrainingPrecision::AmpBf16).find("BF16"), std::string::npos);
    EXPECT_NE(reason("t4", TrainingPrecision::AmpBf16).find("BF16"), std::string::npos);
    EXPECT_NE(reason("t4", TrainingPrecision::Tf32).find("TF32"), std::string::npos);
    EXPECT_NE(reason("p100-pcie-16gb", TrainingPrecision::AmpFp16).find("no tensor cores"), std::string::npos);
    EXPECT_NE(reason("p4", TrainingPrecision::Tf32).find("no tensor cores"), std::string::npos);
    EXPECT_NE(reason("a100-sxm4-40gb", TrainingPrecision::Fp8).find("FP8"), std::string::npos);
    EXPECT_EQ(reason("h100-sxm", TrainingPrecision::Fp8), "");
    EXPECT_EQ(reason("v100-sxm2-16gb", TrainingPrecision::AmpFp16), "");
    EXPECT_EQ(reason("p100-pcie-16gb", TrainingPrecision::Fp32), "");
    TrainingScenario s;
    s.dataParallel.gpus = 2;
    s.dataParallel.interconnect = InterconnectKind::NvLink;
    // A GPU without NVLink is not dropped from an NVLink scenario: it runs over PCIe and says so.
    const TrainingPrediction t4 = p.predict(gpu("t4"), s);
    EXPECT_TRUE(t4.supported) << t4.reason;
    EXPECT_EQ(t4.interconnect, "pcie");
    EXPECT_NE(t4.interconnectNotice.find("no NVLink"), std::string::npos) << t4.interconnectNotice;
}

TEST(PredictTime, EveryZooModelOnEveryGpuIsFiniteAndPositive) {
    for (const ZooEntry& e : zooModels()) {
        SCOPED_TRACE(e.name);
        TrainingPredictor p(zooModel(e));
        for (const GpuSpec& spec : db().gpus())
            for (TrainingPrecision prec : kAllTrainingPrecisions) {
                TrainingScenario s;
                s.batch = 2;
                s.precision = prec;
                const TrainingPrediction r = p.predict(spec, s);
                if (!r.supported) continue;
                SCOPED_TRACE(spec.id);
                for (const Interval& i : {r.iterationMs, r.samplesPerS, r.forwardMs, r.peakMemoryBytes}) {
                    EXPECT_TRUE(std::isfinite(i.value) && i.value > 0);
                    EXPECT_TRUE(i.low <= i.value && i.value <= i.high && i.low > 0);
                }
                EXPECT_GT(r.backwardMs.value, 0);
                EXPECT_GT(r.optimizerMs.value, 0);
                EXPECT_FALSE(r.layers.empty());
                double sum = 0;
                for (const LayerTime& l : r.layers) {
                    EXPECT_TRUE(std::isfinite(l.forwardMs.value) && l.forwardMs.value > 0) << l.name;
                    EXPECT_TRUE(std::isfinite(l.backwardMs.value) && l.backwardMs.value >= 0) << l.name;
                    sum += l.forwardMs.value + l.backwardMs.value;
                }
                EXPECT_NEAR(sum, r.forwardMs.value + r.backwardMs.value, 1e-5 * sum);  // the sums run in float
            }
    }
}

TEST(PredictTime, NvLinkScenariosUseTheBridgeForAPairAndPcieBeyondIt) {
    TrainingPredictor p(loadModel("zoo:resnet50"));
    TrainingScenario s;
    s.batch = 32;
    s.precision = TrainingPrecision::AmpFp16;
    s.dataParallel.interconnect = InterconnectKind::NvLink;
    s.dataParallel.gpus = 2;
    const TrainingPrediction pair = p.predict(gpu("rtx-3090"), s, false);
    ASSERT_TRUE(pair.supported) << pair.reason;
    EXPECT_EQ(pair.interconnect, "nvlink");
    EXPECT_TRUE(pair.interconnectNotice.empty()) << pair.interconnectNotice;
    s.dataParallel.gpus = 8;
    const TrainingPrediction eight = p.predict(gpu("rtx-3090"), s, false);
    ASSERT_TRUE(eight.supported) << eight.reason;
    EXPECT_EQ(eight.interconnect, "pcie");
    EXPECT_NE(eight.interconnectNotice.find("at most 2"), std::string::npos) << eight.interconnectNotice;
    EXPECT_NE(std::find(eight.notes.begin(), eight.notes.end(), eight.interconnectNotice), eight.notes.end());
    // The same 8 GPUs over PCIe asked for outright give the same time: the fallback is PCIe, nothing else.
    s.dataParallel.interconnect = InterconnectKind::Pcie;
    EXPECT_DOUBLE_EQ(p.predict(gpu("rtx-3090"), s, false).iterationMs.value, eight.iterationMs.value);
}

TEST(PredictTime, DataParallelEfficiencyFallsWithSlowerLinksAndMoreGpus) {
    TrainingPredictor p(loadModel("zoo:gpt2?seq=128"));
    TrainingScenario s;
    s.batch = 4;
    s.precision = TrainingPrecision::AmpBf16;
    s.dataParallel.interconnect = InterconnectKind::InfiniBand;
    double previous = 0;
    for (double gbps : {25.0, 100.0, 400.0, 1600.0}) {
        s.dataParallel.gpus = 16;  // two nodes of 8: the network carries the ring
        s.dataParallel.infinibandGbps = gbps;
        const TrainingPrediction r = p.predict(gpu("h100-sxm"), s, false);
        ASSERT_TRUE(r.supported) << r.reason;
        EXPECT_GT(r.scalingEfficiency.value, 0);
        EXPECT_LE(r.scalingEfficiency.value, 1);
        EXPECT_LE(r.scalingEfficiency.low, r.scalingEfficiency.value);
        EXPECT_GE(r.scalingEfficiency.value, previous);
        previous = r.scalingEfficiency.value;
    }
    s.dataParallel.infinibandGbps = 100;
    double last = 1;
    for (int n : {1, 2, 8, 64}) {
        s.dataParallel.gpus = n;
        const TrainingPrediction r = p.predict(gpu("h100-sxm"), s, false);
        EXPECT_LE(r.scalingEfficiency.value, last);
        last = r.scalingEfficiency.value;
        EXPECT_NEAR(r.samplesPerS.value, 1000.0 * s.batch * n / r.iterationMs.value, 1e-9 * r.samplesPerS.value);
    }
    EXPECT_LT(last, 1);
    s.dataParallel.gpus = 8;
    s.dataParallel.interconnect = InterconnectKind::NvLink;
    const double nvlink = p.predict(gpu("h100-sxm"), s, false).scalingEfficiency.value;
    s.dataParallel.interconnect = InterconnectKind::Pcie;
    EXPECT_GE(nvlink, p.predict(gpu("h100-sxm"), s, false).scalingEfficiency.value);
}

// The wait for the slowest GPU is part of the iteration, reported on its own, and exactly the
// stream model's spread times E[max of N normals] of the time per micro-batch without it.
TEST(PredictTime, DataParallelStepsWaitForTheSlowestGpu) {
    TrainingPredictor p(loadModel("zoo:resnet18?image=64"));
    TrainingScenario s;
    s.batch = 32;
    s.dataParallel.gpus = 8;
    StreamModel none = StreamModel::shipped();
    none.stepTimeSpread = 0;
    StreamModel spread = none;
    spread.stepTimeSpread = 0.05;
    for (int64_t k : {1, 4}) {
        s.accumulation = k;
        p.setStreamModel(none);
        const TrainingPrediction without = p.predict(gpu("a100-sxm4-80gb"), s, false);
        p.setStreamModel(spread);
        const TrainingPrediction with = p.predict(gpu("a100-sxm4-80gb"), s, false);
        ASSERT_TRUE(with.supported) << with.reason;
        EXPECT_EQ(without.slowestGpuWaitMs.value, 0);
        const double share = 0.05 * expectedMaxOfNormals(8) / std::sqrt(double(k));
        EXPECT_NEAR(with.slowestGpuWaitMs.value, share * without.iterationMs.value, 1e-9 * with.iterationMs.value);
        EXPECT_NEAR(with.iterationMs.value, without.iterationMs.value + with.slowestGpuWaitMs.value,
                    1e-9 * with.iterationMs.value);
        EXPECT_LT(with.scalingEfficiency.value, without.scalingEfficiency.value);
    }
    s.dataParallel.gpus = 1;
    s.accumulation = 1;
    EXPECT_EQ(p.predict(gpu("a100-sxm4-80gb"), s, false).slowestGpuWaitMs.value, 0);
}

TEST(PredictTime, SweepEqualsPredict) {
    TrainingPredictor p(loadModel("zoo:resnet18?image=64"));
    const std::vector<const GpuSpec*> gpus = {&gpu("v100-sxm2-16gb"), &gpu("a100-sxm4-80gb"), &gpu("t4")};
    const std::vector<TrainingPrecision> precisions = {TrainingPrecision::Fp32, TrainingPrecision::AmpBf16};
    TrainingScenario base;
    base.optimizer = Optimizer::SgdMomentum;
    base.checkpointing = Checkpointing::Blocks;
    base.dataParallel.gpus = 2;
    base.dataParallel.interconnect = InterconnectKind::Pcie;
    const SweepPlan plan(p, gpus, precisions, base);
    const std::vector<int64_t> batches = {1, 7, 64, 300};
    const std::vector<GpuSweep> out = plan.evaluate(batches);
    ASSERT_EQ(out.size(), gpus.size() * precisions.size());
    for (const GpuSweep& sw : out) {
        SCOPED_TRACE(sw.gpuId + " " + trainingPrecisionName(sw.precision));
        TrainingScenario s = base;
        s.precision = sw.precision;
        const TrainingPrediction one = p.predict(gpu(sw.gpuId), s, false);
        EXPECT_EQ(sw.supported, one.supported);
        if (!sw.supported) continue;
        EXPECT_EQ(sw.maxBatch.value, one.maxBatch.value);
        ASSERT_EQ(sw.points.size(), batches.size());
        for (const SweepPoint& pt : sw.points) {
            s.batch = pt.batch;
            const TrainingPrediction r = p.predict(gpu(sw.gpuId), s, false);
            EXPECT_NEAR(pt.iterationMs.value, r.iterationMs.value, 1e-9 * r.iterationMs.value);
            EXPECT_NEAR(pt.iterationMs.high, r.iterationMs.high, 1e-9 * r.iterationMs.high);
            EXPECT_NEAR(pt.peakMemoryBytes.value, r.peakMemoryBytes.value, 1);
            EXPECT_EQ(pt.fits, r.fits);
        }
    }
}

// A GPU's SXM part (the same chip and memory at higher clocks and power) never predicts slower than
// its PCIe card: the whole-iteration model gives every GPU the same bandwidth efficiency, where the
// isolated-operator measurements of the PCIe cards once made them the faster of the pair.
TEST(PredictTime, SxmPartsAreNeverSlowerThanTheirPcieCards) {
    const std::pair<const char*, const char*> pairs[] = {{"a100-sxm4-40gb", "a100-pcie-40gb"},
                                                         {"a100-sxm4-80gb", "a100-pcie-80gb"},
                                                         {"v100-sxm2-32gb", "v100-pcie-32gb"},
                                                         {"v100-sxm2-16gb", "v100-pcie-16gb"},
                                                         {"p100-sxm2-16gb", "p100-pcie-16gb"},
                                                         {"h100-sxm", "h100-pcie"}};
    for (const char* spec : {"zoo:resnet18?image=64", "zoo:bert_base?seq=64"}) {
        TrainingPredictor p(loadModel(spec));
        TrainingScenario s;
        s.batch = 16;
        for (TrainingPrecision precision : {TrainingPrecision::Fp32, TrainingPrecision::AmpFp16}) {
            s.precision = precision;
            for (const auto& [sxm, pcie] : pairs) {
                const TrainingPrediction a = p.predict(gpu(sxm), s, false), b = p.predict(gpu(pcie), s, false);
                if (!a.supported || !b.supported) continue;  // fp16 on a P100 is supported; a missing figure is not
                EXPECT_LE(a.iterationMs.value, b.iterationMs.value * (1 + 1e-9))
                    << spec << " " << trainingPrecisionName(precision) << ": " << sxm << " vs " << pcie;
            }
        }
    }
}
