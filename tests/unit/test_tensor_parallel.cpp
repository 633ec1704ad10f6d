// Tensor parallelism (Megatron-LM's, PyTorch's ColwiseParallel / RowwiseParallel) of models built
// from a Hugging Face config.json: one GPU's shard holds its share of the parameters by hand
// arithmetic from the config, its activations split as Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", section 4.2) count them, each block all-reduces twice
// forward and twice backward, the all-reduces cost what the link model says (checked against XLA's
// measured H100 all-reduces), and predictions count data-parallel replicas, not GPUs.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "collectives_table.h"
#include "parallel_test_support.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/choice/model_defaults.h"
#include "trainscope/predictors/iteration/data_parallel.h"
#include "trainscope/predictors/iteration/training_predictor.h"

using namespace ts;
using namespace ts::predictors;
using partest::bf16Scenario;
using partest::config;
using partest::errorOf;
using partest::gpu;

namespace {

Graph llama3(int tp, int64_t seq = 128) {
    return loadModel(config("llama-3-8b") + "?seq=" + std::to_string(seq) +
                     (tp > 1 ? "&tensor_parallel=" + std::to_string(tp) : ""));
}

// Llama-3-8B's parameters on one GPU of a group of t, from its config.json: each block's q and o
// projections (H x H), k and v (H x 1024: 8 key-value heads of 128) and its three MLP weights
// (H x 14336) divided by t, its two RMSNorm weights whole; the embedding and the untied LM head
// hold 128256 / t rows each; the final norm whole.
double llama3ShardParameters(double t) {
    const double h = 4096, kv = 8 * 128, inner = 14336, vocab = 128256, layers = 32;
    const double block = (2 * h * h + 2 * h * kv + 3 * h * inner) / t + 2 * h;
    return layers * block + 2 * (vocab / t) * h + h;
}

}  // namespace

TEST(TensorParallel, ShardHoldsItsShareOfTheParameters) {
    EXPECT_DOUBLE_EQ(double(llama3(1).parameterCount()), llama3ShardParameters(1));
    EXPECT_DOUBLE_EQ(double(llama3(4).parameterCount()), llama3ShardParameters(4));
    EXPECT_DOUBLE_EQ(double(llama3(8).parameterCount()), llama3ShardParameters(8));
    // The whole model stays known (transformers counts 8,030,261,248): the default goal of 20 tokens
    // per parameter is the model's, not a shard's.
    const Graph shard = llama3(4);
    EXPECT_EQ(shard.modelParameterCount(), 8030261248);
    EXPECT_EQ(shard.shard.group, 4);
    EXPECT_EQ(ModelAnalysis(shard).modelParameters, 8030261248);
    EXPECT_DOUBLE_EQ(scenarioDefaultsFor(shard).goal.tokens, 20.0 * 8030261248);
}

TEST(TensorParallel, EachBlockAllReducesTwiceForwardAndTwiceBackward) {
    const Graph g = llama3(4);
    int forward = 0, backward = 0;
    for (const Operation& op : g.ops) {
        if (op.type != "AllReduce") continue;
        EXPECT_EQ(op.attrInt("group_size", 0), 4) << op.name;
        (op.attrString("pass", "") == "forward" ? forward : backward) += 1;
    }
    // Per block: after the attention's and the MLP's row-parallel layers (forward), before their
    // column-parallel ones (backward); outside: the vocabulary-parallel embedding's output and the
    // LM head's input gradient.
    EXPECT_EQ(forward, 2 * 32 + 1);
    EXPECT_EQ(backward, 2 * 32 + 1);
    EXPECT_EQ(ModelAnalysis(g).tensorParallel, 4);
    EXPECT_EQ(ModelAnalysis(llama3(1)).tensorParallel, 1);
}

TEST(TensorParallel, ActivationsSplitAsKorthikantiEtAlCountThem) {
    // GPT-2 (dropout 0.1 everywhere), 16-bit activations: what each GPU keeps is R + S / t, R the
    // replicated part. Korthikanti et al. count R = 10 s b h bytes per block without sequence
    // parallelism (two LayerNorm inputs, the inputs of the attention's and the MLP's first
    // layers, two 1-byte dropout masks); outside the blocks, the embedding's dropout mask and the
    // final LayerNorm's input and output (the LM head's input), 5 s b h; each LayerNorm's mean
    // and inverse deviation, 8 s b bytes.
    const double s = 128, b = 2, h = 768, layers = 12;
    auto saved = [&](int t) {
        const Graph g = loadModel(config("gpt2") + "?seq=128" + (t > 1 ? "&tensor_parallel=" + std::to_string(t) : ""));
        return ModelAnalysis(g).memoryFor(TrainingPrecision::Bf16Params).savedTotal.at(b);
    };
    const double a1 = saved(1), a2 = saved(2), a4 = saved(4);
    // R + S, R + S / 2, R + S / 4 (the vocabulary's odd 50257 rows round up: a few bytes).
    EXPECT_NEAR((a1 - a2) / (a2 - a4), 2.0, 1e-3);
    const double replicated = 2 * a2 - a1;
    const double expected = (10 * layers + 5) * s * b * h + (2 * layers + 1) * 8 * s * b;
    EXPECT_NEAR(replicated / expected, 1.0, 0.01) << replicated << " vs " << expected;
    EXPECT_LT(a4, a1 / 2.5);  // most of a block's activations are sharded
}

