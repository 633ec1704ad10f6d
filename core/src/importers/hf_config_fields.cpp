// The fields each Hugging Face family's config.json adds (hf_config_reader.cpp reads the family, the head
// and the options): the decoders' sizes, attention and MLP variants and experts, the encoders', with
// transformers' own defaults (its 5.x configuration classes) for what a config may leave out.
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
void readDeepseekExperts(Config& c, const Reader& r) {
    c.experts = r.integer("n_routed_experts", 1, kMaxExperts, 256);
    c.topK = r.integer("num_experts_per_tok", 1, c.experts, 8);
    c.expertInner = r.integer("moe_intermediate_size", 1, kMaxIntermediate, 2048);
    const int64_t shared = r.integer("n_shared_experts", 0, kMaxExperts, 1);
    if (shared * c.expertInner > kMaxIntermediate)
        throw ConfigError("\"n_shared_experts\" x \"moe_intermediate_size\" is beyond " + std::to_string(kMaxIntermediate));
    c.sharedExpertInner = shared * c.expertInner;
    c.normTopK = r.boolean("norm_topk_prob", true);
    c.firstDenseLayers = r.integer("first_k_dense_replace", 0, kMaxLayers, 3);
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
    if (c.family == Family::DeepseekV3) return readDeepseekExperts(c, r);
    if (c.family == Family::GptOss) return readGptOssExperts(c, r);
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

// Phi (phi-1, phi-1.5, phi-2; PhiConfig): LayerNorms, q, k, v and dense with biases, partial rotary (0.5 by
// default), optional per-head LayerNorms of q and k, the attention and the MLP in parallel off one norm,
// an lm_head with a bias.
void readPhi(Config& c, const Reader& r) {
    c.kvHeads = r.integer("num_key_value_heads", 1, kMaxHeads, c.heads);
    if (c.heads % c.kvHeads != 0)
        throw ConfigError("\"num_attention_heads\" (" + std::to_string(c.heads) +
                          ") is not a multiple of \"num_key_value_heads\" (" + std::to_string(c.kvHeads) + ")");
    if (c.hidden % c.heads != 0) throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\"");
    c.headDim = c.hidden / c.heads;
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

}  // namespace

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
        r.integer("max_position_embeddings", 1, kMaxPositions, c.family == Family::GptOss ? 131072 : 2048);
    if (gemma2or3(c.family)) {  // Gemma2MLP and Gemma3MLP read hidden_activation
        c.activation = activationOf(r.string("hidden_activation", "gelu_pytorch_tanh"), "hidden_activation");
    } else {
        c.activation = activationOf(r.string("hidden_act", c.family == Family::Gemma     ? "gelu_pytorch_tanh"
                                                           : c.family == Family::GptNeoX ? "gelu"
                                                           : c.family == Family::Phi     ? "gelu_new"
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
    // SmolLM3Config's num_key_value_heads is 4 when absent (the heads when null).
    const bool smolDefault = c.family == Family::SmolLM3 && !r.doc().contains("num_key_value_heads");
    c.kvHeads = r.integer("num_key_value_heads", 1, kMaxHeads, smolDefault ? 4 : c.heads);
    if (c.heads % c.kvHeads != 0)
        throw ConfigError("\"num_attention_heads\" (" + std::to_string(c.heads) +
                          ") is not a multiple of \"num_key_value_heads\" (" + std::to_string(c.kvHeads) + ")");
    const bool defaultHeadDim = !r.has("head_dim");
    const bool gemma = c.family == Family::Gemma || gemma2or3(c.family);
    // Gemma's, Qwen3's and GPT-OSS's configs default head_dim to 256, 128 and 64, whatever the width.
    const bool fixedHeadDim = gemma || c.family == Family::Qwen3 || c.family == Family::GptOss;
    if (defaultHeadDim && !fixedHeadDim && c.hidden % c.heads != 0)
        throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\" (and no \"head_dim\")");
    const int64_t headDim = gemma                         ? 256
                            : c.family == Family::Qwen3  ? 128
                            : c.family == Family::GptOss ? 64
                                                         : c.hidden / c.heads;
    c.headDim = r.integer("head_dim", 1, kMaxHidden, headDim);
    c.eps = r.number("rms_norm_eps", 0, 1, c.family == Family::Phi3 || c.family == Family::GptOss ? 1e-5 : 1e-6);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", gemma || c.family == Family::SmolLM3);
    if (c.family == Family::Qwen2) {
        c.qkvBias = true;  // Qwen2Attention: q, k, v with bias, o_proj without
    } else if (c.family == Family::Llama || c.family == Family::Granite || c.family == Family::Olmo2 || gemma ||
               c.family == Family::Qwen3 || c.family == Family::SmolLM3) {
        c.qkvBias = c.outputBias = r.boolean("attention_bias", false);
    }
    c.qkNormWhole = c.family == Family::Olmo2;
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
    if (c.family == Family::Mixtral || c.family == Family::Qwen2Moe || c.family == Family::Qwen3Moe ||
        c.family == Family::DeepseekV3)
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

// DistilBERT's config (DistilBertConfig): its own names (dim, n_layers, n_heads, hidden_dim), LayerNorms of
// eps 1e-12 and no token types; `dropout` after the embeddings and each FFN, `seq_classif_dropout` in the
// classifier. sinusoidal_pos_embds fills the position table with fixed values, still a parameter.
void readDistilBert(Config& c, const Reader& r) {
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, 30522);
    c.hidden = r.integer("dim", 1, kMaxHidden, 768);
    c.layers = r.integer("n_layers", 1, kMaxLayers, 6);
    c.heads = r.integer("n_heads", 1, kMaxHeads, 12);
    c.kvHeads = c.heads;
    if (c.hidden % c.heads != 0) throw ConfigError("\"dim\" is not a multiple of \"n_heads\"");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.integer("hidden_dim", 1, kMaxIntermediate, 3072);
    c.activation = activationOf(r.string("activation", "gelu"), "activation");
    c.eps = 1e-12;
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 512);
    c.residualDropout = r.number("dropout", 0, 0.999, 0.1);
    c.attentionDropout = r.number("attention_dropout", 0, 0.999, 0.1);
    c.classifierDropout = r.number("seq_classif_dropout", 0, 0.999, 0.2);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.qkvBias = c.outputBias = c.mlpBias = true;
    c.typeVocab = 0;
    c.lossInFp32 = false;
}

