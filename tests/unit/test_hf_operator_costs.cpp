// The costs of the transformer operators Hugging Face configs build, against formulas written here: the
// attention by backend, with sliding windows and soft caps, and mixture-of-experts layers (Mixtral,
// Qwen3-MoE, Qwen2-MoE's shared expert, DeepSeek-V3's latent attention and shared experts, GPT-OSS's sinks
// and clamped experts, QLoRA of the experts), and the loss's log-probabilities by dtype. test_hf_config.cpp has
// the reader, the parameter counts and the families' structure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "hf_config_test_support.h"
#include "trainscope/core/builder.h"
#include "trainscope/core/fine_tuning.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/training_predictor.h"

using namespace hftest;

// Windows and soft caps in the attention's costs, by hand at sequence 16 with a window of 4: each head's
// queries see 1, 2, 3, then 4 keys (58 pairs, against the causal triangle's 136). flash-attn's kernel
// (?attention=flash) computes those; transformers' sdpa, with the window as a mask, runs the efficient
// kernel over all 256 pairs, and at sequence 4 the window is the causal mask (no mask, flash). Eager
// (Gemma 2's default) computes every score, caps them (divide, tanh, multiply: 3 more per score forward,
// 5 backward) and keeps tanh's output beside the probabilities; in a bf16 model the probabilities are
// kept twice, in fp32 (the softmax's) and in bf16 (the product's).
TEST(HfConfig, SlidingWindowAndSoftcapCosts) {
    const double N = 2, S = 16, heads = 4, d = 16;
    const double windowed = N * heads * 58, causal = N * heads * 136, all = N * heads * S * S;
    auto sdpa = [&](const std::map<std::string, std::string>& options, int64_t seq, int nth) {
        const ts::Graph g = load(kSmallGemma2, options);
        const ts::ModelCosts c = ts::computeCosts(g, int64_t(N), seq);
        return layerOf(g, c, "ScaledDotProductAttention", nth).cost;
    };
    // Layer 0 slides, layer 1 does not; the cap adds 3 per score.
    EXPECT_DOUBLE_EQ(sdpa({{"attention", "flash"}}, 16, 0).forwardFlops, 4 * windowed * d + 9 * windowed);
    EXPECT_DOUBLE_EQ(sdpa({{"attention", "flash"}}, 16, 1).forwardFlops, 4 * causal * d + 9 * causal);
    EXPECT_DOUBLE_EQ(sdpa({{"attention", "efficient"}}, 16, 0).forwardFlops, 4 * all * d + 10 * all);  // + mask
    std::string noCap = kSmallGemma2;
    noCap.insert(noCap.size() - 1, R"(, "attn_logit_softcapping": null, "final_logit_softcapping": null)");
    noCap.replace(noCap.find("\"gemma2\""), 8, "\"gemma3_text\"");
    noCap.replace(noCap.find("Gemma2ForCausalLM"), 17, "Gemma3ForCausalLM");
    noCap.insert(noCap.size() - 1, R"(, "layer_types": ["sliding_attention", "full_attention"])");
    {
        const ts::Graph g = load(noCap, {{"seq", "16"}});  // sdpa: layer 0 the efficient kernel with the mask
        const ts::ModelCosts c = ts::computeCosts(g, int64_t(N), 16);
        EXPECT_DOUBLE_EQ(layerOf(g, c, "ScaledDotProductAttention", 0).cost.forwardFlops, 4 * all * d + 7 * all);
        EXPECT_DOUBLE_EQ(layerOf(g, c, "ScaledDotProductAttention", 1).cost.forwardFlops, 4 * causal * d + 6 * causal);
        const ts::ModelCosts c4 = ts::computeCosts(g, int64_t(N), 4);  // the window holds the whole sequence
        const double tri = N * heads * 10;
        EXPECT_DOUBLE_EQ(layerOf(g, c4, "ScaledDotProductAttention", 0).cost.forwardFlops, 4 * tri * d + 6 * tri);
        // The time model runs the masked layer on the efficient kernel, the other on flash.
        const ts::predictors::ModelAnalysis a(g, 16);
        int seen = 0;
        for (const auto& op : a.ops) {
            if (op.kind != ts::predictors::OpKind::Attention) continue;
            EXPECT_EQ(op.attentionBackend, seen == 0 ? ts::predictors::AttentionBackend::Efficient
                                                     : ts::predictors::AttentionBackend::Flash);
            ++seen;
        }
        EXPECT_EQ(seen, 2);
    }
    // Eager: every score, the causal and window mask add, the cap.
    const ts::OpCost eager = sdpa({}, 16, 0);
    EXPECT_DOUBLE_EQ(eager.forwardFlops, 4 * all * d + 10 * all);
    EXPECT_DOUBLE_EQ(eager.backwardFlops, 8 * all * d + 9 * all);
    const ts::Graph g = load(kSmallGemma2);
    const ts::predictors::ModelAnalysis a(g, 16);
    auto savedBy = [&](ts::TrainingPrecision p) {
        double bytes = 0;
        for (const ts::predictors::SavedActivation& s : a.memoryFor(p).saved)
            if (g.ops[size_t(s.freedAfter)].type == "ScaledDotProductAttention" &&
                g.ops[size_t(s.freedAfter)].modulePath == "model.layers.0.self_attn")
                bytes += s.bytes.at(N);
        return bytes;
    };
    const double q = N * heads * S * d;  // elements of q, and of k and v repeated to every head
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Fp32), 3 * q * 4 + all * 4 + all * 4);
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Bf16Params), 3 * q * 2 + all * 4 + all * 2 + all * 2);
}