TEST(TensorParallel, SequenceParallelismSplitsTheRest) {
    // With sequence parallelism the norms, dropouts and residual adds run on 1/t of the tokens, so
    // what they keep is split too; left whole is what PyTorch's autograd keeps of the gathered
    // tensors: the inputs of the attention's and the MLP's first layers (4 s b h bytes a block at
    // 16 bits) and the LM head's input (2 s b h). (Megatron-LM gathers them again in backward.)
    const double s = 128, b = 2, h = 768, layers = 12;
    auto saved = [&](const std::string& options) {
        const Graph g = loadModel(config("gpt2") + "?seq=128" + options);
        return ModelAnalysis(g).memoryFor(TrainingPrecision::Bf16Params).savedTotal.at(b);
    };
    const double whole = saved(""), split = saved("&tensor_parallel=4&sequence_parallel=1");
    const double gathered = (4 * layers + 2) * s * b * h;
    EXPECT_NEAR(split / ((whole - gathered) / 4 + gathered), 1.0, 0.01) << split << " of " << whole;
    EXPECT_LT(split, saved("&tensor_parallel=4"));
    EXPECT_NE(errorOf([&] { saved("&sequence_parallel=1"); }).find("needs tensor_parallel above 1"),
              std::string::npos);

    // Checkpointing every block keeps each block's input, the residual stream: an eighth of it on
    // each of 8 GPUs under sequence parallelism, all of it without.
    auto blockInputs = [&](const std::string& options) {
        const ModelAnalysis m(loadModel(config("llama-3-8b") + "?seq=1024&tensor_parallel=8" + options));
        double total = 0;
        for (const BatchPoly& p : m.planMemory(Checkpointing::Blocks, TrainingPrecision::Bf16Params).regionInputs)
            total += p.at(1);
        return total;
    };
    EXPECT_NEAR(blockInputs("&sequence_parallel=1") / blockInputs(""), 1.0 / 8, 1e-3);
}

TEST(TensorParallel, AllReducesCostWhatTheLinkModelSays) {
    // Llama-3-8B on 8 H100 SXM, one sequence of 4096 tokens in bf16: each all-reduce sums
    // 4096 x 4096 x 2 bytes over NVLink through NVSwitch at 900 / 2 GB/s per direction x 0.8, a
    // ring of 2 x 7 steps of 5 us.
    const TrainingPredictor predictor(llama3(8, 4096));
    const TrainingScenario s = bf16Scenario(8, 1);
    const TrainingPrediction r = predictor.predict(gpu("h100-sxm"), s, true);
    ASSERT_TRUE(r.supported) << r.reason;
    EXPECT_EQ(r.tensorParallel, 8);
    const double nvlink = *gpu("h100-sxm").interconnect.nvlinkBandwidthGBs;
    const double bytes = 4096.0 * 4096 * 2;
    const double expectedMs = 2 * 7.0 / 8 * bytes / (nvlink / 2 * 0.8 * 1e9) * 1e3 + 2 * 7 * 5e-3;
    int outputs = 0, gradients = 0;
    for (const LayerTime& l : r.layers) {
        if (l.name.find("layers.3.") == std::string::npos) continue;
        if (l.name.find("all_reduce_grad") != std::string::npos) {
            EXPECT_DOUBLE_EQ(l.forwardMs.value, 0) << l.name;
            EXPECT_NEAR(l.backwardMs.value, expectedMs, 1e-9) << l.name;
            ++gradients;
        } else if (l.name.find("all_reduce") != std::string::npos) {
            EXPECT_NEAR(l.forwardMs.value, expectedMs, 1e-9) << l.name;
            EXPECT_DOUBLE_EQ(l.backwardMs.value, 0) << l.name;
            ++outputs;
        }
    }
    EXPECT_EQ(outputs, 2);
    EXPECT_EQ(gradients, 2);
    // 2 x 33 forward and 2 x 33 backward all-reduces of 0.23 ms: the iteration holds them all.
    EXPECT_GT(r.forwardMs.value, 33 * expectedMs);
    EXPECT_GT(r.backwardMs.value, 33 * expectedMs);

    // Sequence parallelism: an all-gather and a reduce-scatter in each pass, each half an all-reduce.
    const TrainingPredictor sp(loadModel(config("llama-3-8b") + "?seq=4096&tensor_parallel=8&sequence_parallel=1"));
    const TrainingPrediction q = sp.predict(gpu("h100-sxm"), s, true);
    ASSERT_TRUE(q.supported) << q.reason;
    int collectives = 0;
    for (const LayerTime& l : q.layers) {
        if (l.name.find("layers.3.") == std::string::npos || l.name.find("all_reduce") == std::string::npos) continue;
        EXPECT_NEAR(l.forwardMs.value, expectedMs / 2, 1e-9) << l.name;
        EXPECT_NEAR(l.backwardMs.value, expectedMs / 2, 1e-9) << l.name;
        ++collectives;
    }
    EXPECT_EQ(collectives, 4);
    EXPECT_LT(q.forwardMs.value, r.forwardMs.value);  // the norms on an eighth of the tokens
}

