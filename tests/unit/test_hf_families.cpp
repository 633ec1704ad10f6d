// The Hugging Face families' structure as their modeling code runs it (OLMo 2 and 3, Granite, GPT-OSS, Phi,
// DistilBERT, XLM-RoBERTa, ModernBERT, SmolLM3, MPT, GLM-4 and GLM-4.5, OLMoE, StarCoder2): module paths,
// parameters written out by formula, the operators each family's options put in the graph, and the
// refusals of what is not modelled. test_hf_config.cpp has the reader, the published counts and the options;
// tests/real_models/check_hf_config.py compares every family with transformers itself at test time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hf_config_test_support.h"
#include "trainscope/core/builder.h"

using namespace hftest;

// OLMo 2 normalises each sub-layer's output (post_attention_layernorm, post_feedforward_layernorm) and nothing
// before it, and q and k over their whole projections (4096 features); Granite is Llama with four scalars:
// the embedding times embedding_multiplier, each sub-layer's output times residual_multiplier, the scores
// scaled by attention_multiplier, the logits divided by logits_scaling.
TEST(HfConfig, Olmo2AndGraniteFollowTheirModelingCode) {
    const ts::Graph olmo = ts::loadModel(kConfigs + "olmo-2-7b.json?seq=64");
    EXPECT_FALSE(hasModule(olmo, "model.layers.0.input_layernorm"));
    for (const char* path : {"model.layers.0.post_attention_layernorm", "model.layers.0.post_feedforward_layernorm",
                             "model.layers.0.self_attn.q_norm", "model.layers.0.self_attn.k_norm"})
        EXPECT_TRUE(hasModule(olmo, path)) << path;
    const int qNorm = olmo.findValue("model.layers.0.self_attn.q_norm.weight");
    ASSERT_GE(qNorm, 0);
    EXPECT_EQ(ts::numel(olmo.values[size_t(qNorm)].shape).constant(), 4096);
    EXPECT_NE(errorOf(R"({"model_type": "olmo2", "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 4, "intermediate_size": 128})",
                      {{"tensor_parallel", "2"}})
                  .find("not modelled"),
              std::string::npos);

    const ts::Graph granite = ts::loadModel(kConfigs + "granite-3.1-8b.json?seq=64");
    std::vector<double> scalars;  // the constants of scalar multiplications outside the norms and the attention
    for (const ts::Operation& op : granite.ops) {
        if (op.type != "Mul" || op.modulePath.find("norm") != std::string::npos || op.inputs.size() != 2) continue;
        const ts::Value& k = granite.values[size_t(op.inputs[1])];
        if (k.kind == ts::ValueKind::Constant && k.floatData && !k.floatData->empty())
            scalars.push_back((*k.floatData)[0]);
    }
    ASSERT_EQ(scalars.size(), 1u + 2 * 40 + 1);
    EXPECT_DOUBLE_EQ(scalars.front(), 12.0);
    EXPECT_DOUBLE_EQ(scalars[1], 0.22);
    EXPECT_DOUBLE_EQ(scalars.back(), 1.0 / 16);
    for (const ts::Operation& op : granite.ops) {
        if (op.type == "ScaledDotProductAttention") {
            EXPECT_DOUBLE_EQ(op.attrFloat("scale", 0), 0.0078125);
        }
    }
    EXPECT_NE(errorOf(R"({"model_type": "granite", "architectures": ["GraniteForSequenceClassification"],
        "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
        "intermediate_size": 128})")
                  .find("is not supported"),
              std::string::npos);
}