// FlashAttention-style kernels compute the causal triangle and keep the output and a logsumexp; the math
// backend computes every score, masks, and keeps the probabilities.
TEST(HfConfig, AttentionCostsByBackend) {
    const double N = 2, S = 16, heads = 4, kv = 2, d = 16;
    const double causalPairs = N * heads * S * (S + 1) / 2, allPairs = N * heads * S * S;
    const ts::Graph flash = load(kSmallLlama, {{"attention", "flash"}});
    const ts::ModelCosts fc = ts::computeCosts(flash, int64_t(N), int64_t(S));
    const ts::LayerCost& f = layerOf(flash, fc, "ScaledDotProductAttention");
    // q k^T and p v (2 * pairs * d each), scale and softmax (6 per score).
    EXPECT_DOUBLE_EQ(f.cost.forwardFlops, 4 * causalPairs * d + 6 * causalPairs);
    // dP, dQ, dK, dV (2 * pairs * d each), softmax backward (4), recomputed scores (2 * pairs * d + 2).
    EXPECT_DOUBLE_EQ(f.cost.backwardFlops, 10 * causalPairs * d + 6 * causalPairs);
    const double q = N * heads * S * d * 4, kvBytes = N * kv * S * d * 4, lse = N * heads * S * 4;
    EXPECT_DOUBLE_EQ(f.activationBytes, q + 2 * kvBytes + q + lse);  // q, k, v, output, logsumexp

    const ts::Graph math = load(kSmallLlama, {{"attention", "math"}});
    const ts::ModelCosts mc = ts::computeCosts(math, int64_t(N), int64_t(S));
    const ts::LayerCost& m = layerOf(math, mc, "ScaledDotProductAttention");
    EXPECT_DOUBLE_EQ(m.cost.forwardFlops, 4 * allPairs * d + 7 * allPairs);  // + the causal mask add
    EXPECT_DOUBLE_EQ(m.cost.backwardFlops, 8 * allPairs * d + 4 * allPairs);
    // q, k and v repeated to every query head, and the [S, S] probabilities.
    EXPECT_DOUBLE_EQ(m.activationBytes, 3 * q + allPairs * 4);
    EXPECT_GT(mc.totals.activationBytes, fc.totals.activationBytes);
}

