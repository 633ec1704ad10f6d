// The fields each decoder family's config.json adds (hf_config_reader.cpp reads the family, the head and
// the options; hf_config_encoder_fields.cpp the encoders' and encoder-decoders'): sizes, attention and MLP
// variants and experts, with transformers' own defaults (its 5.x configuration classes) for what a config
// may leave out.
#include <algorithm>
#include <string>

#include "importers/hf_config_json.h"

namespace ts::hf {

std::string activationOf(const std::string& name, const char* key) {
    if (name == "silu" || name == "swish") return "Silu";
    if (name == "gelu") return "Gelu";
    // transformers' gelu_new and gelu_fast are Python compositions (NewGELUActivation, FastGELUActivation)
    // whose autograd keeps four tensors and whose eager forward launches a kernel per step;
    // gelu_pytorch_tanh is PyTorch's fused F.gelu(approximate="tanh").
    if (name == "gelu_new" || name == "gelu_fast") return "GeluTanhComposite";
    if (name == "gelu_pytorch_tanh") return "GeluTanh";
    if (name == "relu") return "Relu";
    if (name == "tanh") return "Tanh";
    throw ConfigError(std::string("\"") + key + "\": activation \"" + name +
                      "\" is not supported (silu, gelu, gelu_new, gelu_pytorch_tanh, relu, tanh)");
}

namespace {

// DeepSeek-V3's MoE (DeepseekV3MoE): n_routed_experts routed experts, num_experts_per_tok a token
// (sigmoid scores, chosen within the best topk_group of n_group groups: which experts, not how much
// work, so not read), n_shared_experts folded into one shared MLP, dense layers before
// first_k_dense_replace. Defaults are DeepseekV3Config's (DeepSeek-V3's own sizes).
// GLM-4.5's experts (Glm4MoeMoE) are the same module; Glm4MoeConfig's defaults are GLM-4.5-Air's sizes.
void readDeepseekExperts(Config& c, const Reader& r) {
    const bool glm = c.family == Family::Glm4Moe;
    c.experts = r.integer("n_routed_experts", 1, kMaxExperts, glm ? 128 : 256);
    c.topK = r.integer("num_experts_per_tok", 1, c.experts, 8);
    c.expertInner = r.integer("moe_intermediate_size", 1, kMaxIntermediate, glm ? 1408 : 2048);
    const int64_t shared = r.integer("n_shared_experts", 0, kMaxExperts, 1);
    if (shared * c.expertInner > kMaxIntermediate)
        throw ConfigError("\"n_shared_experts\" x \"moe_intermediate_size\" is beyond " + std::to_string(kMaxIntermediate));
    c.sharedExpertInner = shared * c.expertInner;
    c.normTopK = r.boolean("norm_topk_prob", true);
    c.firstDenseLayers = r.integer("first_k_dense_replace", 0, kMaxLayers, glm ? 1 : 3);
    if (c.activation != "Silu" && c.activation != "Gelu" && c.activation != "GeluTanh" && c.activation != "Relu")
        throw ConfigError("\"hidden_act\" of the experts must be silu, gelu, gelu_pytorch_tanh or relu");
}

// DeepSeek-V3's multi-head latent attention sizes (DeepseekV3Attention).
void readLatentAttention(Config& c, const Reader& r) {
    // null: one q_proj (DeepSeek-V2-Lite's form); absent: the config class's 1536.
    const bool oneQProj = r.doc().contains("q_lora_rank") && r.doc().at("q_lora_rank").is_null();
    c.qLoraRank = oneQProj ? 0 : r.integer("q_lora_rank", 1, kMaxHidden, 1536);
    c.kvLoraRank = r.integer("kv_lora_rank", 1, kMaxHidden, 512);
    c.qkNopeDim = r.integer("qk_nope_head_dim", 0, kMaxHidden, 128);
    c.qkRopeDim = r.integer("qk_rope_head_dim", 0, kMaxHidden, 64);
    c.vHeadDim = r.integer("v_head_dim", 1, kMaxHidden, 128);
    if (c.qkNopeDim == 0 || c.qkRopeDim == 0)
        throw ConfigError("\"qk_nope_head_dim\" and \"qk_rope_head_dim\" must both be positive (DeepSeek-V3's "
                          "heads have features with and without position)");
    if (c.qkRopeDim % 2 != 0) throw ConfigError("\"qk_rope_head_dim\" must be even (rotary pairs)");
    c.headDim = c.qkNopeDim + c.qkRopeDim;
    c.kvHeads = c.heads;  // the latent is expanded to every head
    c.qkvBias = c.outputBias = r.boolean("attention_bias", false);
}

// GPT-OSS's experts (GptOssExperts, GptOssTopKRouter): num_local_experts in every layer, the softmax over
// each token's top num_experts_per_tok router logits (the renormalised top-k of the softmax over all),
// biases on the router and both expert products, the clamped SwiGLU of swiglu_alpha and swiglu_limit
// over intermediate_size features. Defaults are GptOssConfig's (gpt-oss-120b's sizes).
void readGptOssExperts(Config& c, const Reader& r) {
    c.experts = r.integer(r.has("num_local_experts") ? "num_local_experts" : "num_experts", 1, kMaxExperts, 128);
    c.topK = r.integer("num_experts_per_tok", 1, c.experts, 4);
    c.expertInner = c.intermediate;
    c.normTopK = true;
    c.expertBias = true;
    c.swigluAlpha = r.number("swiglu_alpha", -1e6, 1e6, 1.702);
    c.swigluLimit = r.number("swiglu_limit", 1e-6, 1e12, 7.0);
    c.activation = "ClampedSwiglu";
}

// The experts of mixtral (every layer, renormalised top-k) and qwen3_moe (the layers its sparse step
// and mlp_only_layers leave, renormalised when norm_topk_prob).
void readExperts(Config& c, const Reader& r) {
    if (c.family == Family::DeepseekV3 || c.family == Family::Glm4Moe) return readDeepseekExperts(c, r);
    if (c.family == Family::GptOss) return readGptOssExperts(c, r);
    if (c.family == Family::Olmoe) {  // OlmoeExperts: num_experts of intermediate_size in every layer
        c.experts = r.integer(r.has("num_local_experts") ? "num_local_experts" : "num_experts", 1, kMaxExperts, 64);
        c.topK = r.integer("num_experts_per_tok", 1, c.experts, 8);
        c.expertInner = c.intermediate;
        c.normTopK = r.boolean("norm_topk_prob", false);
        if (c.activation != "Silu" && c.activation != "Gelu" && c.activation != "GeluTanh" && c.activation != "Relu")
            throw ConfigError("\"hidden_act\" of the experts must be silu, gelu, gelu_pytorch_tanh or relu");
        return;
    }
    const bool mixtral = c.family == Family::Mixtral, qwen2 = c.family == Family::Qwen2Moe;
    // transformers 5 writes num_local_experts for both (num_experts is its alias); Qwen's configs say num_experts.
    // The defaults are the config classes': Mixtral 8x7B's, Qwen1.5-MoE-A2.7B's and Qwen3-30B-A3B's.
    const char* expertsKey = r.has("num_local_experts") ? "num_local_experts" : "num_experts";
    c.experts = r.integer(expertsKey, 1, kMaxExperts, mixtral ? 8 : qwen2 ? 60 : 128);
    c.topK = r.integer("num_experts_per_tok", 1, c.experts, mixtral ? 2 : qwen2 ? 4 : 8);
    c.expertInner =
        mixtral ? c.intermediate : r.integer("moe_intermediate_size", 1, kMaxIntermediate, qwen2 ? 1408 : 768);
    if (qwen2) c.sharedExpertInner = r.integer("shared_expert_intermediate_size", 1, kMaxIntermediate, 5632);
    if (c.activation != "Silu" && c.activation != "Gelu" && c.activation != "GeluTanh" && c.activation != "Relu")
        throw ConfigError("\"hidden_act\" of the experts must be silu, gelu, gelu_pytorch_tanh or relu");
    if (mixtral) return;
    c.normTopK = r.boolean("norm_topk_prob", false);
    c.sparseStep = r.integer("decoder_sparse_step", 1, kMaxLayers, 1);
    if (r.has("mlp_only_layers")) {
        const json& layers = r.doc().at("mlp_only_layers");
        if (!layers.is_array()) throw ConfigError("\"mlp_only_layers\" must be a list of layer numbers");
        for (const json& l : layers) {
            if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= c.layers)
                throw ConfigError("\"mlp_only_layers\" must hold layer numbers from 0 to " +
                                  std::to_string(c.layers - 1) + ", got " + l.dump());
            c.mlpOnlyLayers.push_back(l.get<int64_t>());
        }
    }
}

// Qwen (v1)'s config.json (QWenConfig of its remote code): QWenMLP is w1 and w2 of intermediate_size / 2
// features each and c_proj; c_attn (q | k | v, always with a bias) and c_proj of kv_channels per head;
// no_bias drops the other biases.
void readQwen(Config& c, const Reader& r) {
    c.vocab = r.integer("vocab_size", 1, kMaxVocab);
    c.hidden = r.integer("hidden_size", 1, kMaxHidden);
    c.layers = r.integer("num_hidden_layers", 1, kMaxLayers);
    c.heads = r.integer("num_attention_heads", 1, kMaxHeads);
    c.kvHeads = c.heads;
    if (!r.has("kv_channels") && c.hidden % c.heads != 0)
        throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\" (and no \"kv_channels\")");
    c.headDim = r.integer("kv_channels", 1, kMaxHidden, c.hidden / c.heads);
    const int64_t intermediate = r.integer("intermediate_size", 2, kMaxIntermediate);
    if (intermediate % 2 != 0) throw ConfigError("\"intermediate_size\" must be even (QWenMLP halves it)");
    c.intermediate = intermediate / 2;
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 8192);
    c.activation = "Silu";
    c.eps = r.number("layer_norm_epsilon", 0, 1, 1e-6);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", false);
    c.qkvBias = true;
    c.outputBias = c.mlpBias = !r.boolean("no_bias", true);
    c.rotaryFraction = r.number("rotary_pct", 0, 1, 1.0);
    c.embeddingDropout = r.number("emb_dropout_prob", 0, 0.999, 0.0);
    c.attentionDropout = r.number("attn_dropout_prob", 0, 0.999, 0.0);
    c.lossInFp32 = false;
}

