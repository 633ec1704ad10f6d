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

MemoryBreakdown memoryOf(const Graph& g, TrainingPrecision p, Optimizer o, double n, Checkpointing ckpt = Checkpointing::None,
                         int gpus = 1) {
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
    EXPECT_DOUBLE_EQ(memoryOf(g, TrainingPrecision::Fp32, Optimizer::Adam, 8, Checkpointing::None, 4).gradients, 8 * kParams);
}

TEST(PredictMemory, PeakIsBetweenTheModelStatesAndTheSumOfCategories) {
    const Graph g = loadModel("zoo:resnet18?image=64");
    ModelAnalysis a(g);
    for (Optimizer o : {Optimizer::Sgd, Optimizer::Adam})
        for (double n : {1.0, 16.0, 256.0}) {
            const MemoryBreakdown m = MemoryModel(a, TrainingPrecision::AmpFp16, o, Checkpointing::None, 1).at(n, gpu("h100-sxm"));
            const double sum = m.weights + m.castWeightCopies + m.gradients + m.optimizerState + m.activations +
                               m.inputs + m.workspace;
            EXPECT_LE(m.peakAllocated, sum + 1);
            EXPECT_GE(m.peakAllocated, m.weights + m.optimizerState + m.gradients);
            EXPECT_GT(m.fragmentation, 0);
            EXPECT_GT(m.cudaContext, 0);
        }
}

// Four numbered blocks x -> fc -> ReLU -> fc2 and a head, widths D = 64 in fp32: every tensor
// below is 256 B per sample. Linear layers save their input, ReLU its output (the next fc saves the
// same tensor), the batch x is counted as inputs. By hand, with b_k block k's input and a_k its
// ReLU output: without checkpointing b1..b4 and a0..a3 are saved (8 tensors). Checkpointing every
// block keeps the head's b4, the inputs b1..b3 of the blocks up to the last and the rerun block's
// a3 at the last block's backward (5). Every other block (torchtitan wraps the 2nd and 4th): blocks
// 0 and 2 keep a0, b2 and a2, the head b4, and at block 3's backward b1, b3 and a3 (7). Selective
// ops keep each block's first linear output f_k (4, needed only to rerun the ReLU) and b4, then
// b1..b3 and a3 (9: more than none here, as torchtitan's policy does on so small a block).
TEST(PredictMemory, CheckpointingPoliciesKeepWhatPyTorchWould) {
    std::string layers;
    for (int k = 0; k < 4; ++k)
        layers += std::string(k ? "," : "") + R"({"name": ")" + std::to_string(k) +
                  R"(", "layers": [{"name": "fc", "type": "Linear", "out_features": 64},
                     {"name": "act", "type": "ReLU"}, {"name": "fc2", "type": "Linear", "out_features": 64}]})";
    const std::string text = R"({"trainscope_model": 1, "name": "blocks",
        "inputs": [{"name": "x", "shape": ["N", 64]}],
        "layers": [{"name": "blocks", "layers": [)" + layers + R"(]},
                   {"name": "head", "type": "Linear", "out_features": 64}]})";
    const ModelAnalysis a(importJsonModelText(text, "blocks.json"));
    ASSERT_EQ(a.blocks, 4);
    const double tensor = 64 * 4;
    const std::pair<Checkpointing, int> expected[] = {{Checkpointing::None, 8},
                                                      {Checkpointing::Blocks, 5},
                                                      {Checkpointing::EveryOtherBlock, 7},
                                                      {Checkpointing::SelectiveOps, 9}};
    for (const auto& [policy, tensors] : expected)
        for (double n : {1.0, 3.0}) {
            SCOPED_TRACE(std::string(checkpointingName(policy)) + " at batch " + std::to_string(int(n)));
            const MemoryBreakdown m =
                MemoryModel(a, TrainingPrecision::Fp32, Optimizer::Sgd, policy, 1).at(n, gpu("v100-sxm2-16gb"));
            EXPECT_DOUBLE_EQ(m.activations, tensors * tensor * n);
        }
    // What backward reruns: every block op; the 2nd and 4th blocks; each block but its first linear layer.
    auto rerun = [&](Checkpointing c) {
        std::vector<std::string> names;
        for (size_t i = 0; i < a.ops.size(); ++i)
            if (a.plan(c).recomputed[i] && a.ops[i].hasWork()) names.push_back(a.ops[i].name);
        return names;
    };
    EXPECT_TRUE(rerun(Checkpointing::None).empty());
    EXPECT_EQ(rerun(Checkpointing::Blocks).size(), 12u);
    for (const std::string& op : rerun(Checkpointing::EveryOtherBlock))
        EXPECT_TRUE(op.rfind("blocks.1.", 0) == 0 || op.rfind("blocks.3.", 0) == 0) << op;
    EXPECT_EQ(rerun(Checkpointing::EveryOtherBlock).size(), 6u);
    for (const std::string& op : rerun(Checkpointing::SelectiveOps))
        EXPECT_EQ(op.find(".fc/"), std::string::npos) << op;
    EXPECT_EQ(rerun(Checkpointing::SelectiveOps).size(), 8u);
}