// GPT-OSS (GptOssForCausalLM): q, k, v and o with biases and a learned sink per head, windows in the even
// layers (null: none), eager attention by default with the softmax in the model's dtype, and in every
// layer the router (weight and bias, no LoRA target) and the experts' transposed, interleaved, biased
// weights with the clamped SwiGLU. Tensor parallelism shards the heads (and their sinks) and each expert's
// width.
TEST(HfConfig, GptOssFollowsItsModelingCode) {
    const int64_t V = 1000, H = 64, I = 176, E = 4;
    const ts::Graph g = load(kSmallGptOss);
    const int64_t attention = (H * H + H) * 2 + (H * 32 + 32) * 2 + 4;  // q, o; k, v; sinks
    const int64_t experts = E * H * 2 * I + E * 2 * I + E * I * H + E * H;
    const int64_t perLayer = attention + 2 * H + (E * H + E) + experts;
    EXPECT_EQ(g.parameterCount(), 2 * V * H + 2 * perLayer + H);
    auto shapeOf = [&](const std::string& name) {
        const int v = g.findValue(name);
        return v < 0 ? std::string("missing") : ts::shapeStr(g.values[size_t(v)].shape);
    };
    EXPECT_EQ(shapeOf("model.layers.1.self_attn.sinks"), "[4]");
    EXPECT_EQ(shapeOf("model.layers.0.mlp.router.bias"), "[4]");
    EXPECT_EQ(shapeOf("model.layers.0.mlp.experts.gate_up_proj"), "[4, 64, 352]");
    EXPECT_EQ(shapeOf("model.layers.0.mlp.experts.down_proj_bias"), "[4, 64]");
    std::vector<const ts::Operation*> sdpa, moe;
    for (const ts::Operation& op : g.ops) {
        if (op.type == "ScaledDotProductAttention") sdpa.push_back(&op);
        if (op.type == "MixtureOfExperts") moe.push_back(&op);
    }
    ASSERT_EQ(sdpa.size(), 2u);
    ASSERT_EQ(moe.size(), 2u);
    EXPECT_EQ(sdpa[0]->attrString("backend", ""), "math");
    EXPECT_EQ(sdpa[0]->attrString("probs_dtype", ""), "model");
    EXPECT_EQ(sdpa[0]->attrInt("window", 0), 4);
    EXPECT_EQ(sdpa[1]->attrInt("window", 0), 0);
    ASSERT_EQ(sdpa[0]->inputs.size(), 5u);
    EXPECT_EQ(sdpa[0]->inputs[3], -1);  // no mask
    EXPECT_EQ(g.values[size_t(sdpa[0]->inputs[4])].name, "model.layers.0.self_attn.sinks");
    EXPECT_EQ(moe[0]->attrString("activation", ""), "ClampedSwiglu");
    EXPECT_DOUBLE_EQ(moe[0]->attrFloat("limit", 0), 7.0);
    EXPECT_DOUBLE_EQ(moe[0]->attrFloat("alpha", 0), 1.702);
    EXPECT_EQ(moe[0]->attrInt("transposed", 0), 1);
    EXPECT_EQ(moe[0]->inputs.size(), 6u);
    int routers = 0;
    for (const ts::Operation& op : g.ops) {
        if (op.modulePath != "model.layers.0.mlp.router" || op.type != "MatMul") continue;
        EXPECT_EQ(op.attrInt("router", 0), 1);
        ++routers;
    }
    EXPECT_EQ(routers, 1);

    std::string unwindowed = kSmallGptOss;
    unwindowed.replace(unwindowed.find("\"sliding_window\": 4"), 19, "\"sliding_window\": null");
    for (const ts::Operation& op : load(unwindowed).ops) {
        if (op.type == "ScaledDotProductAttention") {
            EXPECT_EQ(op.attrInt("window", 0), 0);
        }
    }

    const ts::Graph shard = load(kSmallGptOss, {{"tensor_parallel", "2"}});
    EXPECT_EQ(ts::shapeStr(shard.values[size_t(shard.findValue("model.layers.0.self_attn.sinks"))].shape), "[2]");
    EXPECT_EQ(ts::shapeStr(shard.values[size_t(shard.findValue("model.layers.0.mlp.experts.gate_up_proj_bias"))].shape),
              "[4, 176]");
}