// GPT-OSS, by hand at sequence 16. Its eager attention computes every score, adds the causal (and window)
// mask, concatenates the sinks and subtracts the row maximum (one more per score, and two more passes over
// the scores than without sinks), and keeps one probabilities tensor in the model's dtype (Gemma 2's eager
// keeps an fp32 one and its bf16 copy). Its experts add the biases (2I + H per route) and run the clamped
// SwiGLU (11 per inner element forward, 16 backward) whose kernels keep 3 more [routes, I] tensors.
TEST(HfConfig, GptOssSinksAndClampedExpertsCosts) {
    const int64_t N = 2, S = 16, H = 64, I = 176, E = 4, K = 2;
    const double heads = 4, d = 16, all = double(N) * heads * S * S;
    const ts::Graph g = load(kSmallGptOss);
    const ts::ModelCosts c = ts::computeCosts(g, N, S);
    for (int layer : {0, 1})  // windowed or not, eager computes all of them
        EXPECT_DOUBLE_EQ(layerOf(g, c, "ScaledDotProductAttention", layer).cost.forwardFlops, 4 * all * d + 8 * all);
    const ts::predictors::ModelAnalysis a(g, S);
    auto savedBy = [&](ts::TrainingPrecision p, const std::string& type) {
        double bytes = 0;
        for (const ts::predictors::SavedActivation& sa : a.memoryFor(p).saved)
            if (g.ops[size_t(sa.freedAfter)].type == type &&
                g.ops[size_t(sa.freedAfter)].modulePath.rfind("model.layers.0.", 0) == 0)
                bytes += sa.bytes.at(double(N));
        return bytes;
    };
    const double q = double(N) * heads * S * d;  // elements of q, and of k and v repeated to every head
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Fp32, "ScaledDotProductAttention"), 3 * q * 4 + all * 4);
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Bf16Params, "ScaledDotProductAttention"), 3 * q * 2 + all * 2);

    // The sinks' two passes, against the same attention without them.
    auto attentionCost = [](bool sinks) {
        ts::ModelBuilder b("sdpa");
        int q = b.input("q", {ts::Dim::batch(), 4, 16, 16});
        int k = b.input("k", {ts::Dim::batch(), 4, 16, 16});
        std::vector<int> in{q, k, k};
        if (sinks) in.insert(in.end(), {-1, b.parameter("attn", "sinks", {4})});
        const int out =
            b.op1("ScaledDotProductAttention", in, {{"backend", std::string("math")}, {"causal", int64_t{1}}}, "attn");
        const ts::Graph g = b.finish({out});
        return ts::computeCosts(g, 2, 16).layers.front().cost;
    };
    const double scoreBytes = all * 4;
    EXPECT_DOUBLE_EQ(attentionCost(true).bytesWritten - attentionCost(false).bytesWritten, 2 * scoreBytes);
    EXPECT_DOUBLE_EQ(attentionCost(true).bytesRead - attentionCost(false).bytesRead, 2 * scoreBytes + 4 * 4);

    const double tokens = double(N * S), routes = tokens * K;
    const ts::LayerCost& experts = layerOf(g, c, "MixtureOfExperts");
    EXPECT_DOUBLE_EQ(experts.cost.forwardFlops,
                     6 * routes * H * I + routes * (11 * I + 2 * H) + tokens * E + routes * (2 * I + H));
    EXPECT_DOUBLE_EQ(experts.cost.backwardFlops, 12 * routes * H * I + routes * (16 * I + 3 * H));
    const double savedPerRoute = H + 2 * I + I + I + 3 * I + H;
    EXPECT_DOUBLE_EQ(experts.activationBytes, routes * (savedPerRoute * 4 + 12));
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Bf16Params, "MixtureOfExperts"), routes * (savedPerRoute * 2 + 12));
}

// A sparse MoE layer, by hand: the router (a 64 -> 4 product, its softmax in fp32) and the experts as
// one operator whose every route (2 per token) computes a gate-up product (64 x 352), the gated
// activation (5 per inner element), the down product (176 x 64), the scale and the sum (2 per output
// element), plus top-k over the 4 probabilities; all 4 experts' weights are parameters, read once.
// Autograd keeps per route the gathered token, the gate-up output, the activation, the product, the
// down output (at the model's dtype) and the route's probability and index.
TEST(HfConfig, MixtureOfExpertsCostsFollowTheRoutesNotTheExperts) {
    const int64_t N = 2, S = 16, H = 64, I = 176, E = 4, K = 2;
    const ts::Graph g = load(kSmallMixtral);
    const double attention = 2.0 * H * H + 2.0 * H * 32, norms = 2.0 * H;  // q and o, k and v (2 heads of 16)
    const double perLayer = attention + norms + H * E + 3.0 * E * H * I;
    EXPECT_EQ(g.parameterCount(), int64_t(2 * 1000 * H + 2 * perLayer + H));
    const ts::ModelCosts c = ts::computeCosts(g, N, S);
    const double tokens = double(N * S), routes = tokens * K;
    const ts::LayerCost& experts = layerOf(g, c, "MixtureOfExperts");
    EXPECT_EQ(g.ops[size_t(experts.op)].modulePath, "model.layers.0.mlp.experts");
    EXPECT_DOUBLE_EQ(experts.cost.forwardFlops, 6 * routes * H * I + routes * (5 * I + 2 * H) + tokens * E);
    EXPECT_DOUBLE_EQ(experts.cost.backwardFlops, 12 * routes * H * I + routes * (8 * I + 3 * H));
    const double savedPerRoute = H + 2 * I + I + I + H;
    EXPECT_DOUBLE_EQ(experts.activationBytes, routes * (savedPerRoute * 4 + 12));
    const ts::predictors::ModelAnalysis a(g, S);
    auto savedBy = [&](ts::TrainingPrecision p) {
        double bytes = 0;
        for (const ts::predictors::SavedActivation& sa : a.memoryFor(p).saved)
            if (sa.freedAfter == experts.op) bytes += sa.bytes.at(double(N));
        return bytes;
    };
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Fp32), routes * (savedPerRoute * 4 + 12));
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Bf16Params), routes * (savedPerRoute * 2 + 12));
    // Under autocast the experts' products run in 16 bits: a 16-bit copy of every expert's weights.
    EXPECT_EQ(a.ops[size_t(experts.op)].kind, ts::predictors::OpKind::Gemm);
    EXPECT_GE(a.memoryFor(ts::TrainingPrecision::AmpBf16).castWeightBytes, 2 * 2 * 3.0 * E * H * I);
}

