// Training memory: the arithmetic of every category against hand-computed cases, the peak against
// its categories, checkpointing, data parallelism, and the largest batch against `fits`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/memory/memory_model.h"
#include "trainscope/predictors/iteration/training_predictor.h"

#include "mlp_test_model.h"

using namespace ts;
using namespace ts::predictors;

namespace {

using predictor_test::mlp;

constexpr double kParams = 256.0 * 512 + 512 + 512.0 * 10 + 10;

const GpuSpec& gpu(const std::string& id) {
    return GpuDatabase::builtin().get(id);
}

MemoryBreakdown memoryOf(const Graph& g, TrainingPrecision p, Optimizer o, double n, bool ckpt = false, int gpus = 1) {
    ModelAnalysis m(g);
    return MemoryModel(m, p, o, ckpt, gpus).at(n, gpu("a100-sxm4-40gb"));
}

}  // namespace

TEST(PredictMemory, Fp32AdamIsSixteenBytesPerParameter) {
    const Graph g = mlp();
    const MemoryBreakdown m = memoryOf(g, TrainingPrecision::Fp32, Optimizer::Adam, 8);
    EXPECT_DOUBLE_EQ(m.weights, 4 * kParams);
    EXPECT_DOUBLE_EQ(m.gradients, 4 * kParams);
    EXPECT_DOUBLE_EQ(m.optimizerState, 8 * kParams);
    EXPECT_DOUBLE_EQ(m.weights + m.gradients + m.optimizerState, 16 * kParams);
    EXPECT_DOUBLE_EQ(m.castWeightCopies, 0);
}

TEST(PredictMemory, OptimizerStatePerParameter) {
    const Graph g = mlp();
    EXPECT_DOUBLE_EQ(memoryOf(g, TrainingPrecision::Fp32, Optimizer::Sgd, 8).optimizerState, 0);
    EXPECT_DOUBLE_EQ(memoryOf(g, TrainingPrecision::Fp32, Optimizer::SgdMomentum, 8).optimizerState, 4 * kParams);
    EXPECT_DOUBLE_EQ(memoryOf(g, TrainingPrecision::Fp32, Optimizer::AdamW, 8).optimizerState, 8 * kParams);
    // TF32 changes the arithmetic, not the storage.
    EXPECT_DOUBLE_EQ(memoryOf(g, TrainingPrecision::Tf32, Optimizer::Adam, 8).weights, 4 * kParams);
}

TEST(PredictMemory, FpActivationsAreTheSavedTensorsOnce) {
    // fp32: the ReLU output [N, 512] is kept by the ReLU and by fc2 (once); fc1 keeps the batch
    // itself, which is counted as inputs.
    const Graph g = mlp();
    for (double n : {1.0, 8.0, 100.0}) {
        const MemoryBreakdown m = memoryOf(g, TrainingPrecision::Fp32, Optimizer::Sgd, n);
        EXPECT_DOUBLE_EQ(m.activations, 4 * 512 * n);
        EXPECT_DOUBLE_EQ(m.inputs, 4 * 256 * n);
    }
}

TEST(PredictMemory, AutocastKeepsFp32MasterWeightsAndSixteenBitCopies) {
    // amp: weights and gradients stay fp32 (4 B), autocast adds a 16-bit copy of every weight of
    // the Linear layers (2 B); fc1 keeps a 16-bit copy of its fp32 input, the ReLU output is 16-bit
    // and kept once (by the ReLU and, as it is already 16-bit, by fc2).
    const Graph g = mlp();
    for (TrainingPrecision p : {TrainingPrecision::AmpFp16, TrainingPrecision::AmpBf16}) {
        const MemoryBreakdown m = memoryOf(g, p, Optimizer::Adam, 8);
        EXPECT_DOUBLE_EQ(m.weights + m.gradients + m.optimizerState, 16 * kParams);
        EXPECT_DOUBLE_EQ(m.castWeightCopies, 2 * kParams);
        EXPECT_DOUBLE_EQ(m.activations, 8 * (2 * 256 + 2 * 512));
    }
}

TEST(PredictMemory, DataParallelAddsBucketBuffers) {
    const Graph g = mlp();
    EXPECT_DOUBLE_EQ(memoryOf(g, TrainingPrecision::Fp32, Optimizer::Adam, 8, false, 4).gradients, 8 * kParams);
}