// Phi: one LayerNorm feeding the attention and the MLP in parallel, biases everywhere, partial rotary,
// lm_head with a bias. DistilBERT: its own module names, the padding mask (so sdpa's efficient kernel),
// no pooler, the classifier's pre_classifier and ReLU, the masked-LM loss on the logits as they are (no
// fp32 copy, as BERT's). XLM-RoBERTa: RoBERTa's modules under its class names.
TEST(HfConfig, PhiDistilBertAndXlmRobertaFollowTheirModelingCode) {
    const ts::Graph phi = ts::loadModel(kConfigs + "phi-2.json");
    EXPECT_EQ(phi.name, "PhiForCausalLM");
    for (const char* path : {"model.layers.0.input_layernorm", "model.layers.0.self_attn.dense",
                             "model.layers.0.mlp.fc1", "model.final_layernorm", "lm_head"})
        EXPECT_TRUE(hasModule(phi, path)) << path;
    EXPECT_FALSE(hasModule(phi, "model.layers.0.post_attention_layernorm"));
    EXPECT_GE(phi.findValue("lm_head.bias"), 0);
    for (const ts::Operation& op : phi.ops) {
        if (op.type != "RotaryEmbedding") continue;
        EXPECT_EQ(op.attrInt("rotary_embedding_dim", 0), 32);  // 0.4 of phi-2's 80 features a head
        break;
    }

    const ts::Graph distil = ts::loadModel(kConfigs + "distilbert-base-uncased.json");
    EXPECT_EQ(distil.name, "DistilBertForMaskedLM");
    for (const char* path :
         {"distilbert.transformer.layer.0.attention.q_lin", "distilbert.transformer.layer.5.ffn.lin2",
          "distilbert.transformer.layer.5.output_layer_norm", "vocab_transform", "vocab_projector"})
        EXPECT_TRUE(hasModule(distil, path)) << path;
    int losses = 0;
    for (const ts::Operation& op : distil.ops) {
        if (op.type == "ScaledDotProductAttention") {
            EXPECT_EQ(op.attrString("backend", ""), "efficient");
        }
        if (op.type != "SoftmaxCrossEntropyLoss") continue;
        ++losses;
        int scores = op.inputs[0];
        while (distil.ops[size_t(distil.values[size_t(scores)].producer)].type == "Reshape")
            scores = distil.ops[size_t(distil.values[size_t(scores)].producer)].inputs[0];
        EXPECT_EQ(distil.ops[size_t(distil.values[size_t(scores)].producer)].type, "Add");  // the projector's bias
    }
    EXPECT_EQ(losses, 1);
    std::string seqcls = R"({"model_type": "distilbert", "architectures": ["DistilBertForSequenceClassification"],
        "dim": 64, "n_layers": 1, "n_heads": 4, "hidden_dim": 128, "vocab_size": 100, "num_labels": 3})";
    const ts::Graph classifier = load(seqcls);
    EXPECT_TRUE(hasModule(classifier, "pre_classifier"));
    EXPECT_TRUE(hasModule(classifier, "classifier"));
    // embeddings (100 + 512) x 64 + LayerNorm; a layer: 4 x (64 x 64 + 64), FFN, two LayerNorms; the head.
    const int64_t layer = 4 * (64 * 64 + 64) + (64 * 128 + 128) + (128 * 64 + 64) + 2 * 128;
    EXPECT_EQ(classifier.parameterCount(), (100 + 512) * 64 + 128 + layer + (64 * 64 + 64) + (64 * 3 + 3));

    const ts::Graph xlmr = ts::loadModel(kConfigs + "xlm-roberta-base.json");
    EXPECT_EQ(xlmr.name, "XLMRobertaForMaskedLM");
    EXPECT_TRUE(hasModule(xlmr, "roberta.encoder.layer.11.output.dense"));
    EXPECT_TRUE(hasModule(xlmr, "lm_head.dense"));
}