TEST(TensorParallel, AllReduceOfTensorParallelMessagesMatchesXlasMeasuredH100Table) {
    // The messages tensor parallelism sums (8 to 128 MiB: 1,000 to 8,000 tokens of a 4,096-wide
    // model in bf16) over a group of 8 H100s: within 10% of XLA's measured all-reduce throughput
    // (bytes of the operand per second). Groups of 2 and 4 are in docs/prediction.md.
    if (!std::filesystem::exists(test_data::collectivesTablePath()))
        GTEST_SKIP() << test_data::collectivesTablePath() << " is not there";
    std::string reason;
    const auto link = inNodeGroupLink(gpu("h100-sxm"), 8, reason);
    ASSERT_TRUE(link) << reason;
    int compared = 0;
    for (const test_data::MeasuredCollective& row : test_data::measuredCollectives("sm_90", 8)) {
        if (row.opcode != "all-reduce" || row.bytes < 8.0 * (1 << 20) || row.bytes > 128.0 * (1 << 20)) continue;
        const double predicted = row.bytes / (allReduceMs(row.bytes, 8, *link) * 1e-3);
        EXPECT_NEAR(predicted / row.bytesPerSecond, 1.0, 0.10) << row.bytes << " B";
        ++compared;
    }
    EXPECT_GE(compared, 4);
}

TEST(TensorParallel, PredictionsCountReplicasAndShardTheModelStates) {
    const TrainingPredictor predictor(llama3(4, 1024));
    const TrainingScenario s = bf16Scenario(8, 2);  // 2 replicas of 4 on one NVSwitch board
    const TrainingPrediction r = predictor.predict(gpu("h100-sxm"), s);
    ASSERT_TRUE(r.supported) << r.reason;
    EXPECT_EQ(r.interconnect, "nvlink");
    EXPECT_NEAR(r.samplesPerS.value, 1000.0 * 2 * 2 / r.iterationMs.value, 1e-9);
    EXPECT_NEAR(r.tokensPerS.value, r.samplesPerS.value * 1024, 1e-6);
    // bf16 weights, and the fp32 master copy with AdamW's two fp32 states (12 bytes), of the shard.
    const double shard = llama3ShardParameters(4);
    EXPECT_NEAR(r.memory.weights, 2 * shard, 1e6);
    EXPECT_DOUBLE_EQ(r.memory.optimizerState, 12 * shard);
    // Against one group: the replicas' gradient all-reduce (the shard's, over NVLink) is all it adds.
    EXPECT_GT(r.scalingEfficiency.value, 0.0);
    EXPECT_LT(r.scalingEfficiency.value, 1.0);
    EXPECT_GT(r.communicationMs.value, 0.0);
}

TEST(TensorParallel, RefusesGroupsItCannotForm) {
    // Whole heads and key-value groups on every GPU.
    EXPECT_NE(errorOf([] { llama3(3); }).find("does not divide the 32 attention heads"), std::string::npos);
    EXPECT_NE(errorOf([] { llama3(16); }).find("does not divide the 8 key-value heads"), std::string::npos);
    EXPECT_NE(errorOf([] { loadModel(config("bert-base-uncased") + "?tensor_parallel=2"); })
                  .find("applies to the decoder families"),
              std::string::npos);
    // GPUs in whole groups, a group inside one node.
    const TrainingPredictor predictor(llama3(8));
    TrainingScenario s;
    s.dataParallel.gpus = 12;
    EXPECT_NE(errorOf([&] { predictor.predict(gpu("h100-sxm"), s); }).find("must be a multiple of it"),
              std::string::npos);
    s.dataParallel.gpus = 8;
    s.dataParallel.gpusPerNode = 4;
    EXPECT_NE(errorOf([&] { predictor.predict(gpu("h100-sxm"), s); }).find("stays inside one node"),
              std::string::npos);
}

TEST(TensorParallel, MixtureOfExpertsShardsEachExpertAndKeepsTheRouter) {
    // Mixtral-8x7B: every GPU routes every token (the router whole: 4096 x 8, stored [in, out]) and
    // holds a quarter of each expert's 14336 features.
    const Graph g = loadModel(config("mixtral-8x7b") + "?seq=128&tensor_parallel=4");
    int routers = 0, experts = 0;
    for (const Value& v : g.values) {
        if (v.kind != ValueKind::Parameter) continue;
        if (v.name.find("layers.0.mlp.gate.weight") != std::string::npos) {
            EXPECT_EQ(v.shape, (Shape{Dim(4096), Dim(8)}));
            ++routers;
        }
        if (v.name.find("layers.0.mlp.experts.gate_up_proj") != std::string::npos) {
            EXPECT_EQ(v.shape, (Shape{Dim(8), Dim(2 * 14336 / 4), Dim(4096)}));
            ++experts;
        }
    }
    EXPECT_EQ(routers, 1);
    EXPECT_EQ(experts, 1);
}