// A model without numbered blocks: the block policies fall back to sqrt(L) segments.
TEST(PredictMemory, CheckpointingWithoutBlocksUsesSqrtSegments) {
    const ModelAnalysis a(mlp());
    ASSERT_LT(a.blocks, 2);
    for (Checkpointing c : {Checkpointing::Blocks, Checkpointing::EveryOtherBlock, Checkpointing::SelectiveOps}) {
        EXPECT_TRUE(a.plan(c).fellBack);
        EXPECT_EQ(a.plan(c).recomputed, a.plan(Checkpointing::Sqrt).recomputed);
        EXPECT_EQ(a.planMemory(c, TrainingPrecision::Fp32).peak(4), a.planMemory(Checkpointing::Sqrt, TrainingPrecision::Fp32).peak(4));
    }
}

TEST(PredictMemory, CheckpointingLowersMemoryAndAddsRecomputation) {
    TrainingPredictor p(loadModel("zoo:resnet50?image=64"));
    ASSERT_GT(p.analysis().segmentStart.size(), 5u);  // ~sqrt(L) segments
    EXPECT_NEAR(double(p.analysis().segmentStart.size()), std::sqrt(double(p.analysis().workingOps)), 1.0);
    TrainingScenario s;
    s.batch = 32;
    const TrainingPrediction without = p.predict(gpu("v100-sxm2-16gb"), s, false);
    EXPECT_EQ(without.recomputeMs.value, 0);
    double blocksRecompute = 0;
    for (Checkpointing c : {Checkpointing::Blocks, Checkpointing::EveryOtherBlock, Checkpointing::Sqrt}) {
        SCOPED_TRACE(checkpointingName(c));
        s.checkpointing = c;
        const TrainingPrediction with = p.predict(gpu("v100-sxm2-16gb"), s, false);
        EXPECT_LT(with.memory.activations, without.memory.activations);
        EXPECT_LT(with.memory.peakAllocated, without.memory.peakAllocated);
        EXPECT_GT(with.recomputeMs.value, 0);
        EXPECT_LT(with.recomputeMs.value, without.forwardMs.value * 1.0001);
        if (c == Checkpointing::Blocks) blocksRecompute = with.recomputeMs.value;
        if (c == Checkpointing::EveryOtherBlock) {
            EXPECT_LT(with.recomputeMs.value, blocksRecompute);
        }
    }
}