// ModernBERT (ModernBertConfig): bias-free LayerNorms and linear layers by default, Wqkv and the GLU MLP's Wi
// (2 x intermediate_size), rotary positions, global attention every global_attn_every_n_layers-th layer
// (from the first) and local attention over local_attention tokens in the others (unless layer_types
// says), the prediction head (dense, classifier_activation, norm) before the decoder and the classifier.
void readModernBert(Config& c, const Reader& r) {
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, 50368);
    c.hidden = r.integer("hidden_size", 1, kMaxHidden, 768);
    c.layers = r.integer("num_hidden_layers", 1, kMaxLayers, 22);
    c.heads = r.integer("num_attention_heads", 1, kMaxHeads, 12);
    c.kvHeads = c.heads;
    if (c.hidden % c.heads != 0) throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\"");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.integer("intermediate_size", 1, kMaxIntermediate, 1152);
    c.activation = activationOf(r.string("hidden_activation", "gelu"), "hidden_activation");
    c.headActivation = activationOf(r.string("classifier_activation", "gelu"), "classifier_activation");
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 8192);
    c.eps = r.number("norm_eps", 0, 1, 1e-5);
    c.normBias = r.boolean("norm_bias", false);
    c.qkvBias = c.outputBias = r.boolean("attention_bias", false);
    c.mlpBias = r.boolean("mlp_bias", false);
    c.headBias = r.boolean("classifier_bias", false);
    c.decoderBias = r.boolean("decoder_bias", true);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.embeddingDropout = r.number("embedding_dropout", 0, 0.999, 0.0);
    c.attentionDropout = r.number("attention_dropout", 0, 0.999, 0.0);
    c.residualDropout = r.number("mlp_dropout", 0, 0.999, 0.0);
    c.classifierDropout = r.number("classifier_dropout", 0, 0.999, 0.0);
    const std::string pooling = r.string("classifier_pooling", "cls");
    if (pooling != "cls" && pooling != "mean")
        throw ConfigError("\"classifier_pooling\" must be \"cls\" or \"mean\", got \"" + pooling + "\"");
    c.meanPooling = pooling == "mean";
    c.localAttention = r.integer("local_attention", 2, kMaxPositions, 128);
    c.slidingWindow = c.localAttention / 2 + 1;  // each token sees local_attention / 2 on either side
    if (r.has("layer_types")) {
        readLayerTypes(c, r, 1);
    } else {
        const int64_t every = r.integer("global_attn_every_n_layers", 1, kMaxLayers, 3);
        c.slidingLayers.assign(static_cast<size_t>(c.layers), false);
        for (int64_t i = 0; i < c.layers; ++i) c.slidingLayers[static_cast<size_t>(i)] = i % every != 0;
    }
    c.padTokenId = r.integer("pad_token_id", 0, kMaxVocab, 50283);
}