// ModernBERT: no attn_norm in layer 0, bias-free LayerNorms (norm_bias false), global attention in every
// third layer from the first and a window of local_attention / 2 keys each side in the others (a mask
// for sdpa), the GLU MLP (Wi to twice the intermediate size), the classifier's mean pooling.
TEST(HfConfig, ModernBertFollowsItsModelingCode) {
    const ts::Graph g = ts::loadModel(kConfigs + "modernbert-base.json");
    EXPECT_EQ(g.name, "ModernBertForMaskedLM");
    EXPECT_FALSE(hasModule(g, "model.layers.0.attn_norm"));
    EXPECT_TRUE(hasModule(g, "model.layers.1.attn_norm"));
    EXPECT_LT(g.findValue("model.layers.1.attn_norm.bias"), 0);
    EXPECT_GE(g.findValue("model.layers.1.attn_norm.weight"), 0);
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.findValue("model.layers.0.mlp.Wi.weight"))].shape), "[768, 2304]");
    EXPECT_GE(g.findValue("decoder.bias"), 0);
    std::vector<int64_t> windows;
    for (const ts::Operation& op : g.ops) {
        if (op.type != "ScaledDotProductAttention") continue;
        EXPECT_EQ(op.attrString("backend", ""), "efficient");
        EXPECT_EQ(op.attrInt("causal", 1), 0);
        windows.push_back(op.attrInt("window", 0));
    }
    ASSERT_EQ(windows.size(), 22u);
    for (size_t i = 0; i < windows.size(); ++i) EXPECT_EQ(windows[i], i % 3 == 0 ? 0 : 65) << i;

    const std::string mean = R"({"model_type": "modernbert", "architectures": ["ModernBertForSequenceClassification"],
        "vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 48,
        "classifier_pooling": "mean", "num_labels": 2})";
    int sums = 0;
    for (const ts::Operation& op : load(mean).ops) sums += op.type == "ReduceSum";
    EXPECT_EQ(sums, 2);  // the masked hidden states and the mask
    EXPECT_NE(errorOf(R"({"model_type": "modernbert", "classifier_pooling": "max"})")
                  .find("\"classifier_pooling\" must be \"cls\" or \"mean\", got \"max\""),
              std::string::npos);
}

// SmolLM3: Llama whose every fourth layer (or those no_rope_layers marks 0) rotates neither q nor k,
// with 4 key-value heads and tied embeddings by default, and windows only where use_sliding_window.
TEST(HfConfig, SmolLM3SkipsTheRotaryEmbeddingInItsNoPELayers) {
    auto rotated = [](const ts::Graph& g) {
        std::vector<std::string> layers;
        for (const ts::Operation& op : g.ops)
            if (op.type == "RotaryEmbedding") layers.push_back(op.modulePath);
        return layers;
    };
    const std::string base = R"({"model_type": "smollm3", "vocab_size": 100, "hidden_size": 64,
        "num_hidden_layers": 4, "num_attention_heads": 8, "intermediate_size": 96)";
    const ts::Graph g = load(base + "}");
    const std::vector<std::string> r = rotated(g);
    ASSERT_EQ(r.size(), 6u);  // q and k in layers 0, 1 and 2; none in layer 3
    EXPECT_EQ(std::count(r.begin(), r.end(), "model.layers.3.self_attn"), 0);
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.findValue("model.layers.0.self_attn.k_proj.weight"))].shape),
              "[64, 32]");                        // 4 key-value heads of 8
    EXPECT_LT(g.findValue("lm_head.weight"), 0);  // tied
    const ts::Graph listed =
        load(base + R"(, "no_rope_layers": [0, 1, 1, 1], "use_sliding_window": true, "sliding_window": 4})");
    const std::vector<std::string> l = rotated(listed);
    EXPECT_EQ(std::count(l.begin(), l.end(), "model.layers.0.self_attn"), 0);
    EXPECT_EQ(l.size(), 6u);
    for (const ts::Operation& op : listed.ops) {
        if (op.type != "ScaledDotProductAttention") continue;
        EXPECT_EQ(op.attrInt("window", 0), op.modulePath == "model.layers.0.self_attn" ? 4 : 0) << op.modulePath;
    }
    EXPECT_NE(errorOf(base + R"(, "no_rope_layers": [1, 2, 1, 1]})").find("\"no_rope_layers\" entries must be 0"),
              std::string::npos);
}

