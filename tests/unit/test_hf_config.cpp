// A Hugging Face config.json as a model source: parameter counts of published configs (as transformers
// counts them), module paths and the families' structure as their modeling code runs, options, the
// RMSNorm and rotary operators' costs against formulas written here, and one-line errors for bad
// configs. test_hf_operator_costs.cpp has the attention's and the experts' costs;
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
    };
    for (const auto& [file, params] : expected) {
        ts::Graph g = ts::loadModel(kConfigs + file);
        EXPECT_EQ(g.parameterCount(), params) << file;
        EXPECT_EQ(g.format, "huggingface") << file;
    }
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
        {R"({"model_type": "olmoe", "num_experts": 64})", "mixture-of-experts families, mixtral, qwen2_moe"},
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
        "num_attention_heads": 4, "intermediate_size": 128})", {{"tensor_parallel", "2"}}).find("not modelled"),
              std::string::npos);

    const ts::Graph granite = ts::loadModel(kConfigs + "granite-3.1-8b.json?seq=64");
    std::vector<double> scalars;  // the constants of scalar multiplications outside the norms and the attention
    for (const ts::Operation& op : granite.ops) {
        if (op.type != "Mul" || op.modulePath.find("norm") != std::string::npos || op.inputs.size() != 2)
            continue;
        const ts::Value& k = granite.values[size_t(op.inputs[1])];
        if (k.kind == ts::ValueKind::Constant && k.floatData && !k.floatData->empty()) scalars.push_back((*k.floatData)[0]);
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
        "intermediate_size": 128})").find("is not supported"), std::string::npos);
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
    EXPECT_NE(errorOf(R"({"model_type": "modernbert", "classifier_pooling": "max"})").find(
                  "\"classifier_pooling\" must be \"cls\" or \"mean\", got \"max\""),
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
              "[64, 32]");  // 4 key-value heads of 8
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