bool gemma2or3(Family f) {
    return f == Family::Gemma2 || f == Family::Gemma3;
}

// Gemma 2 and Gemma 3's text model: the query scale, the soft caps, and which layers slide (Gemma 2's
// alternation, Gemma 3's every sixth layer global, unless `layer_types` says).
void readGemma2or3(Config& c, const Reader& r) {
    const bool g2 = c.family == Family::Gemma2;
    c.queryPreAttnScalar = r.number("query_pre_attn_scalar", 1e-6, 1e12, 256);
    c.attentionSoftcap = r.number("attn_logit_softcapping", 1e-6, 1e12, g2 ? 50.0 : 0.0);
    c.finalSoftcap = r.number("final_logit_softcapping", 1e-6, 1e12, g2 ? 30.0 : 0.0);
    if (r.boolean("use_bidirectional_attention", false))
        throw ConfigError("\"use_bidirectional_attention\" (an encoder's attention) is not supported: TrainScope "
                          "builds Gemma's causal decoder");
    c.slidingWindow = r.integer("sliding_window", 1, kMaxPositions, 4096);
    readLayerTypes(c, r, g2 ? 2 : r.integer("sliding_window_pattern", 1, kMaxLayers, 6));
}

// SmolLM3 (SmolLM3Config): Llama with NoPE layers, no_rope_layers' zeros (else every
// no_rope_layer_interval-th layer, 4), and windows of sliding_window only where use_sliding_window (the
// layers layer_types marks, else the NoPE ones).
void readSmolLM3(Config& c, const Reader& r) {
    c.noRopeLayers.assign(static_cast<size_t>(c.layers), false);
    if (r.has("no_rope_layers")) {
        const json& flags = r.doc().at("no_rope_layers");
        if (!flags.is_array() || flags.size() != static_cast<size_t>(c.layers))
            throw ConfigError("\"no_rope_layers\" must list one 0 or 1 per layer (" + std::to_string(c.layers) + ")");
        for (size_t i = 0; i < flags.size(); ++i) {
            if (!flags[i].is_number_integer() || (flags[i].get<int64_t>() != 0 && flags[i].get<int64_t>() != 1))
                throw ConfigError("\"no_rope_layers\" entries must be 0 (no rotary embedding) or 1, got " +
                                  flags[i].dump());
            c.noRopeLayers[i] = flags[i].get<int64_t>() == 0;
        }
    } else {
        const int64_t interval = r.integer("no_rope_layer_interval", 1, kMaxLayers, 4);
        for (int64_t i = 0; i < c.layers; ++i) c.noRopeLayers[static_cast<size_t>(i)] = (i + 1) % interval == 0;
    }
    if (!r.boolean("use_sliding_window", false) || !r.has("sliding_window")) return;
    c.slidingWindow = r.integer("sliding_window", 1, kMaxPositions, 0);
    if (r.has("layer_types")) return readLayerTypes(c, r, 1);
    c.slidingLayers = c.noRopeLayers;
}