void readEncoder(Config& c, const Reader& r) {
    if (c.family == Family::DistilBert) return readDistilBert(c, r);
    if (c.family == Family::ModernBert) return readModernBert(c, r);
    c.hidden = r.integer("hidden_size", 1, kMaxHidden);
    c.layers = r.integer("num_hidden_layers", 1, kMaxLayers);
    c.heads = r.integer("num_attention_heads", 1, kMaxHeads);
    c.kvHeads = c.heads;
    if (c.hidden % c.heads != 0) throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\"");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.integer("intermediate_size", 1, kMaxIntermediate);
    c.activation = activationOf(r.string("hidden_act", "gelu"), "hidden_act");
    c.eps = r.number("layer_norm_eps", 0, 1, 1e-12);
    c.residualDropout = r.number("hidden_dropout_prob", 0, 0.999, c.family == Family::Vit ? 0.0 : 0.1);
    c.attentionDropout = r.number("attention_probs_dropout_prob", 0, 0.999, c.family == Family::Vit ? 0.0 : 0.1);
    c.qkvBias = c.outputBias = c.mlpBias = true;
    if (c.family == Family::Vit) {
        c.qkvBias = r.boolean("qkv_bias", true);
        c.image = r.integer("image_size", 1, kMaxImage, 224);
        c.patch = r.integer("patch_size", 1, kMaxImage, 16);
        c.channels = r.integer("num_channels", 1, 1024, 3);
        if (c.image % c.patch != 0) throw ConfigError("\"image_size\" is not a multiple of \"patch_size\"");
        c.poolerSize = r.integer("pooler_output_size", 1, kMaxHidden, c.hidden);
        const std::string act = r.string("pooler_act", "tanh");
        if (act != "tanh") throw ConfigError("\"pooler_act\" \"" + act + "\" is not supported (tanh)");
        return;
    }
    c.vocab = r.integer("vocab_size", 1, kMaxVocab);
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 512);
    c.typeVocab = r.integer("type_vocab_size", 0, kMaxVocab, 2);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.padTokenId = r.integer("pad_token_id", 0, kMaxVocab, c.family == Family::Roberta ? 1 : 0);
    // BertForMaskedLM's and RobertaForMaskedLM's CrossEntropyLoss takes the logits in the model's dtype.
    c.lossInFp32 = false;
    if (r.has("classifier_dropout")) c.classifierDropout = r.number("classifier_dropout", 0, 0.999, 0.0);
    else c.classifierDropout = c.residualDropout;
}

