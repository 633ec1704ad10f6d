// A Hugging Face config.json as a model source: parameter counts of published configs (as transformers
// counts them), module paths, the structure of Qwen (v1) and Gemma 2 and 3, options, the
// RMSNorm and rotary operators' costs against formulas written here, and one-line errors for bad
// configs. test_hf_families.cpp has the other families' structure, test_hf_operator_costs.cpp the
// attention's and the experts' costs;
// tests/real_models/check_hf_config.py compares small configs of every family with transformers itself
// at test time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "hf_config_test_support.h"
#include "trainscope/core/builder.h"
#include "trainscope/predictors/iteration/model_analysis.h"

using namespace hftest;

// Counts from transformers 5.24 in the project's venv: the class of `architectures` built from each
// config on the meta device, sum(p.numel() for p in model.parameters()). The files are the models'
// published config.json (vit-base-patch16-224 with "num_labels": 1000 in place of its 1000-entry id2label;
// the Llama 2 and Llama 3 files carry the published configs' architecture fields, written out from
// meta-llama's model cards' configs, with the rest of Llama 3.1's file).
TEST(HfConfig, PublishedConfigsHaveTransformersParameterCounts) {
    const std::pair<const char*, int64_t> expected[] = {
        {"llama-3.1-8b.json", 8'030'261'248},
        {"mistral-7b-v0.1.json", 7'241'732'096},
        {"qwen2.5-7b.json", 7'615'616'512},
        {"gemma-2b.json", 2'506'172'416},
        {"phi-3-mini-4k.json", 3'821'079'552},
        {"gpt2.json", 124'439'808},
        {"pythia-1b.json", 1'011'781'632},
        {"bert-base-uncased.json", 109'514'298},
        {"roberta-base.json", 124'697'433},
        {"vit-base-patch16-224.json", 86'567'656},
        // The models of torchtitan's published runs (docs/prediction.md, LLM training throughput).
        {"llama-2-13b.json", 13'015'864'320},
        {"llama-2-70b.json", 68'976'648'192},
        {"llama-3-8b.json", 8'030'261'248},
        {"llama-3-70b.json", 70'553'706'496},
        // Qwen (v1)'s own configs (model_type qwen, its remote code), the models of Qwen's published LoRA runs
        // (scripts/validate_lora_runs.py): the counts Qwen publishes (1.84, 7.72 and 14.17 billion).
        {"qwen-1.8b.json", 1'836'828'672},
        {"qwen-7b.json", 7'721'324'544},
        {"qwen-14b.json", 14'167'290'880},
        // Qwen3: q_norm and k_norm (128 weights each per layer); 0.6B ties its embeddings.
        {"qwen3-8b.json", 8'190'735'360},
        {"qwen3-0.6b.json", 596'049'920},
        // Gemma 2 (four RMSNorms a layer) and Gemma 3's text model (and q_norm, k_norm), tied embeddings.
        {"gemma-2-9b.json", 9'241'705'984},
        {"gemma-2-27b.json", 27'227'128'320},
        {"gemma-3-1b.json", 999'885'952},
        // Qwen2-MoE: 60 experts of 1408 and a shared expert of 5632 in each of 24 layers, q, k, v biases.
        {"qwen1.5-moe-a2.7b.json", 14'315'784'192},
        // DeepSeek-V3 as transformers builds DeepseekV3ForCausalLM (its multi-token-prediction layer is not part
        // of it): the 671 billion DeepSeek publishes.
        {"deepseek-v3.json", 671'026'404'352},
        // OLMo 2 (q_norm and k_norm over the whole projections) and Granite 3.1 (tied, grouped-query).
        {"olmo-2-7b.json", 7'298'617'344},
        {"granite-3.1-8b.json", 8'170'848'256},
        // GPT-OSS with its experts in bf16 (the published checkpoints' MXFP4 dequantised, as fine-tuning loads
        // them): the 20.9 and 116.8 billion OpenAI's model card gives.
        {"gpt-oss-20b.json", 20'914'757'184},
        {"gpt-oss-120b.json", 116'829'156'672},
        // Phi-2 (LayerNorms, biases, lm_head's bias), DistilBERT's masked LM and XLM-RoBERTa's (RoBERTa's modules,
        // a 250,002-word vocabulary).
        {"phi-2.json", 2'779'683'840},
        {"distilbert-base-uncased.json", 66'985'530},
        {"xlm-roberta-base.json", 278'295'186},
        // ModernBERT-base: bias-free LayerNorms and linear layers, the tied decoder's bias.
        {"modernbert-base.json", 149'655'232},
        // SmolLM3-3B: Llama's layout, tied embeddings, a NoPE layer in four.
        {"smollm3-3b.json", 3'075'098'624},
        // The encoder-decoders: BART-large (one shared embedding matrix, learned positions of 1,026 rows per
        // stack; final_logits_bias a buffer) and mBART-large-cc25 (a 250,027-word vocabulary, final LayerNorms).
        {"bart-large.json", 406'291'456},
        {"mbart-large-cc25.json", 610'851'840},
        // T5: transformers 5 ties lm_head to the shared embedding even where the config says not (T5 v1.1, FLAN-T5,
        // mT5: the count is one vocabulary matrix fewer than transformers 4's); t5-base's ReLU MLP of 3,072 and
        // flan-t5-base's gated one of 2 x 2,048 come to the same count.
        {"t5-base.json", 222'903'552},
        {"flan-t5-base.json", 222'903'552},
        {"mt5-small.json", 172'119'424},
        // MPT-7B (MosaicML's published config: no biases, ALiBi, a 50,432-word vocabulary): transformers'
        // MptForCausalLM.
        {"mpt-7b.json", 6'649'286'656},
        // GLM-4.5-Air (106 billion: transformers builds no multi-token-prediction layer), OLMoE-1B-7B (6.9 billion:
        // 64 experts of 1,024 in each of 16 layers) and StarCoder2-3B (biases, LayerNorms, tied embeddings).
        {"glm-4.5-air.json", 106'852'245'504},
        {"olmoe-1b-7b.json", 6'919'161'856},
        {"starcoder2-3b.json", 3'030'371'328},
    };
    for (const auto& [file, params] : expected) {
        ts::Graph g = ts::loadModel(kConfigs + file);
        EXPECT_EQ(g.parameterCount(), params) << file;
        EXPECT_EQ(g.format, "huggingface") << file;
    }
}

// A mixture of experts' active parameters: transformers 5.24's parameters (the meta-device model of each file)
// less each routed expert's share a token does not reach, sum(p.numel() for the routed "experts." tensors) x
// (1 - top_k / E), computed in the project's venv. Against the model cards: Qwen3-30B-A3B 3.3 billion
// activated, Mixtral 12.9, OLMoE 1.3, Qwen1.5-MoE-A2.7B 2.7, DeepSeek-V3 37 (embeddings included; OpenAI's
// 3.6 and 5.1 for gpt-oss and Zhipu's 12 for GLM-4.5-Air leave the token embedding out).
TEST(HfConfig, ActiveParametersCountTheRoutedExpertsATokenReaches) {
    const std::pair<const char*, int64_t> expected[] = {
        {"qwen3-30b-a3b.json", 3'353'032'704},     {"glm-4.5-air.json", 13'424'123'904},
        {"olmoe-1b-7b.json", 1'282'017'280},       {"mixtral-8x7b.json", 12'879'925'248},
        {"gpt-oss-20b.json", 4'187'440'704},       {"gpt-oss-120b.json", 5'711'982'912},
        {"qwen1.5-moe-a2.7b.json", 2'689'173'504}, {"deepseek-v3.json", 37'552'282'624},
    };
    for (const auto& [file, active] : expected) {
        const ts::Graph g = ts::loadModel(kConfigs + file);
        EXPECT_EQ(g.activeParameterCount(), active) << file;
        EXPECT_LT(g.activeParameterCount(), g.parameterCount()) << file;
    }
    const ts::Graph dense = ts::loadModel(kConfigs + "llama-3.1-8b.json");
    EXPECT_EQ(dense.activeParameterCount(), dense.parameterCount());
    // A tensor-parallel shard reports the whole model's, as it reports the whole model's parameters.
    const ts::Graph shard = ts::loadModel(kConfigs + "qwen3-30b-a3b.json?tensor_parallel=4");
    EXPECT_EQ(shard.modelActiveParameterCount(), 3'353'032'704);
    EXPECT_LT(shard.activeParameterCount(), shard.modelActiveParameterCount());
}

// The count written out: embeddings, per layer q, k, v, o, the gated MLP and two RMSNorms, the final
// norm and the untied lm_head.
TEST(HfConfig, SmallLlamaCountFollowsTheFormula) {
    const int64_t V = 1000, H = 64, L = 2, d = 16, heads = 4, kv = 2, I = 176;
    const int64_t layer = H * heads * d + 2 * H * kv * d + heads * d * H + 3 * H * I + 2 * H;
    EXPECT_EQ(load(kSmallLlama).parameterCount(), V * H + L * layer + H + V * H);
    // Tied: the lm_head uses the embedding matrix.
    std::string tied = kSmallLlama;
    tied.insert(tied.size() - 1, R"(, "tie_word_embeddings": true)");
    EXPECT_EQ(load(tied).parameterCount(), V * H + L * layer + H);
}

TEST(HfConfig, ModulePathsFollowTransformers) {
    ts::Graph g = ts::loadModel(kConfigs + "llama-3.1-8b.json?seq=128");
    EXPECT_EQ(g.name, "LlamaForCausalLM");
    EXPECT_EQ(g.defaults.seq, 128);
    for (const char* path : {"model.embed_tokens", "model.layers.0.input_layernorm", "model.layers.0.self_attn.q_proj",
                             "model.layers.0.self_attn.k_proj", "model.layers.31.mlp.down_proj", "model.layers.31.mlp.act_fn",
                             "model.norm", "lm_head"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    // Grouped-query attention: 8 key/value heads of 128.
    const int k = g.findValue("model.layers.0.self_attn.k_proj.weight");
    ASSERT_GE(k, 0);
    EXPECT_EQ(ts::numel(g.values[size_t(k)].shape).constant(), 4096 * 1024);

    ts::Graph phi = ts::loadModel(kConfigs + "phi-3-mini-4k.json");
    EXPECT_TRUE(hasModule(phi, "model.layers.0.self_attn.qkv_proj"));
    EXPECT_TRUE(hasModule(phi, "model.layers.0.mlp.gate_up_proj"));
    ts::Graph neox = ts::loadModel(kConfigs + "pythia-1b.json");
    EXPECT_TRUE(hasModule(neox, "gpt_neox.layers.15.attention.query_key_value"));
    ts::Graph vit = ts::loadModel(kConfigs + "vit-base-patch16-224.json");
    EXPECT_GE(vit.findValue("vit.embeddings.cls_token"), 0);
    EXPECT_TRUE(hasModule(vit, "vit.embeddings.patch_embeddings.projection"));
    EXPECT_TRUE(hasModule(vit, "classifier"));
    ts::Graph bert = ts::loadModel(kConfigs + "bert-base-uncased.json");
    EXPECT_TRUE(hasModule(bert, "bert.encoder.layer.11.attention.self.query"));
    EXPECT_TRUE(hasModule(bert, "cls.predictions.decoder"));
}

// Qwen (v1)'s remote code: transformer.h.i with a fused c_attn (q | k | v, with a bias: 3 x 4096 rows),
// c_proj without one, QWenMLP's w1, w2 and c_proj of intermediate_size / 2 = 11008 features, and its
// CrossEntropyLoss on the logits in the model's dtype, where transformers' loss functions upcast them
// (Llama's last Cast before the loss; Qwen's graph has none). Written out from Qwen's modeling_qwen.py.
TEST(HfConfig, QwenV1FollowsItsRemoteCode) {
    ts::Graph g = ts::loadModel(kConfigs + "qwen-7b.json?seq=64");
    EXPECT_EQ(g.name, "QWenLMHeadModel");
    for (const char* path : {"transformer.wte", "transformer.h.0.ln_1", "transformer.h.0.attn.c_attn",
                             "transformer.h.0.attn.c_proj", "transformer.h.31.mlp.w1", "transformer.h.31.mlp.w2",
                             "transformer.h.31.mlp.c_proj", "transformer.ln_f", "lm_head"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    const auto elements = [&](const std::string& name) {
        const int v = g.findValue(name);
        return v < 0 ? int64_t{-1} : ts::numel(g.values[size_t(v)].shape).constant();
    };
    EXPECT_EQ(elements("transformer.h.0.attn.c_attn.bias"), 3 * 4096);
    EXPECT_EQ(elements("transformer.h.0.attn.c_proj.bias"), -1);
    EXPECT_EQ(elements("transformer.h.0.mlp.w1.weight"), 4096 * 11008);
    const auto castBeforeLoss = [](const ts::Graph& m) {
        for (const ts::Operation& op : m.ops)
            if (op.type == "SoftmaxCrossEntropyLoss")
                for (const ts::Operation& p : m.ops)
                    if (!p.outputs.empty() && p.outputs[0] == op.inputs[0]) return p.type == "Cast";
        return false;
    };
    EXPECT_FALSE(castBeforeLoss(g));
    EXPECT_TRUE(castBeforeLoss(ts::loadModel(kConfigs + "llama-3.1-8b.json?seq=64")));
    // QWenLMHeadModel is its only head class.
    EXPECT_NE(errorOf(R"({"model_type": "qwen", "architectures": ["QWenForSequenceClassification"],
        "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
        "intermediate_size": 128})").find("QWenLMHeadModel"), std::string::npos);
}

// Gemma 2 and Gemma 3 (text), as their modeling code runs: four RMSNorms a layer (the attention's and the
// MLP's outputs normalised before the residual adds), Gemma 3's per-head q_norm and k_norm, the layers'
// windows (Gemma 2: the even layers; Gemma 3: five of every six), the score soft-cap in every layer
// and Gemma 2's logits capped (divide, tanh, multiply) before the loss. transformers' default
// attention: eager for Gemma 2 (sdpa cannot soft-cap), sdpa for Gemma 3, where the window reaches the
// kernel as a mask.
TEST(HfConfig, GemmaTwoAndThreeFollowTheirModelingCode) {
    ts::Graph g2 = ts::loadModel(kConfigs + "gemma-2-9b.json?seq=64");
    EXPECT_EQ(g2.name, "Gemma2ForCausalLM");
    for (const char* path : {"model.layers.0.input_layernorm", "model.layers.0.post_attention_layernorm",
                             "model.layers.0.pre_feedforward_layernorm", "model.layers.0.post_feedforward_layernorm",
                             "model.layers.41.mlp.down_proj", "model.norm"})
        EXPECT_TRUE(hasModule(g2, path)) << path;
    std::vector<const ts::Operation*> attention;
    for (const ts::Operation& op : g2.ops)
        if (op.type == "ScaledDotProductAttention") attention.push_back(&op);
    ASSERT_EQ(attention.size(), 42u);
    for (size_t i = 0; i < attention.size(); ++i) {
        EXPECT_EQ(attention[i]->attrString("backend", ""), "math");
        EXPECT_DOUBLE_EQ(attention[i]->attrFloat("softcap", 0), 50.0);
        EXPECT_DOUBLE_EQ(attention[i]->attrFloat("scale", 0), 1.0 / 16);  // query_pre_attn_scalar 256
        EXPECT_EQ(attention[i]->attrInt("window", 0), i % 2 == 0 ? 4096 : 0) << i;
    }
    // The logits (the tied embedding's product) capped before the loss: x / 30, tanh, x * 30.
    std::vector<std::string> types;
    for (const ts::Operation& op : g2.ops) types.push_back(op.type);
    const auto tanh = std::find(types.begin(), types.end(), "Tanh");
    ASSERT_NE(tanh, types.end());
    EXPECT_EQ(std::count(types.begin(), types.end(), "Tanh"), 1);
    EXPECT_EQ(std::vector<std::string>(tanh - 2, tanh + 4),
              (std::vector<std::string>{"MatMul", "Mul", "Tanh", "Mul", "Reshape", "Cast"}));

    ts::Graph g3 = ts::loadModel(kConfigs + "gemma-3-1b.json?seq=64");
    EXPECT_EQ(g3.name, "Gemma3ForCausalLM");
    EXPECT_TRUE(hasModule(g3, "model.layers.0.self_attn.q_norm"));
    EXPECT_TRUE(hasModule(g3, "model.layers.0.self_attn.k_norm"));
    int layer = 0;
    for (const ts::Operation& op : g3.ops) {
        if (op.type != "ScaledDotProductAttention") continue;
        const bool sliding = (layer + 1) % 6 != 0;  // sliding_window_pattern 6
        EXPECT_EQ(op.attrString("backend", ""), "flash");
        EXPECT_EQ(op.attrInt("window", 0), sliding ? 512 : 0) << layer;
        EXPECT_EQ(op.attrInt("window_as_mask", 0), sliding ? 1 : 0) << layer;
        EXPECT_FALSE(op.hasAttr("softcap"));
        ++layer;
    }
    EXPECT_EQ(layer, 26);
    for (const ts::Operation& op : g3.ops) EXPECT_NE(op.type, "Tanh");  // no final soft-cap
    // The flash option is flash-attn's kernel, which applies the window itself.
    for (const ts::Operation& op : ts::loadModel(kConfigs + "gemma-3-1b.json?seq=64&attention=flash").ops)
        EXPECT_FALSE(op.hasAttr("window_as_mask"));
    // Gemma 3's text classes.
    std::string base = kSmallGemma2;
    base.replace(base.find("\"gemma2\""), 8, "\"gemma3_text\"");
    base.replace(base.find("Gemma2ForCausalLM"), 17, "Gemma3TextModel");
    EXPECT_EQ(load(base).name, "Gemma3TextModel");
    EXPECT_EQ(load(base, {{"head", "sequence-classification"}}).name, "Gemma3TextForSequenceClassification");
}

TEST(HfConfig, HeadOptionOverridesArchitectures) {
    const int64_t V = 1000, H = 64;
    const int64_t causal = load(kSmallLlama).parameterCount();
    EXPECT_EQ(load(kSmallLlama, {{"head", "base"}}).parameterCount(), causal - V * H);
    EXPECT_EQ(load(kSmallLlama, {{"head", "sequence-classification"}}).parameterCount(), causal - V * H + 2 * H);
    EXPECT_NE(errorOf(kSmallLlama, {{"head", "masked-lm"}}).find("does not apply"), std::string::npos);
    EXPECT_NE(errorOf(kSmallLlama, {{"seq", "4096"}}).find("option 'seq' must be between 1 and 2048"),
              std::string::npos);
    EXPECT_NE(errorOf(kSmallLlama, {{"image", "224"}}).find("unknown option 'image'"), std::string::npos);
    EXPECT_NE(errorOf(kSmallLlama, {{"attention", "sparse"}}).find("flash, efficient or math"), std::string::npos);
}

TEST(HfConfig, RmsNormAndRotaryCosts) {
    const int64_t N = 2, S = 16, H = 64;
    const ts::Graph g = load(kSmallLlama);
    const ts::ModelCosts c = ts::computeCosts(g, N, S);
    const double elems = double(N * S * H), rows = double(N * S);
    // transformers' RMSNorm as it runs: cast, pow, mean, add, sqrt, reciprocal, mul, cast, mul, each
    // a kernel. What autograd keeps of the first one, by hand: its fp32 input (pow and mul), the
    // normalized tensor cast back (the weight's gradient), and a float per row from sqrt and
    // reciprocal (PyTorch's one rsqrt keeps one).
    const std::string norm = "model.layers.0.input_layernorm";
    std::vector<std::string> types;
    for (const ts::Operation& op : g.ops)
        if (op.modulePath == norm) types.push_back(op.type);
    EXPECT_EQ(types, (std::vector<std::string>{"Cast", "Pow", "ReduceMean", "Add", "Sqrt", "Reciprocal", "Mul", "Cast",
                                               "Mul"}));
    const ts::predictors::ModelAnalysis a(g, S);
    auto savedBy = [&](ts::TrainingPrecision p) {
        double bytes = 0;
        for (const ts::predictors::SavedActivation& s : a.memoryFor(p).saved)
            if (g.ops[size_t(s.freedAfter)].modulePath == norm) bytes += s.bytes.at(double(N));
        return bytes;
    };
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Fp32), 2 * elems * 4 + 2 * rows * 4);
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::AmpBf16), 2 * elems * 4 + 2 * rows * 4);  // an fp32 residual
    // In a bf16 model the input is upcast to fp32 and the normalized tensor cast back to bf16.
    EXPECT_DOUBLE_EQ(savedBy(ts::TrainingPrecision::Bf16Params), elems * 4 + elems * 2 + 2 * rows * 4);
    // The casts are kernels only where they change the dtype: in the bf16 model, not in fp32.
    for (size_t i = 0; i < g.ops.size(); ++i) {
        if (g.ops[i].modulePath != norm || g.ops[i].type != "Cast") continue;
        EXPECT_TRUE(a.bytes(a.ops[i], ts::TrainingPrecision::Fp32).read.isZero());
        EXPECT_DOUBLE_EQ(a.bytes(a.ops[i], ts::TrainingPrecision::Bf16Params).read.at(double(N)) +
                             a.bytes(a.ops[i], ts::TrainingPrecision::Bf16Params).write.at(double(N)),
                         elems * 6);  // 2 bytes read and 4 written, or 4 read and 2 written
    }
    const ts::LayerCost& rotary = layerOf(g, c, "RotaryEmbedding");  // q: 4 heads of 16, all rotated
    EXPECT_DOUBLE_EQ(rotary.cost.forwardFlops, 3.0 * N * 4 * S * 16);
    EXPECT_DOUBLE_EQ(rotary.activationBytes, 0);  // cos and sin are constants of the forward

    // gpt_neox rotates a quarter of each head (rotary_pct 0.25): pythia-1b, 8 heads of 256.
    const ts::Graph neox = ts::loadModel(kConfigs + "pythia-1b.json");
    const ts::ModelCosts nc = ts::computeCosts(neox, 1, 128);
    EXPECT_DOUBLE_EQ(layerOf(neox, nc, "RotaryEmbedding").cost.forwardFlops, 3.0 * 8 * 128 * 64);
}

TEST(HfConfig, BadConfigsGiveOneLineNamingTheProblem) {
    const std::pair<std::string, std::string> cases[] = {
        {"[1, 2]", "must be a JSON object"},
        {R"({"model_type": "llama"})", "\"vocab_size\" is missing"},
        {R"({"model_type": 7})", "\"model_type\" must be a string"},
        {R"({"model_type": "whisper", "d_model": 512})", "model_type \"whisper\" is not supported"},
        {R"({"model_type": "llama", "vocab_size": 1000, "hidden_size": 1e12, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 176})",
         "\"hidden_size\" must be a whole number"},
        {R"({"model_type": "llama", "vocab_size": 1000, "hidden_size": 1000000000000, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 176})",
         "\"hidden_size\" must be between 1 and"},
        {R"({"model_type": "llama", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 5, "intermediate_size": 176})",
         "not a multiple of \"num_attention_heads\""},
        {R"({"model_type": "gpt2", "vocab_size": 1000, "n_embd": 64, "n_layer": 2, "n_head": 4,
            "activation_function": "swiglu_v9"})",
         "activation \"swiglu_v9\" is not supported"},
        {R"({"model_type": "vit", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
            "intermediate_size": 176, "image_size": 30, "patch_size": 8})",
         "not a multiple of \"patch_size\""},
        {R"({"model_type": "llama", "architectures": "LlamaForCausalLM"})", "\"architectures\" must be a list"},
        {R"({"model_type": "bert", "architectures": ["BertForQuestionAnswering"]})",
         "architecture \"BertForQuestionAnswering\" is not supported"},
        {R"({"model_type": "llama", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 176, "tie_word_embeddings": "yes"})",
         "\"tie_word_embeddings\" must be true or false"},
        {R"({"model_type": "phimoe", "num_local_experts": 16})", "mixture-of-experts families, mixtral, qwen2_moe"},
        {R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text"}})", "image-text model"},
        {kSmallGemma2.substr(0, kSmallGemma2.size() - 1) + R"(, "layer_types": ["full_attention"]})",
         "\"layer_types\" must list one type per layer (2)"},
        {kSmallGemma2.substr(0, kSmallGemma2.size() - 1) + R"(, "layer_types": ["full_attention", "chunked"]})",
         "\"layer_types\" entries must be"},
        {kSmallGemma2.substr(0, kSmallGemma2.size() - 1) + R"(, "use_bidirectional_attention": true})",
         "use_bidirectional_attention"},
        {kSmallMixtral.substr(0, kSmallMixtral.size() - 1) + R"(, "num_experts_per_tok": 9})",
         "\"num_experts_per_tok\" must be between 1 and 4"},
        {kSmallMixtral.substr(0, kSmallMixtral.size() - 1) + R"(, "hidden_act": "tanh"})",
         "\"hidden_act\" of the experts must be"},
        {kSmallQwen3Moe.substr(0, kSmallQwen3Moe.size() - 1) + R"(, "mlp_only_layers": 1})",
         "\"mlp_only_layers\" must be a list"},
        {kSmallQwen3Moe.substr(0, kSmallQwen3Moe.size() - 1) + R"(, "mlp_only_layers": [0, 2]})",
         "\"mlp_only_layers\" must hold layer numbers from 0 to 1, got 2"},
        {R"({"model_type": "mixtral", "vocab_size": 1000, "hidden_size": 65536, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 1048576, "num_local_experts": 4096})",
         "absurd sizes"},
        {R"({"model_type": "llama", "vocab_size": 1000, "hidden_size": 131072, "num_hidden_layers": 2,
            "num_attention_heads": 4096, "head_dim": 131072, "intermediate_size": 176})",
         "absurd sizes"},
        {R"({"model_type": "vit", "hidden_size": 131072, "num_hidden_layers": 1, "num_attention_heads": 4,
            "intermediate_size": 176, "image_size": 16384, "patch_size": 1})",
         "absurd sizes"},
        {R"({"model_type": "mpt", "attn_config": {"qk_ln": true}})", "qk_ln (LayerNorms over q and k) is not modelled"},
        {R"({"model_type": "mpt", "attn_config": {"attn_impl": "xformers"}})", "attn_impl \"xformers\" is not one of"},
        {R"({"model_type": "mpt", "norm_type": "rmsnorm"})", "\"norm_type\" \"rmsnorm\" is not supported"},
        {R"({"model_type": "mpt", "ffn_config": {"ffn_type": "te_ln_mlp"}})",
         "ffn_type \"te_ln_mlp\" is not supported"},
        {R"({"model_type": "mpt", "d_model": 64, "n_heads": 5})", "\"d_model\" is not a multiple of \"n_heads\""},
    };
    for (const auto& [text, fragment] : cases) {
        const std::string e = errorOf(text);
        EXPECT_EQ(e.rfind("config.json: ", 0), 0u) << text << " -> " << e;
        EXPECT_NE(e.find(fragment), std::string::npos) << text << " -> " << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
}