// Grouped-query heads of hidden_size / num_attention_heads features (no head_dim field): Phi's and StarCoder2's.
void readWholeHeads(Config& c, const Reader& r, int64_t defaultKvHeads) {
    c.kvHeads = r.integer("num_key_value_heads", 1, kMaxHeads, defaultKvHeads);
    if (c.heads % c.kvHeads != 0)
        throw ConfigError("\"num_attention_heads\" (" + std::to_string(c.heads) +
                          ") is not a multiple of \"num_key_value_heads\" (" + std::to_string(c.kvHeads) + ")");
    if (c.hidden % c.heads != 0) throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\"");
    c.headDim = c.hidden / c.heads;
}

// Phi (phi-1, phi-1.5, phi-2; PhiConfig): LayerNorms, q, k, v and dense with biases, partial rotary (0.5 by
// default), optional per-head LayerNorms of q and k, the attention and the MLP in parallel off one norm,
// an lm_head with a bias.
void readPhi(Config& c, const Reader& r) {
    readWholeHeads(c, r, c.heads);
    c.eps = r.number("layer_norm_eps", 0, 1, 1e-5);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", false);
    c.qkvBias = c.outputBias = c.mlpBias = true;
    c.qkLayerNorm = r.boolean("qk_layernorm", false);
    c.rotaryFraction = r.ropeNumber("partial_rotary_factor", nullptr, 0.5);
    c.embeddingDropout = r.number("embd_pdrop", 0, 0.999, 0.0);
    c.residualDropout = r.number("resid_pdrop", 0, 0.999, 0.0);
}