// Qwen3-MoE: dense MLPs where mlp_only_layers and decoder_sparse_step say, experts elsewhere; the
// top-k renormalisation where norm_topk_prob asks for it.
TEST(HfConfig, Qwen3MoeLayersFollowTheSparseStep) {
    auto experts = [](const ts::Graph& g) {
        std::vector<std::string> paths;
        for (const ts::Operation& op : g.ops)
            if (op.type == "MixtureOfExperts") paths.push_back(op.modulePath);
        return paths;
    };
    const std::string open = kSmallQwen3Moe.substr(0, kSmallQwen3Moe.size() - 1);
    EXPECT_EQ(experts(load(kSmallQwen3Moe)),
              (std::vector<std::string>{"model.layers.0.mlp.experts", "model.layers.1.mlp.experts"}));
    EXPECT_EQ(experts(load(open + R"(, "decoder_sparse_step": 2})")),
              (std::vector<std::string>{"model.layers.1.mlp.experts"}));
    const ts::Graph dense0 = load(open + R"(, "mlp_only_layers": [0], "norm_topk_prob": true})");
    EXPECT_EQ(experts(dense0), (std::vector<std::string>{"model.layers.1.mlp.experts"}));
    EXPECT_TRUE(hasModule(dense0, "model.layers.0.mlp.gate_proj"));
    for (const ts::Operation& op : dense0.ops) {
        if (op.type == "MixtureOfExperts") {
            EXPECT_EQ(op.attrInt("normalize", 0), 1);
        }
    }
    for (const ts::Operation& op : load(kSmallQwen3Moe).ops) {
        if (op.type == "MixtureOfExperts") {
            EXPECT_EQ(op.attrInt("normalize", 1), 0);
        }
    }
}