// MPT as LLM Foundry's benchmark ran it (MPTConfig's own defaults: biases everywhere, a learned position table of
// max_seq_len rows, no ALiBi, tied embeddings; 50,368 words): the parameter counts its published table gives
// (mosaicml/llm-foundry scripts/train/benchmarking/README.md, NumParams, read from the runs' logs), which grow
// by d_model with every position of the table; and the blocks as MPTModel names them.
TEST(HfConfig, MptFollowsLlmFoundrysModel) {
    auto foundry = [](int64_t d, int64_t heads, int64_t layers, int64_t seq) {
        return R"({"model_type": "mpt", "architectures": ["MPTForCausalLM"], "d_model": )" + std::to_string(d) +
               R"(, "n_heads": )" + std::to_string(heads) + R"(, "n_layers": )" + std::to_string(layers) +
               R"(, "max_seq_len": )" + std::to_string(seq) +
               R"(, "vocab_size": 50368, "no_bias": false, "learned_pos_emb": true,
               "attn_config": {"attn_impl": "flash", "alibi": false}})";
    };
    EXPECT_EQ(load(foundry(768, 12, 12, 2048)).parameterCount(), 125'311'488);      // 125m
    EXPECT_EQ(load(foundry(768, 12, 12, 65536)).parameterCount(), 174'070'272);     // 125m at 65,536
    EXPECT_EQ(load(foundry(2048, 16, 24, 512)).parameterCount(), 1'312'804'864);    // 1b at 512
    EXPECT_EQ(load(foundry(4096, 32, 32, 2048)).parameterCount(), 6'658'859'008);   // 7b
    EXPECT_EQ(load(foundry(7168, 56, 48, 8192)).parameterCount(), 30'019'254'272);  // 30b at 8,192
    EXPECT_EQ(load(foundry(8192, 64, 80, 2048)).parameterCount(), 64'862'437'376);  // 70b

    const ts::Graph g = load(foundry(64, 4, 2, 32), {{"seq", "32"}});
    for (const char* path :
         {"transformer.wte", "transformer.wpe", "transformer.blocks.0.norm_1", "transformer.blocks.0.attn.Wqkv",
          "transformer.blocks.0.attn.out_proj", "transformer.blocks.1.ffn.up_proj",
          "transformer.blocks.1.ffn.down_proj", "transformer.norm_f"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    int flash = 0;
    for (const auto& op : g.ops)
        if (op.type == "ScaledDotProductAttention") flash += op.attrString("backend", "") == "flash";
    EXPECT_EQ(flash, 2);  // attn_impl flash; transformers' form ("torch") is eager
    // ALiBi replaces the position table; grouped-query heads narrow Wqkv to q | k | v of 64 + 2 x 2 x 16.
    const ts::Graph alibi = load(R"({"model_type": "mpt", "d_model": 64, "n_heads": 4, "n_layers": 1,
        "vocab_size": 1000, "attn_config": {"alibi": true, "attn_type": "grouped_query_attention", "kv_n_heads": 2}})");
    EXPECT_FALSE(hasModule(alibi, "transformer.wpe"));
    const int64_t layer = 64 * (64 + 2 * 2 * 16) + 64 * 64 + 2 * 64 * 256 + 2 * 64;  // no biases by default
    EXPECT_EQ(alibi.parameterCount(), 1000 * 64 + layer + 64);
}

namespace {
int countOps(const ts::Graph& g, const std::string& type, const std::string& pathPrefix = "") {
    int n = 0;
    for (const auto& op : g.ops) n += op.type == type && op.modulePath.rfind(pathPrefix, 0) == 0;
    return n;
}
}  // namespace

// GLM-4.5 (Glm4MoeForCausalLM): Llama's grouped-query attention with q, k, v biases (o_proj without), half of
// each head rotated; a dense MLP in the first first_k_dense_replace layers, then DeepSeek-V3's sigmoid-scored
// experts beside a shared MLP.
TEST(HfConfig, Glm4MoeFollowsItsModelingCode) {
    const ts::Graph g = ts::loadModel(kConfigs + "glm-4.5-air.json?seq=64");
    EXPECT_TRUE(hasModule(g, "model.layers.0.mlp.gate_proj"));
    EXPECT_EQ(countOps(g, "MixtureOfExperts", "model.layers.0."), 0);
    EXPECT_EQ(countOps(g, "MixtureOfExperts"), 45);
    EXPECT_EQ(countOps(g, "Sigmoid", "model.layers.1.mlp.gate"), 1);
    EXPECT_EQ(countOps(g, "Softmax", "model.layers.1.mlp"), 0);
    EXPECT_TRUE(hasModule(g, "model.layers.1.mlp.shared_experts.down_proj"));
    EXPECT_GE(g.findValue("model.layers.1.self_attn.q_proj.bias"), 0);
    EXPECT_LT(g.findValue("model.layers.1.self_attn.o_proj.bias"), 0);
    EXPECT_FALSE(hasModule(g, "model.layers.1.self_attn.q_norm"));  // use_qk_norm false
    for (const auto& op : g.ops) {
        if (op.type == "RotaryEmbedding") {
            EXPECT_EQ(op.attrInt("rotary_embedding_dim", 0), 64);  // 128 x 0.5
        }
        if (op.type == "MixtureOfExperts") {
            EXPECT_EQ(op.attrInt("top_k", 0), 8);
        }
    }
    // use_qk_norm: an RMSNorm over each head of q and k (weights of head_dim).
    const ts::Graph normed = load(R"({"model_type": "glm4_moe", "vocab_size": 100, "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "intermediate_size": 128, "moe_intermediate_size": 32, "n_routed_experts": 4, "num_experts_per_tok": 2,
        "use_qk_norm": true})");
    const int qNorm = normed.findValue("model.layers.0.self_attn.q_norm.weight");
    ASSERT_GE(qNorm, 0);
    EXPECT_EQ(ts::numel(normed.values[size_t(qNorm)].shape).constant(), 16);
    EXPECT_NE(errorOf(R"({"model_type": "glm4_moe", "architectures": ["Glm4MoeForSequenceClassification"],
        "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
        "intermediate_size": 128})")
                  .find("is not supported"),
              std::string::npos);
}

// OLMoE (OlmoeForCausalLM): pre-norm layers with q_norm and k_norm over the whole projections, q, k and v
// clamped at clip_qkv where set, and softmax-routed experts of intermediate_size in every layer, their top-k
// weights not renormalised unless norm_topk_prob.
TEST(HfConfig, OlmoeFollowsItsModelingCode) {
    const ts::Graph g = ts::loadModel(kConfigs + "olmoe-1b-7b.json?seq=64");
    EXPECT_TRUE(hasModule(g, "model.layers.0.input_layernorm"));
    const int qNorm = g.findValue("model.layers.0.self_attn.q_norm.weight");
    ASSERT_GE(qNorm, 0);
    EXPECT_EQ(ts::numel(g.values[size_t(qNorm)].shape).constant(), 2048);
    EXPECT_EQ(countOps(g, "MixtureOfExperts"), 16);
    EXPECT_EQ(countOps(g, "Softmax", "model.layers.0.mlp.gate"), 1);
    EXPECT_EQ(countOps(g, "Clip"), 0);  // clip_qkv null
    for (const auto& op : g.ops)
        if (op.type == "MixtureOfExperts") {
            EXPECT_EQ(op.attrInt("top_k", 0), 8);
            EXPECT_EQ(op.attrInt("normalize", 1), 0);
        }
    const std::string small = R"({"model_type": "olmoe", "vocab_size": 100, "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32, "num_experts": 4,
        "num_experts_per_tok": 2, "clip_qkv": 8.0})";
    EXPECT_EQ(countOps(load(small), "Clip"), 2 * 3);
    EXPECT_NE(errorOf(small, {{"tensor_parallel", "2"}}).find("OLMoE's q_norm and k_norm"), std::string::npos);
}