TEST(PredictMemory, PeakIsBetweenTheModelStatesAndTheSumOfCategories) {
    const Graph g = loadModel("zoo:resnet18?image=64");
    ModelAnalysis a(g);
    for (Optimizer o : {Optimizer::Sgd, Optimizer::Adam})
        for (double n : {1.0, 16.0, 256.0}) {
            const MemoryBreakdown m = MemoryModel(a, TrainingPrecision::AmpFp16, o, false, 1).at(n, gpu("h100-sxm"));
            const double sum = m.weights + m.castWeightCopies + m.gradients + m.optimizerState + m.activations +
                               m.inputs + m.workspace;
            EXPECT_LE(m.peakAllocated, sum + 1);
            EXPECT_GE(m.peakAllocated, m.weights + m.optimizerState + m.gradients);
            EXPECT_GT(m.fragmentation, 0);
            EXPECT_GT(m.cudaContext, 0);
        }
}

TEST(PredictMemory, CheckpointingKeepsBoundariesAndOneSegment) {
    const Graph g = loadModel("zoo:resnet50?image=64");
    ModelAnalysis a(g);
    const PrecisionMemory& pm = a.memoryFor(TrainingPrecision::Fp32);
    ASSERT_GT(a.segmentStart.size(), 5u);  // ~sqrt(L) segments
    EXPECT_NEAR(double(a.segmentStart.size()), std::sqrt(double(a.workingOps)), 1.0);
    const double n = 32;
    double largest = 0;
    for (const BatchPoly& s : pm.segmentSaved) largest = std::max(largest, s.at(n));
    const MemoryBreakdown with =
        MemoryModel(a, TrainingPrecision::Fp32, Optimizer::Sgd, true, 1).at(n, gpu("v100-sxm2-16gb"));
    const MemoryBreakdown without =
        MemoryModel(a, TrainingPrecision::Fp32, Optimizer::Sgd, false, 1).at(n, gpu("v100-sxm2-16gb"));
    EXPECT_DOUBLE_EQ(with.activations, pm.checkpointBoundaries.at(n) + largest);
    EXPECT_LT(with.activations, without.activations);
    EXPECT_LT(with.peakAllocated, without.peakAllocated);
}

TEST(PredictMemory, LargestBatchIsTheLastOneThatFits) {
    const Graph g = loadModel("zoo:bert_base?seq=64");
    TrainingPredictor p(g);
    for (const char* id : {"t4", "a100-sxm4-40gb", "rtx-4090"})
        for (TrainingPrecision prec : {TrainingPrecision::Fp32, TrainingPrecision::AmpFp16})
            for (bool ckpt : {false, true}) {
                SCOPED_TRACE(std::string(id) + " " + trainingPrecisionName(prec) + (ckpt ? " ckpt" : ""));
                TrainingScenario s;
                s.precision = prec;
                s.checkpointing = ckpt;
                s.optimizer = Optimizer::Adam;
                const TrainingPrediction first = p.predict(gpu(id), s, false);
                const int64_t maxBatch = int64_t(first.maxBatch.value);
                ASSERT_GT(maxBatch, 1);
                EXPECT_LE(first.maxBatch.low, first.maxBatch.value);
                EXPECT_GE(first.maxBatch.high, first.maxBatch.value);
                s.batch = maxBatch;
                EXPECT_TRUE(p.predict(gpu(id), s, false).fits);
                s.batch = maxBatch + 1;
                EXPECT_FALSE(p.predict(gpu(id), s, false).fits);
                s.batch = std::max<int64_t>(1, maxBatch / 3);
                EXPECT_TRUE(p.predict(gpu(id), s, false).fits);
            }
}

TEST(PredictMemory, ModelTooLargeForAGpuHasNoBatchThatFits) {
    const Graph g = loadModel("zoo:gpt2_large?seq=64");
    TrainingPredictor p(g);
    TrainingScenario s;
    s.optimizer = Optimizer::Adam;
    const TrainingPrediction r = p.predict(gpu("p4"), s, false);  // 8 GB < 16 B x 774M parameters
    EXPECT_EQ(r.maxBatch.value, 0);
    EXPECT_FALSE(r.fits);
}