TEST(PredictMemory, LargestBatchIsTheLastOneThatFits) {
    const Graph g = loadModel("zoo:bert_base?seq=64");
    TrainingPredictor p(g);
    for (const char* id : {"t4", "a100-sxm4-40gb", "rtx-4090"})
        for (TrainingPrecision prec : {TrainingPrecision::Fp32, TrainingPrecision::AmpFp16})
            for (Checkpointing ckpt : {Checkpointing::None, Checkpointing::Blocks, Checkpointing::SelectiveOps}) {
                SCOPED_TRACE(std::string(id) + " " + trainingPrecisionName(prec) + " " + checkpointingName(ckpt));
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

TEST(PredictMemory, AdamsTemporaryFollowsHowTheStepRuns) {
    // The denominator sqrt(v) / c2 + eps: foreach computes it for every tensor at once, a for-loop
    // for one tensor at a time (the largest: fc1's weight), a fused kernel in registers.
    const ModelAnalysis m(mlp());
    const double largest = 4.0 * 256 * 512;
    EXPECT_DOUBLE_EQ(modelStates(m, TrainingPrecision::Fp32, Optimizer::Adam, 1, 0).stepTemporaries, 4 * kParams);
    EXPECT_DOUBLE_EQ(
        modelStates(m, TrainingPrecision::Fp32, Optimizer::AdamW, 1, 0, OptimizerImplementation::ForLoop).stepTemporaries,
        largest);
    EXPECT_DOUBLE_EQ(
        modelStates(m, TrainingPrecision::Fp32, Optimizer::Adam, 1, 0, OptimizerImplementation::Fused).stepTemporaries, 0);
    for (OptimizerImplementation i : kAllOptimizerImplementations)
        EXPECT_DOUBLE_EQ(modelStates(m, TrainingPrecision::Fp32, Optimizer::SgdMomentum, 1, 0, i).stepTemporaries, 0);
    // The predictor passes the scenario's implementation on: a smaller temporary, a lower peak
    // wherever the step is the peak (no activations at batch 1 of a tiny model).
    const GpuDatabase& db = GpuDatabase::builtin();
    TrainingPredictor predictor(mlp());
    TrainingScenario s;
    s.batch = 1;
    s.optimizer = Optimizer::Adam;
    const double foreach = predictor.predict(db.get("a100-sxm4-40gb"), s).peakMemoryBytes.value;
    s.optimizerImplementation = OptimizerImplementation::Fused;
    const double fused = predictor.predict(db.get("a100-sxm4-40gb"), s).peakMemoryBytes.value;
    EXPECT_LT(fused, foreach);
}

TEST(PredictMemory, PersistingGradientsAreAllocatedBesideTheActivations) {
    // Backward frees saved activations as it allocates gradients, so the peak holds part of each.
    // When the gradients persist (accumulated micro-batches add to them; zero_grad that zeroes them)
    // the next forward ends with all of them and every saved activation.
    const ModelAnalysis m(mlp());
    const GpuSpec& a100 = gpu("a100-sxm4-40gb");
    const double n = 64;  // activations (ReLU's [n, 512] output) comparable with the gradients
    const MemoryBreakdown freed = MemoryModel(m, TrainingPrecision::Fp32, Optimizer::Sgd, Checkpointing::None, 1).at(n, a100);
    const MemoryBreakdown kept = MemoryModel(m, TrainingPrecision::Fp32, Optimizer::Sgd, Checkpointing::None, 1, 0,
                                             OptimizerImplementation::Foreach, true)
                                     .at(n, a100);
    EXPECT_GE(kept.peakAllocated, kept.weights + kept.gradients + kept.activations + kept.inputs);
    EXPECT_GT(kept.peakAllocated, freed.peakAllocated);
    EXPECT_LE(kept.peakAllocated - freed.peakAllocated, kept.gradients);
    // Through the predictor: accumulation keeps them, and so does --keep-gradients.
    TrainingPredictor predictor(mlp());
    TrainingScenario s;
    s.batch = 64;
    const double once = predictor.predict(a100, s).memory.peakAllocated;
    s.accumulation = 2;
    EXPECT_DOUBLE_EQ(predictor.predict(a100, s).memory.peakAllocated, kept.peakAllocated);
    s.accumulation = 1;
    s.keepGradients = true;
    EXPECT_DOUBLE_EQ(predictor.predict(a100, s).memory.peakAllocated, kept.peakAllocated);
    EXPECT_GT(kept.peakAllocated, once);
}

TEST(PredictMemory, CrossEntropysBackwardHoldsTwoScoresSizedGradients) {
    // PyTorch's cross_entropy is log_softmax then nll_loss: its backward writes the log-probabilities'
    // gradient, then log_softmax's backward writes the scores' gradient beside it. With Llama 3's
    // 128,256-word vocabulary that pair is the largest transient of the iteration (the LM head's
    // backward holds one scores-sized gradient, a block's far less), so with SGD (no step temporary)
    // the workspace is the cuBLAS workspaces plus two fp32 [N x S, V] tensors and the int64 targets.
    // By hand at N = 2, S = 64; under autocast the loss runs in fp32 too.
    const Graph g = loadModel(std::string(TRAINSCOPE_TEST_DATA_DIR) + "/hf-configs/llama-3-8b.json?seq=64");
    const ModelAnalysis m(g);
    const GpuSpec& h100 = gpu("h100-sxm");
    const double n = 2, scores = n * 64 * 128256 * 4.0, targets = n * 64 * 8.0;
    for (TrainingPrecision p : {TrainingPrecision::Fp32, TrainingPrecision::AmpBf16}) {
        const MemoryBreakdown b = MemoryModel(m, p, Optimizer::Sgd, Checkpointing::None, 1).at(n, h100);
        EXPECT_NEAR(b.workspace - cublasWorkspaceBytes(h100), 2 * scores + targets, 1e-6 * scores)
            << trainingPrecisionName(p);
    }
}