// What a user asks of an MoE model: more experts at the same top-k hold more weights, gradients and
// optimizer state but do the same work per token. In a bf16 model at a batch whose products outweigh
// the experts' weights (32 x 1024 tokens), the forward and backward passes slow only by the extra
// weights' reads and gradient writes, while the optimizer's step and the memory grow with the experts.
// Qwen2-MoE's sparse block as its modeling code runs: the router and the routed experts, then a shared expert
// (a SwiGLU MLP every token takes) scaled by sigmoid(shared_expert_gate(x)) and added. By hand: the shared
// expert's weights (3 x 64 x 96) and gate (64) per layer, its FLOPs (2 x tokens x 3 x 64 x 96 forward).
TEST(HfConfig, Qwen2MoeAddsAGatedSharedExpert) {
    const std::string config = R"({"architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe",
      "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "num_key_value_heads": 2, "intermediate_size": 176, "moe_intermediate_size": 48,
      "shared_expert_intermediate_size": 96, "num_experts": 4, "num_experts_per_tok": 2})";
    const ts::Graph g = load(config);
    for (const char* path : {"model.layers.0.mlp.gate", "model.layers.0.mlp.experts", "model.layers.0.mlp.shared_expert.gate_proj",
                             "model.layers.0.mlp.shared_expert.down_proj", "model.layers.1.mlp.shared_expert_gate"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    const int64_t H = 64, V = 1000, E = 4, I = 48, shared = 96, d = 16;
    const int64_t attention = H * 4 * d + 4 * d + 2 * (H * 2 * d + 2 * d) + 4 * d * H;  // q, k, v with biases; o
    const int64_t layer = attention + 2 * H + H * E + 3 * E * H * I + 3 * H * shared + H;
    EXPECT_EQ(g.parameterCount(), 2 * V * H + 2 * layer + H);
    const ts::ModelCosts c = ts::computeCosts(g, 2, 16);
    const double tokens = 32;
    double sharedFlops = 0;
    for (const ts::LayerCost& l : c.layers)
        if (g.ops[size_t(l.op)].modulePath.rfind("model.layers.0.mlp.shared_expert.", 0) == 0 &&
            g.ops[size_t(l.op)].type == "MatMul")
            sharedFlops += l.cost.forwardFlops;
    EXPECT_DOUBLE_EQ(sharedFlops, 2 * tokens * 3 * H * shared);
    bool sigmoid = false;
    for (const ts::Operation& op : g.ops) sigmoid |= op.type == "Sigmoid" && op.modulePath == "model.layers.0.mlp.shared_expert_gate";
    EXPECT_TRUE(sigmoid);
    // Tensor parallelism divides the shared expert's width too, and refuses a degree that does not divide it.
    EXPECT_NE(errorOf(config, {{"tensor_parallel", "32"}}).find("attention heads"), std::string::npos);
    std::string odd = config;
    const std::string width = "\"shared_expert_intermediate_size\": 96";
    odd.replace(odd.find(width), width.size(), "\"shared_expert_intermediate_size\": 97");
    EXPECT_NE(errorOf(odd, {{"tensor_parallel", "2"}}).find("features of the shared expert"), std::string::npos);
    const ts::Graph shard = load(config, {{"tensor_parallel", "2"}});
    const int w = shard.findValue("model.layers.0.mlp.shared_expert.gate_proj.weight");
    ASSERT_GE(w, 0);
    EXPECT_EQ(ts::numel(shard.values[size_t(w)].shape).constant(), H * shared / 2);
}

// DeepSeek-V3 as DeepseekV3Attention and DeepseekV3MoE run: the query through q_a_proj, q_a_layernorm and
// q_b_proj, keys and values from the 512-feature latent (kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj), heads
// of 128 + 64 rotated features for q and k and 128 for v, on the efficient kernel (PyTorch's flash kernel takes
// no narrower value heads); the first three layers dense, the rest 256 sigmoid-scored experts (8 a token) and
// one shared expert of 2048.
TEST(HfConfig, DeepseekV3LatentAttentionAndSharedExperts) {
    const ts::Graph g = ts::loadModel(kConfigs + "deepseek-v3.json?seq=64");
    for (const char* path : {"model.layers.0.self_attn.q_a_proj", "model.layers.0.self_attn.q_a_layernorm",
                             "model.layers.0.self_attn.q_b_proj", "model.layers.0.self_attn.kv_a_proj_with_mqa",
                             "model.layers.0.self_attn.kv_a_layernorm", "model.layers.0.self_attn.kv_b_proj",
                             "model.layers.2.mlp.down_proj", "model.layers.3.mlp.experts",
                             "model.layers.3.mlp.shared_experts.down_proj", "model.layers.60.mlp.gate"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    EXPECT_FALSE(hasModule(g, "model.layers.3.mlp.down_proj"));
    const auto elements = [&](const std::string& name) {
        const int v = g.findValue(name);
        return v < 0 ? int64_t{-1} : ts::numel(g.values[size_t(v)].shape).constant();
    };
    EXPECT_EQ(elements("model.layers.0.self_attn.kv_a_proj_with_mqa.weight"), 7168 * (512 + 64));
    EXPECT_EQ(elements("model.layers.0.self_attn.kv_b_proj.weight"), 512 * 128 * (128 + 128));
    EXPECT_EQ(elements("model.layers.0.self_attn.q_b_proj.weight"), 1536 * 128 * 192);
    EXPECT_EQ(elements("model.layers.3.mlp.shared_experts.gate_proj.weight"), 7168 * 2048);
    int routers = 0;
    for (const ts::Operation& op : g.ops) routers += op.type == "Sigmoid" && op.modulePath == "model.layers.3.mlp.gate";
    EXPECT_EQ(routers, 1);
    // One layer's attention at batch 1 and 64 tokens: the causal pairs, q k^T over 192 features and p v over 128.
    const ts::ModelCosts c = ts::computeCosts(g, 1, 64);
    const ts::LayerCost& a = layerOf(g, c, "ScaledDotProductAttention");
    EXPECT_EQ(g.ops[size_t(a.op)].attrString("backend", ""), "efficient");
    const double pairs = 128.0 * 64 * 65 / 2;
    EXPECT_DOUBLE_EQ(a.cost.forwardFlops, 2 * pairs * 192 + 2 * pairs * 128 + 6 * pairs);
    EXPECT_EQ(a.outputShape, (std::vector<int64_t>{1, 128, 64, 128}));
    EXPECT_NE(errorOf(R"({"model_type": "deepseek_v3", "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128, "qk_rope_head_dim": 7})")
                  .find("\"qk_rope_head_dim\" must be even"),
              std::string::npos);
    try {
        ts::loadModel(kConfigs + "deepseek-v3.json?tensor_parallel=8");
        ADD_FAILURE() << "tensor parallelism of the latent attention accepted";
    } catch (const ts::ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("latent attention is not modelled"), std::string::npos) << e.what();
    }
}

TEST(HfConfig, MoreExpertsAddWeightsNotWorkPerToken) {
    const std::string sized = R"({"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 1024,
        "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 2816,
        "num_experts_per_tok": 2, "num_local_experts": )";
    const ts::GpuSpec& h100 = ts::GpuDatabase::builtin().get("h100-sxm");
    ts::predictors::TrainingScenario s;
    s.batch = 32;
    s.precision = ts::TrainingPrecision::Bf16Params;
    s.optimizer = ts::predictors::Optimizer::AdamW;
    auto predict = [&](int experts) {
        const ts::predictors::TrainingPredictor p(load(sized + std::to_string(experts) + "}", {{"seq", "1024"}}), 1024);
        return p.predict(h100, s, false);
    };
    const auto eight = predict(8), thirtyTwo = predict(32);
    EXPECT_LT(thirtyTwo.forwardMs.value + thirtyTwo.backwardMs.value,
              (eight.forwardMs.value + eight.backwardMs.value) * 1.25);
    EXPECT_GT(thirtyTwo.optimizerMs.value, eight.optimizerMs.value * 3);
    EXPECT_GT(thirtyTwo.memory.optimizerState, eight.memory.optimizerState * 3);
    EXPECT_GT(thirtyTwo.memory.weights, eight.memory.weights * 3);
    EXPECT_GT(thirtyTwo.memory.gradients, eight.memory.gradients * 3);
}