// GPT-OSS (GptOssConfig): attention with biases and a sink per head, windows of sliding_window (128;
// null: none) in alternate layers, and experts in every layer.
void readGptOss(Config& c, const Reader& r) {
    c.qkvBias = c.outputBias = r.boolean("attention_bias", true);
    c.attentionSinks = true;
    const bool noWindow = r.doc().contains("sliding_window") && r.doc().at("sliding_window").is_null();
    c.slidingWindow = noWindow ? 0 : r.integer("sliding_window", 1, kMaxPositions, 128);
    readLayerTypes(c, r, 2);
    readExperts(c, r);
}

// MPT, as MosaicML's remote code and LLM Foundry's MPTModel read its config (transformers' MptConfig
// defaults where a field is absent: no biases, ALiBi): d_model, n_heads, n_layers, the MLP at
// expansion_ratio x d_model (ffn_config's ffn_hidden_size when given; its "mptglu" a gated MLP),
// max_seq_len, no_bias (every bias, the LayerNorms' too), learned_pos_emb (a position table, which
// ALiBi replaces), and attn_config: attn_impl (the kernel, below), alibi, clip_qkv, grouped-query or
// multi-query heads (attn_type, kv_n_heads). The architecture's name says whose loss runs. What would change
// the graph and is not modelled is refused: qk_ln, prefix_lm, rotary positions, other norms and MLPs.
void readMpt(Config& c, const Reader& r) {
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, 50368);
    c.hidden = r.integer("d_model", 1, kMaxHidden, 2048);
    c.heads = r.integer("n_heads", 1, kMaxHeads, 16);
    c.layers = r.integer("n_layers", 1, kMaxLayers, 24);
    if (c.hidden % c.heads != 0) throw ConfigError("\"d_model\" is not a multiple of \"n_heads\"");
    c.headDim = c.hidden / c.heads;
    c.maxPositions = r.integer("max_seq_len", 1, kMaxPositions, 2048);
    c.eps = r.number("layer_norm_epsilon", 0, 1, 1e-5);
    c.embeddingDropout = r.number("emb_pdrop", 0, 0.999, 0.0);
    c.residualDropout = r.number("resid_pdrop", 0, 0.999, 0.0);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    const bool noBias = r.boolean("no_bias", true);
    c.qkvBias = c.outputBias = c.mlpBias = c.normBias = !noBias;
    const std::string norm = r.string("norm_type", "low_precision_layernorm");
    if (norm != "layernorm" && norm != "low_precision_layernorm")
        throw ConfigError("\"norm_type\" \"" + norm + "\" is not supported (layernorm, low_precision_layernorm)");
    const double expansion = r.number("expansion_ratio", 1e-3, 1e3, 4.0);
    c.intermediate = static_cast<int64_t>(static_cast<double>(c.hidden) * expansion);
    c.activation = "Gelu";  // nn.GELU(approximate="none")
    if (r.has("ffn_config")) {
        const json& f = r.doc().at("ffn_config");
        if (!f.is_object()) throw ConfigError("\"ffn_config\" must be an object");
        const Reader ffn(f);
        const std::string type = ffn.string("ffn_type", "mptmlp");
        if (type != "mptmlp" && type != "mptglu")
            throw ConfigError("\"ffn_config\": ffn_type \"" + type + "\" is not supported (mptmlp, mptglu)");
        c.gatedMlp = type == "mptglu";
        c.intermediate = ffn.integer("ffn_hidden_size", 1, kMaxIntermediate, c.intermediate);
    }
    if (c.intermediate < 1 || c.intermediate > kMaxIntermediate)
        throw ConfigError("\"expansion_ratio\" gives an MLP of " + std::to_string(c.intermediate) + " features");
    c.learnedPositions = r.boolean("learned_pos_emb", true);
    c.kvHeads = c.heads;
    c.alibi = true;
    std::string impl = "torch";
    if (r.has("attn_config")) {
        const json& a = r.doc().at("attn_config");
        if (!a.is_object()) throw ConfigError("\"attn_config\" must be an object");
        const Reader attn(a);
        c.alibi = attn.boolean("alibi", true);
        c.attentionDropout = attn.number("attn_pdrop", 0, 0.999, 0.0);
        c.clipQkv = attn.number("clip_qkv", 0, 1e30, 0.0);
        impl = attn.string("attn_impl", "torch");
        if (impl != "torch" && impl != "flash" && impl != "triton")
            throw ConfigError("\"attn_config\": attn_impl \"" + impl + "\" is not one of torch, flash, triton");
        if (attn.boolean("qk_ln", false) || attn.boolean("qk_gn", false))
            throw ConfigError("\"attn_config\": qk_ln (LayerNorms over q and k) is not modelled");
        if (attn.boolean("prefix_lm", false))
            throw ConfigError("\"attn_config\": prefix_lm (a bidirectional prefix) is not modelled");
        if (attn.boolean("rope", false))
            throw ConfigError("\"attn_config\": rope (rotary positions) is not modelled for mpt");
        const std::string type = attn.string("attn_type", "multihead_attention");
        if (type == "multiquery_attention")
            c.kvHeads = 1;
        else if (type == "grouped_query_attention")
            c.kvHeads = attn.integer("kv_n_heads", 1, c.heads);
        else if (type != "multihead_attention")
            throw ConfigError("\"attn_config\": attn_type \"" + type +
                              "\" is not one of multihead_attention, multiquery_attention, grouped_query_attention");
    }
    // The loss: MosaicML's remote code (MPTForCausalLM) takes F.cross_entropy of the logits as they are, and
    // LLM Foundry's Composer model flash-attn's fused cross-entropy (its default loss_fn), which reads them in
    // their dtype too; transformers' MptForCausalLM upcasts them (its loss functions' logits.float()).
    if (r.has("architectures") && r.doc().at("architectures").is_array() && !r.doc().at("architectures").empty() &&
        r.doc().at("architectures")[0].is_string())
        c.lossInFp32 = r.doc().at("architectures")[0].get<std::string>().rfind("MPT", 0) != 0;
    // ALiBi's biases replace the position table (MPTConfig turns learned_pos_emb off with them).
    if (c.alibi) c.learnedPositions = false;
    // attn_impl torch is the eager attention (transformers' MptAttention is eager whatever it says), flash
    // flash-attn's kernel; triton is MosaicML's Triton port of FlashAttention (v1's algorithm, about half
    // FlashAttention-2's speed by FlashAttention-2's paper), timed as the memory-efficient kernels, whose
    // rate here is 60% of the flash kernel's. The option may choose otherwise.
    c.eagerAttention = impl == "torch";
    c.tritonAttention = impl == "triton";
}