// StarCoder2 (Starcoder2ForCausalLM): LayerNorms with biases, every linear layer with a bias (use_bias), the
// GELU MLP c_fc -> c_proj, a sliding window in every layer, residual and embedding dropout, tied embeddings.
TEST(HfConfig, Starcoder2FollowsItsModelingCode) {
    const ts::Graph g = ts::loadModel(kConfigs + "starcoder2-3b.json?seq=64");
    for (const char* name : {"model.layers.0.input_layernorm.bias", "model.layers.0.self_attn.o_proj.bias",
                             "model.layers.0.mlp.c_fc.bias", "model.layers.0.mlp.c_proj.bias", "model.norm.bias"})
        EXPECT_GE(g.findValue(name), 0) << name;
    EXPECT_LT(g.findValue("lm_head.weight"), 0);  // tied to embed_tokens
    int windows = 0;
    for (const auto& op : g.ops)
        if (op.type == "ScaledDotProductAttention") windows += op.attrInt("window", 0) == 4096;
    EXPECT_EQ(windows, 30);
    // Dropout after the embedding, and after each attention's and MLP's output (0.1 each in this config).
    EXPECT_EQ(countOps(g, "Dropout", "model.embedding_dropout"), 1);
    EXPECT_EQ(countOps(g, "Dropout", "model.layers.0.self_attn.residual_dropout"), 1);
    EXPECT_EQ(countOps(g, "Dropout", "model.layers.0.mlp.residual_dropout"), 1);
    const ts::Graph bare = load(R"({"model_type": "starcoder2", "vocab_size": 100, "hidden_size": 64,
        "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
        "use_bias": false, "tie_word_embeddings": false})");
    const int64_t layer = 64 * (64 + 2 * 2 * 16) + 64 * 64 + 2 * 64 * 128 + 2 * 2 * 64;  // two LayerNorms
    EXPECT_EQ(bare.parameterCount(), 2 * 100 * 64 + layer + 2 * 64);
}