// BART and mBART (BartConfig, MBartConfig: the same fields and defaults, facebook/bart-large's sizes): an
// encoder of encoder_layers and a decoder of decoder_layers, each with its own heads and MLP width, over
// one d_model; learned positions (max_position_embeddings + 2 rows each); nn.LayerNorm's eps. LayerDrop
// (encoder_layerdrop, decoder_layerdrop) skips whole layers at random in training: not modelled.
void readSeq2Seq(Config& c, const Reader& r) {
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, 50265);
    c.hidden = r.integer("d_model", 1, kMaxHidden, 1024);
    c.layers = r.integer("encoder_layers", 1, kMaxLayers, 12);
    c.decoderLayers = r.integer("decoder_layers", 1, kMaxLayers, 12);
    c.heads = r.integer("encoder_attention_heads", 1, kMaxHeads, 16);
    c.decoderHeads = r.integer("decoder_attention_heads", 1, kMaxHeads, 16);
    if (c.hidden % c.heads != 0 || c.hidden % c.decoderHeads != 0)
        throw ConfigError("\"d_model\" is not a multiple of \"encoder_attention_heads\" and "
                          "\"decoder_attention_heads\"");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.integer("encoder_ffn_dim", 1, kMaxIntermediate, 4096);
    c.decoderIntermediate = r.integer("decoder_ffn_dim", 1, kMaxIntermediate, 4096);
    c.activation = activationOf(r.string("activation_function", "gelu"), "activation_function");
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 1024);
    c.eps = 1e-5;
    c.residualDropout = r.number("dropout", 0, 0.999, 0.1);
    c.attentionDropout = r.number("attention_dropout", 0, 0.999, 0.0);
    c.activationDropout = r.number("activation_dropout", 0, 0.999, 0.0);
    c.scaleEmbedding = r.boolean("scale_embedding", false);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.padTokenId = r.integer("pad_token_id", 0, kMaxVocab, 1);
    c.qkvBias = c.outputBias = c.mlpBias = true;
    c.preNorm = c.family == Family::MBart;
    // BartForConditionalGeneration's CrossEntropyLoss takes the logits in the model's dtype.
    c.lossInFp32 = false;
}


// T5 and mT5 (T5Config, MT5Config: t5-small's and mt5-small's sizes by default): num_layers encoder blocks
// and num_decoder_layers decoder blocks (num_layers by default) of num_heads heads of d_kv features, an
// MLP of d_ff, feed_forward_proj "ACT" or "gated-ACT" ("gated-gelu" is gelu_new), T5LayerNorm's
// layer_norm_epsilon. transformers 5 ties lm_head to the shared embedding whatever the config says; a
// config's tie_word_embeddings false (T5 v1.1, mT5, FLAN-T5) only drops the decoder output's
// d_model^-0.5 scaling. Positions are relative: no table bounds the length.
void readT5(Config& c, const Reader& r) {
    const bool mt5 = c.family == Family::MT5;
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, mt5 ? 250112 : 32128);
    c.hidden = r.integer("d_model", 1, kMaxHidden, 512);
    c.headDim = r.integer("d_kv", 1, kMaxHidden, 64);
    c.intermediate = r.integer("d_ff", 1, kMaxIntermediate, mt5 ? 1024 : 2048);
    c.decoderIntermediate = c.intermediate;
    c.layers = r.integer("num_layers", 1, kMaxLayers, mt5 ? 8 : 6);
    c.decoderLayers = r.integer("num_decoder_layers", 1, kMaxLayers, c.layers);
    c.heads = c.kvHeads = c.decoderHeads = r.integer("num_heads", 1, kMaxHeads, mt5 ? 6 : 8);
    c.relativeBuckets = r.integer("relative_attention_num_buckets", 1, kMaxPositions, 32);
    c.residualDropout = c.attentionDropout = c.activationDropout = r.number("dropout_rate", 0, 0.999, 0.1);
    c.eps = r.number("layer_norm_epsilon", 0, 1, 1e-6);
    const std::string projection = r.string("feed_forward_proj", mt5 ? "gated-gelu" : "relu");
    const size_t dash = projection.find('-');
    c.gatedMlp = dash != std::string::npos;
    if (c.gatedMlp && (projection.substr(0, dash) != "gated" || projection.find('-', dash + 1) != std::string::npos))
        throw ConfigError("\"feed_forward_proj\" must be \"ACT\" or \"gated-ACT\", got \"" + projection + "\"");
    const std::string act = c.gatedMlp ? projection.substr(dash + 1) : projection;
    c.activation = activationOf(projection == "gated-gelu" ? "gelu_new" : act, "feed_forward_proj");
    c.scaleDecoderOutput = r.boolean("tie_word_embeddings", true);
    c.tieEmbeddings = true;
    c.maxPositions = kMaxPositions;
    c.padTokenId = r.integer("pad_token_id", 0, kMaxVocab, 0);
    c.qkvBias = c.outputBias = c.mlpBias = false;
    // T5ForConditionalGeneration's CrossEntropyLoss takes the logits in the model's dtype.
    c.lossInFp32 = false;
}

}  // namespace ts::hf