// QLoRA on an MoE model, as bitsandbytes and PEFT treat transformers 5's modules: every linear layer of
// the blocks in NF4 (those LoRA adapts: all of them by default, or only those named), the experts' 3-D
// weights in NF4 too, the router (a bare weight, no nn.Linear) neither adapted nor quantised.
TEST(HfConfig, QloraQuantisesTheExpertsAndLeavesTheRouter) {
    const ts::Graph base = load(kSmallMixtral);
    for (const std::vector<std::string>& targets : {std::vector<std::string>{}, std::vector<std::string>{"q_proj"}}) {
        ts::LoraOptions o;
        o.rank = 4;
        o.qlora = true;
        o.targets = targets;
        const ts::Graph g = ts::withLora(base, o);
        int64_t adapters = 0;
        for (const ts::Value& v : g.values) {
            if (v.kind != ts::ValueKind::Parameter) continue;
            if (v.adapter) {
                adapters += v.shape[0].constant() * v.shape[1].constant();
                EXPECT_EQ(v.name.find("mlp.gate"), std::string::npos) << v.name;
                continue;
            }
            const bool linearOrExperts = v.name.find("_proj") != std::string::npos;
            EXPECT_EQ(v.nf4, linearOrExperts) << v.name;
        }
        // q, k, v, o of 2 layers, 64 wide (k and v 32 out), rank 4: (64 + out) x 4 each.
        const int64_t all = 2 * 4 * ((64 + 64) * 2 + (64 + 32) * 2);
        EXPECT_EQ(adapters, targets.empty() ? all : 2 * 4 * (64 + 64)) << targets.size();
    }
}