// OLMo 3 (Olmo3ForCausalLM): OLMo 2's layer, with a window of sliding_window keys (4,096 by default; null:
// none) in every layer but each fourth, or as layer_types lists them.
TEST(HfConfig, Olmo3SlidesInThreeLayersOfFour) {
    const std::string sizes = R"("vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 8,
        "num_attention_heads": 4, "intermediate_size": 128)";
    auto windows = [](const ts::Graph& g) {
        std::vector<int64_t> w;
        for (const auto& op : g.ops)
            if (op.type == "ScaledDotProductAttention") w.push_back(op.attrInt("window", 0));
        return w;
    };
    const ts::Graph g = load(R"({"model_type": "olmo3", )" + sizes + "}", {{"seq", "64"}});
    EXPECT_EQ(windows(g), (std::vector<int64_t>{4096, 4096, 4096, 0, 4096, 4096, 4096, 0}));
    EXPECT_TRUE(hasModule(g, "model.layers.0.post_feedforward_layernorm"));
    EXPECT_FALSE(hasModule(g, "model.layers.0.input_layernorm"));
    EXPECT_EQ(windows(load(R"({"model_type": "olmo3", "sliding_window": null, )" + sizes + "}")),
              std::vector<int64_t>(8, 0));
    EXPECT_NE(errorOf(R"({"model_type": "olmo3", )" + sizes + "}", {{"tensor_parallel", "2"}}).find("OLMo 3's"),
              std::string::npos);
}

// GLM-4 (Glm4ForCausalLM, GLM-4-0414): four RMSNorms a layer (the attention's and the MLP's outputs normed
// before each residual add), q, k and v with biases (o_proj without), half of each 128-feature head rotated,
// and Phi-3's fused gate_up_proj.
TEST(HfConfig, Glm4FollowsItsModelingCode) {
    const ts::Graph g = load(R"({"model_type": "glm4", "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128})");
    for (const char* path : {"model.layers.0.input_layernorm", "model.layers.0.post_self_attn_layernorm",
                             "model.layers.0.post_attention_layernorm", "model.layers.0.post_mlp_layernorm",
                             "model.layers.0.mlp.gate_up_proj", "model.layers.0.mlp.down_proj"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    EXPECT_GE(g.findValue("model.layers.0.self_attn.k_proj.bias"), 0);
    EXPECT_LT(g.findValue("model.layers.0.self_attn.o_proj.bias"), 0);
    for (const auto& op : g.ops) {
        if (op.type == "RotaryEmbedding") {
            EXPECT_EQ(op.attrInt("rotary_embedding_dim", 0), 64);  // head_dim 128 by default, half rotated
        }
    }
    // Embeddings and lm_head, q (4 x 128) and k, v (2 x 128) with biases, o, gate_up and down, four norms, the final.
    const int64_t layer = 64 * 512 + 512 + 2 * (64 * 256 + 256) + 512 * 64 + 64 * 256 + 128 * 64 + 4 * 64;
    EXPECT_EQ(g.parameterCount(), 2 * 100 * 64 + layer + 64);
}