// StarCoder2's config (Starcoder2Config): LayerNorms of norm_epsilon (with biases), every linear layer
// with a bias where use_bias, the MLP c_fc -> act -> c_proj, residual_dropout after the attention's and
// the MLP's outputs, embedding_dropout after the embedding, a sliding window in every layer when
// sliding_window is set, tied embeddings. Defaults are the config class's (StarCoder2-7B's sizes).
void readStarcoder2(Config& c, const Reader& r) {
    readWholeHeads(c, r, 2);
    c.eps = r.number("norm_epsilon", 0, 1, 1e-5);
    c.qkvBias = c.outputBias = c.mlpBias = r.boolean("use_bias", true);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.embeddingDropout = r.number("embedding_dropout", 0, 0.999, 0.0);
    c.residualDropout = r.number("residual_dropout", 0, 0.999, 0.0);
    c.slidingWindow = r.integer("sliding_window", 1, kMaxPositions, 0);
    if (c.slidingWindow > 0) c.slidingLayers.assign(static_cast<size_t>(c.layers), true);
}

}  // namespace

// Which layers slide: `layer_types` when given, else every layer but each `pattern`-th (Gemma 2's and
// GPT-OSS's alternation: 2, even layers slide; Gemma 3's sliding_window_pattern: 6), as the config
// classes fill them in.
void readLayerTypes(Config& c, const Reader& r, int64_t pattern) {
    c.slidingLayers.assign(static_cast<size_t>(c.layers), false);
    if (r.has("layer_types")) {
        const json& types = r.doc().at("layer_types");
        if (!types.is_array() || types.size() != static_cast<size_t>(c.layers))
            throw ConfigError("\"layer_types\" must list one type per layer (" + std::to_string(c.layers) + ")");
        for (size_t i = 0; i < types.size(); ++i) {
            const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
            if (t != "sliding_attention" && t != "full_attention")
                throw ConfigError("\"layer_types\" entries must be \"sliding_attention\" or \"full_attention\", got " +
                                  types[i].dump());
            c.slidingLayers[i] = t == "sliding_attention";
        }
        return;
    }
    for (int64_t i = 0; i < c.layers; ++i) c.slidingLayers[static_cast<size_t>(i)] = (i + 1) % pattern != 0;
}