// The operator refuses what is not a sparse block, naming the problem: weights that do not pair, a
// router of another width, more experts per token than there are.
TEST(HfConfig, MixtureOfExpertsRefusesInconsistentShapes) {
    auto refusal = [](int64_t experts, int64_t routerWidth, int64_t inner, int64_t topK) -> std::string {
        ts::ModelBuilder b("moe");
        int x = b.input("x", {ts::Dim::batch(), 8, 16});
        int probs = b.input("probs", {ts::Dim::batch(), 8, routerWidth});
        int gateUp = b.parameter("experts", "gate_up_proj", {experts, 2 * inner, 16});
        int down = b.parameter("experts", "down_proj", {experts, 16, 24});
        try {
            b.op1("MixtureOfExperts", {x, probs, gateUp, down}, {{"top_k", topK}});
        } catch (const ts::ShapeError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(refusal(4, 4, 24, 2), "");
    EXPECT_NE(refusal(4, 4, 20, 2).find("are not [E, 2I, H] and [E, H, I]"), std::string::npos);
    // GPT-OSS's layout ([E, H, 2I], [E, I, H]) and biases.
    auto transposed = [](int64_t downInner, int64_t biasWidth) -> std::string {
        ts::ModelBuilder b("moe");
        int x = b.input("x", {ts::Dim::batch(), 8, 16});
        int probs = b.input("probs", {ts::Dim::batch(), 8, 4});
        int gateUp = b.parameter("experts", "gate_up_proj", {4, 16, 48});
        int down = b.parameter("experts", "down_proj", {4, downInner, 16});
        int bias = b.parameter("experts", "gate_up_proj_bias", {4, biasWidth});
        try {
            b.op1("MixtureOfExperts", {x, probs, gateUp, down, bias},
                  {{"top_k", int64_t{2}}, {"transposed", int64_t{1}}, {"activation", std::string("ClampedSwiglu")}});
        } catch (const ts::ShapeError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(transposed(24, 48), "");
    EXPECT_NE(transposed(20, 48).find("are not [E, H, 2I] and [E, I, H]"), std::string::npos);
    EXPECT_NE(transposed(24, 24).find("gate-up bias [4, 24] is not [E, 2I] = [4, 48]"), std::string::npos);
    EXPECT_NE(refusal(4, 5, 24, 2).find("router probabilities"), std::string::npos);
    EXPECT_NE(refusal(4, 4, 24, 5).find("top_k 5 is not between 1 and the 4 experts"), std::string::npos);
}

// Eager attention's probabilities, by the precision: BERT's (and BART's, GPT-2's) softmax takes no dtype, so it
// computes them in the scores' dtype (fp32 under autocast, which runs softmax in fp32; bf16 in a bf16 model), where
// Llama's asks for fp32 and casts them to the model's dtype for the product with v. With dropout the product keeps
// the dropped probabilities in the model's dtype beside the one-byte mask; without, it keeps the cast copy where the
// probabilities are wider than the model's dtype. By hand at batch 2, sequence 16, 4 heads of 16.
TEST(HfConfig, EagerAttentionKeepsItsProbabilitiesInTheSoftmaxsDtype) {
    const double N = 2, S = 16, heads = 4, d = 16, pairs = N * heads * S * S, qkv = 3 * N * heads * S * d;
    auto attentionSaved = [&](const ts::Graph& g, ts::TrainingPrecision p) {
        const ts::predictors::ModelAnalysis a(g, int64_t(S));
        double bytes = 0;
        for (const ts::predictors::SavedActivation& sa : a.memoryFor(p).saved)
            if (g.ops[size_t(sa.freedAfter)].type == "ScaledDotProductAttention") bytes += sa.bytes.at(N);
        return bytes / 2;  // per layer
    };
    using P = ts::TrainingPrecision;
    const std::string bert = R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "vocab_size": 1000,
        "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
        "attention_probs_dropout_prob": 0.1})";
    const ts::Graph b = load(bert, {{"seq", "16"}, {"attention", "math"}});
    // q, k, v; the probabilities; the mask; the dropped probabilities.
    EXPECT_DOUBLE_EQ(attentionSaved(b, P::Fp32), qkv * 4 + pairs * 4 + pairs + pairs * 4);
    EXPECT_DOUBLE_EQ(attentionSaved(b, P::Bf16Params), qkv * 2 + pairs * 2 + pairs + pairs * 2);
    EXPECT_DOUBLE_EQ(attentionSaved(b, P::AmpBf16), qkv * 2 + pairs * 4 + pairs + pairs * 2);

    auto llama = [](const std::string& dropout) {
        return R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 1000,
            "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
            "intermediate_size": 176, "attention_dropout": )" +
               dropout + "}";
    };
    const ts::Graph l = load(llama("0.1"), {{"seq", "16"}, {"attention", "math"}});
    EXPECT_DOUBLE_EQ(attentionSaved(l, P::Fp32), qkv * 4 + pairs * 4 + pairs + pairs * 4);
    EXPECT_DOUBLE_EQ(attentionSaved(l, P::Bf16Params), qkv * 2 + pairs * 4 + pairs + pairs * 2);
    // Without dropout: the fp32 probabilities and, where the model's dtype is narrower, their cast copy.
    const ts::Graph plain = load(llama("0.0"), {{"seq", "16"}, {"attention", "math"}});
    EXPECT_DOUBLE_EQ(attentionSaved(plain, P::Fp32), qkv * 4 + pairs * 4);
    EXPECT_DOUBLE_EQ(attentionSaved(plain, P::Bf16Params), qkv * 2 + pairs * 4 + pairs * 2);
}

// The cross entropy keeps its log-probabilities in the logits' dtype: a bf16 model whose loss takes the
// logits as they are (BERT's masked LM) keeps them in bf16; transformers' causal LMs upcast the logits
// first (logits.float()) and keep them in fp32 whatever the model's dtype.
TEST(HfConfig, LossKeepsItsLogProbabilitiesInTheLogitsDtype) {
    auto lossSaved = [](const ts::Graph& g, ts::TrainingPrecision p) {
        const ts::predictors::ModelAnalysis a(g, 16);
        double bytes = 0;
        for (const ts::predictors::SavedActivation& sa : a.memoryFor(p).saved)
            if (g.ops[size_t(sa.freedAfter)].type == "SoftmaxCrossEntropyLoss") bytes += sa.bytes.at(2.0);
        return bytes;
    };
    const std::string bert = R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "vocab_size": 1000,
        "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 128})";
    const ts::Graph mlm = load(bert, {{"seq", "16"}});
    const double logits = 2.0 * 16 * 1000;
    EXPECT_DOUBLE_EQ(lossSaved(mlm, ts::TrainingPrecision::Fp32), logits * 4 + 2 * 16 * 8);  // + the labels
    EXPECT_DOUBLE_EQ(lossSaved(mlm, ts::TrainingPrecision::Bf16Params), logits * 2 + 2 * 16 * 8);
    const ts::Graph causal = load(kSmallLlama, {{"seq", "16"}});
    EXPECT_DOUBLE_EQ(lossSaved(causal, ts::TrainingPrecision::Bf16Params), logits * 4 + 2 * 16 * 8);
}

// The token loss's three forms (?loss=): transformers' (fp32: a cast of the logits to fp32 first), the logits as
// they are (model), and a fused cross-entropy kernel (fused: flash-attn's, Liger's), which keeps the scores
// themselves and the labels, and whose backward writes the scores' gradient with no scratch beside it: the
// other forms keep log-probabilities of the scores' size and need one more scores-sized buffer in backward.
TEST(HfConfig, LossOptionChoosesTheCrossEntropysForm) {
    const int64_t N = 2, S = 16, V = 1000;
    auto loss = [&](const std::string& form, int* casts) {
        const ts::Graph g = load(kSmallLlama, {{"seq", std::to_string(S)}, {"loss", form}});
        *casts = 0;
        for (const auto& op : g.ops)
            *casts += op.type == "Cast" && op.attrString("dtype_role", "") == "fp32" && op.modulePath.empty();
        const ts::ModelCosts c = ts::computeCosts(g, N, S);
        return layerOf(g, c, "SoftmaxCrossEntropyLoss").cost;
    };
    int castsFp32 = 0, castsModel = 0, castsFused = 0;
    const ts::OpCost fp32 = loss("fp32", &castsFp32), model = loss("model", &castsModel),
                     fused = loss("fused", &castsFused);
    EXPECT_EQ(castsFp32, 1);
    EXPECT_EQ(castsModel, 0);
    EXPECT_EQ(castsFused, 0);
    const double scores = double(N * S * V) * 4, labels = double(N * S) * 8;  // fp32 graph: 4-byte scores
    EXPECT_DOUBLE_EQ(model.backwardScratch, scores);
    EXPECT_DOUBLE_EQ(fused.backwardScratch, 0);
    EXPECT_DOUBLE_EQ(model.savedBytes(), scores + labels);  // log-probabilities and labels
    EXPECT_DOUBLE_EQ(fused.savedBytes(), scores + labels);  // the scores themselves and labels
    EXPECT_DOUBLE_EQ(fused.forwardFlops, model.forwardFlops);
    EXPECT_NE(errorOf(kSmallLlama, {{"loss", "liger"}}).find("option 'loss' must be fp32, model or fused"),
              std::string::npos);
}

// MPT's attn_impl: torch is the eager attention, flash flash-attn's kernel, triton MosaicML's Triton port of
// FlashAttention-1, timed as the memory-efficient kernels (about half FlashAttention-2's speed).
TEST(HfConfig, MptAttentionImplementationChoosesTheBackend) {
    for (const auto& [impl, backend] : std::vector<std::pair<std::string, std::string>>{
             {"torch", "math"}, {"flash", "flash"}, {"triton", "efficient"}}) {
        const ts::Graph g = load(R"({"model_type": "mpt", "d_model": 64, "n_heads": 4, "n_layers": 1, "vocab_size": 100,
            "attn_config": {"attn_impl": ")" +
                                 impl + R"("}})");
        int seen = 0;
        for (const auto& op : g.ops)
            if (op.type == "ScaledDotProductAttention") {
                EXPECT_EQ(op.attrString("backend", ""), backend) << impl;
                ++seen;
            }
        EXPECT_EQ(seen, 1) << impl;
    }
}