void readDecoder(Config& c, const Reader& r) {
    if (c.family == Family::Qwen) return readQwen(c, r);
    if (c.family == Family::Mpt) return readMpt(c, r);
    const bool gpt2 = c.family == Family::Gpt2;
    c.vocab = r.integer("vocab_size", 1, kMaxVocab);
    c.hidden = r.integer(gpt2 ? "n_embd" : "hidden_size", 1, kMaxHidden);
    c.layers = r.integer(gpt2 ? "n_layer" : "num_hidden_layers", 1, kMaxLayers);
    c.heads = r.integer(gpt2 ? "n_head" : "num_attention_heads", 1, kMaxHeads);
    if (gpt2) {
        c.intermediate = r.integer("n_inner", 1, kMaxIntermediate, 4 * c.hidden);
        c.maxPositions = r.integer("n_positions", 1, kMaxPositions, 1024);
        c.activation = activationOf(r.string("activation_function", "gelu_new"), "activation_function");
        c.eps = r.number("layer_norm_epsilon", 0, 1, 1e-5);
        c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
        c.embeddingDropout = r.number("embd_pdrop", 0, 0.999, 0.1);
        c.attentionDropout = r.number("attn_pdrop", 0, 0.999, 0.1);
        c.residualDropout = r.number("resid_pdrop", 0, 0.999, 0.1);
        c.kvHeads = c.heads;
        c.headDim = c.hidden / c.heads;
        if (c.hidden % c.heads != 0) throw ConfigError("\"n_embd\" is not a multiple of \"n_head\"");
        return;
    }
    c.intermediate = r.integer("intermediate_size", 1, kMaxIntermediate);
    c.maxPositions =
        r.integer("max_position_embeddings", 1, kMaxPositions,
                  c.family == Family::GptOss || c.family == Family::Glm4Moe || c.family == Family::Glm4 ? 131072
                  : c.family == Family::Olmoe || c.family == Family::Starcoder2                         ? 4096
                                                                                                        : 2048);
    if (gemma2or3(c.family)) {  // Gemma2MLP and Gemma3MLP read hidden_activation
        c.activation = activationOf(r.string("hidden_activation", "gelu_pytorch_tanh"), "hidden_activation");
    } else {
        c.activation = activationOf(
            r.string("hidden_act", c.family == Family::Gemma || c.family == Family::Starcoder2 ? "gelu_pytorch_tanh"
                                   : c.family == Family::GptNeoX                               ? "gelu"
                                   : c.family == Family::Phi                                   ? "gelu_new"
                                                                                               : "silu"),
            "hidden_act");
    }
    c.attentionDropout = r.number("attention_dropout", 0, 0.999, 0.0);
    if (c.family == Family::GptNeoX) {
        c.kvHeads = c.heads;
        if (c.hidden % c.heads != 0)
            throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\"");
        c.headDim = c.hidden / c.heads;
        c.eps = r.number("layer_norm_eps", 0, 1, 1e-5);
        c.tieEmbeddings = r.boolean("tie_word_embeddings", false);
        c.qkvBias = c.outputBias = r.boolean("attention_bias", true);
        c.mlpBias = true;
        c.parallelResidual = r.boolean("use_parallel_residual", true);
        c.rotaryFraction = r.ropeNumber("partial_rotary_factor", "rotary_pct", 0.25);
        c.residualDropout = r.number("hidden_dropout", 0, 0.999, 0.0);
        return;
    }
    if (c.family == Family::Phi) return readPhi(c, r);
    if (c.family == Family::Starcoder2) return readStarcoder2(c, r);
    // SmolLM3Config's num_key_value_heads is 4 when absent (the heads when null).
    const bool smolDefault = c.family == Family::SmolLM3 && !r.doc().contains("num_key_value_heads");
    c.kvHeads = r.integer("num_key_value_heads", 1, kMaxHeads, smolDefault ? 4 : c.heads);
    if (c.heads % c.kvHeads != 0)
        throw ConfigError("\"num_attention_heads\" (" + std::to_string(c.heads) +
                          ") is not a multiple of \"num_key_value_heads\" (" + std::to_string(c.kvHeads) + ")");
    const bool defaultHeadDim = !r.has("head_dim");
    const bool gemma = c.family == Family::Gemma || gemma2or3(c.family);
    // Gemma's, Qwen3's, GLM-4's and GPT-OSS's configs default head_dim to 256, 128, 128 and 64, whatever the width.
    const bool fixedHeadDim =
        gemma || c.family == Family::Qwen3 || c.family == Family::Glm4 || c.family == Family::GptOss;
    if (defaultHeadDim && !fixedHeadDim && c.hidden % c.heads != 0)
        throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\" (and no \"head_dim\")");
    const int64_t headDim = gemma                                                   ? 256
                            : c.family == Family::Qwen3 || c.family == Family::Glm4 ? 128
                            : c.family == Family::GptOss                            ? 64
                                                                                    : c.hidden / c.heads;
    c.headDim = r.integer("head_dim", 1, kMaxHidden, headDim);
    const bool eps5 = c.family == Family::Phi3 || c.family == Family::GptOss || c.family == Family::Glm4Moe ||
                      c.family == Family::Olmoe || c.family == Family::Olmo3;
    c.eps = r.number("rms_norm_eps", 0, 1, c.family == Family::Glm4 ? 1.5625e-7 : eps5 ? 1e-5 : 1e-6);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", gemma || c.family == Family::SmolLM3);
    if (c.family == Family::Qwen2) {
        c.qkvBias = true;  // Qwen2Attention: q, k, v with bias, o_proj without
    } else if (c.family == Family::Llama || c.family == Family::Granite || c.family == Family::Olmo2 ||
               c.family == Family::Olmo3 || gemma || c.family == Family::Qwen3 || c.family == Family::SmolLM3) {
        c.qkvBias = c.outputBias = r.boolean("attention_bias", false);
    }
    c.qkNormWhole = c.family == Family::Olmo2 || c.family == Family::Olmo3;
    if (c.family == Family::Olmo3) {  // windows of sliding_window (4096; null: none) in three layers of four
        c.slidingWindow = r.integer("sliding_window", 1, kMaxPositions, r.doc().contains("sliding_window") ? 0 : 4096);
        readLayerTypes(c, r, 4);
    }
    if (c.family == Family::Glm4) {  // Glm4Attention: q, k, v with attention_bias (o_proj without), half rotated
        c.qkvBias = r.boolean("attention_bias", true);
        c.rotaryFraction = r.ropeNumber("partial_rotary_factor", nullptr, 0.5);
    }
    if (c.family == Family::Granite) {
        c.embeddingMultiplier = r.number("embedding_multiplier", -1e12, 1e12, 1.0);
        c.residualMultiplier = r.number("residual_multiplier", -1e12, 1e12, 1.0);
        c.attentionMultiplier = r.number("attention_multiplier", -1e12, 1e12, 1.0);
        c.logitsScaling = r.number("logits_scaling", 1e-12, 1e12, 1.0);
    }
    c.qkNorm = c.family == Family::Qwen3 || c.family == Family::Qwen3Moe || c.family == Family::Gemma3;
    if (c.family == Family::Qwen2Moe) c.qkvBias = r.boolean("qkv_bias", true);  // o_proj has none
    if (gemma2or3(c.family)) readGemma2or3(c, r);
    if (c.family == Family::Mistral) {  // every layer windowed when sliding_window is set (Mistral 7B v0.1)
        c.slidingWindow = r.integer("sliding_window", 1, kMaxPositions, 0);
        if (c.slidingWindow > 0) c.slidingLayers.assign(static_cast<size_t>(c.layers), true);
    }
    if (c.family == Family::Qwen3Moe) c.qkvBias = c.outputBias = r.boolean("attention_bias", false);
    if (c.family == Family::Glm4Moe) {
        // Glm4MoeAttention: q, k and v with attention_bias, o_proj without; q_norm and k_norm over each
        // head where use_qk_norm; half of each head rotated unless partial_rotary_factor says otherwise.
        c.qkvBias = r.boolean("attention_bias", false);
        c.qkNorm = r.boolean("use_qk_norm", false);
        c.rotaryFraction = r.ropeNumber("partial_rotary_factor", nullptr, 0.5);
    }
    if (c.family == Family::Olmoe) {
        // OlmoeAttention: q_norm and k_norm over the whole projections (as OLMo 2's), q, k and v each
        // clamped in place at clip_qkv (null: not clamped), layers pre-norm as Llama's.
        c.qkvBias = c.outputBias = r.boolean("attention_bias", false);
        c.qkNormWhole = true;
        c.clipQkv = r.number("clip_qkv", 1e-30, 1e30, 0.0);
    }
    if (c.family == Family::Mixtral || c.family == Family::Qwen2Moe || c.family == Family::Qwen3Moe ||
        c.family == Family::DeepseekV3 || c.family == Family::Glm4Moe || c.family == Family::Olmoe)
        readExperts(c, r);
    if (c.family == Family::DeepseekV3) readLatentAttention(c, r);
    if (c.family == Family::GptOss) readGptOss(c, r);
    if (c.family == Family::Llama || c.family == Family::Granite || c.family == Family::SmolLM3)
        c.mlpBias = r.boolean("mlp_bias", false);
    if (c.family == Family::SmolLM3) readSmolLM3(c, r);
    if (c.family == Family::Phi3) {
        c.rotaryFraction = r.ropeNumber("partial_rotary_factor", nullptr, 1.0);
        c.embeddingDropout = r.number("embd_pdrop", 0, 0.999, 0.0);
        c.residualDropout = r.number("resid_pdrop", 0, 0.999, 0.0);
    }
}

}  // namespace ts::hf
