// Reads a Hugging Face transformers config.json: the family (model_type), the head (architectures or
// ?head=), the sizes, with transformers' own defaults (5.x configuration classes) for the fields a
// config may leave out, and limits against absurd sizes.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "importers/hf_config.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace ts::hf {
namespace {

using json = nlohmann::json;

// Limits well above every published model (Llama 3.1 405B: hidden 16384, 126 layers, vocab 128256).
constexpr int64_t kMaxHidden = int64_t(1) << 17;
constexpr int64_t kMaxIntermediate = int64_t(1) << 20;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxVocab = int64_t(1) << 24;
constexpr int64_t kMaxPositions = int64_t(1) << 24;
constexpr int64_t kMaxImage = int64_t(1) << 14;
constexpr int64_t kMaxBatch = int64_t(1) << 20;
constexpr int64_t kMaxExperts = 4096;

struct FamilyInfo {
    const char* modelType;
    Family family;
    const char* prefix;  // class-name prefix: "Llama" in LlamaForCausalLM
};
const FamilyInfo kFamilies[] = {
    {"llama", Family::Llama, "Llama"},       {"mistral", Family::Mistral, "Mistral"},
    {"mixtral", Family::Mixtral, "Mixtral"}, {"qwen", Family::Qwen, "QWen"},
    {"qwen2", Family::Qwen2, "Qwen2"},       {"qwen2_moe", Family::Qwen2Moe, "Qwen2Moe"},
    {"qwen3", Family::Qwen3, "Qwen3"},       {"qwen3_moe", Family::Qwen3Moe, "Qwen3Moe"},
    {"deepseek_v3", Family::DeepseekV3, "DeepseekV3"},
    {"gemma", Family::Gemma, "Gemma"},       {"gemma2", Family::Gemma2, "Gemma2"},
    {"gemma3_text", Family::Gemma3, "Gemma3"},
    {"phi3", Family::Phi3, "Phi3"},          {"gpt2", Family::Gpt2, "GPT2"},
    {"gpt_neox", Family::GptNeoX, "GPTNeoX"}, {"bert", Family::Bert, "Bert"},
    {"roberta", Family::Roberta, "Roberta"}, {"vit", Family::Vit, "ViT"},
};

bool isDecoder(Family f) {
    return f != Family::Bert && f != Family::Roberta && f != Family::Vit;
}

class Reader {
public:
    explicit Reader(const json& doc) : doc_(doc) {}

    bool has(const char* key) const {
        auto it = doc_.find(key);
        return it != doc_.end() && !it->is_null();
    }

    // A whole number in [min, max]; `def` when absent (or null), required when def < 0.
    int64_t integer(const char* key, int64_t min, int64_t max, int64_t def = -1) const {
        if (!has(key)) {
            if (def < 0) throw ConfigError(std::string("\"") + key + "\" is missing");
            return def;
        }
        const json& v = doc_.at(key);
        if (!v.is_number_integer())
            throw ConfigError(std::string("\"") + key + "\" must be a whole number, got " + v.dump());
        if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
            throw ConfigError(std::string("\"") + key + "\" is out of range: " + v.dump());
        const int64_t x = v.get<int64_t>();
        if (x < min || x > max)
            throw ConfigError(std::string("\"") + key + "\" must be between " + std::to_string(min) + " and " +
                              std::to_string(max) + ", got " + std::to_string(x));
        return x;
    }

    double number(const char* key, double min, double max, double def) const {
        if (!has(key)) return def;
        const json& v = doc_.at(key);
        if (!v.is_number()) throw ConfigError(std::string("\"") + key + "\" must be a number, got " + v.dump());
        const double x = v.get<double>();
        if (!(x >= min && x <= max))
            throw ConfigError(std::string("\"") + key + "\" must be between " + fmt(min) + " and " + fmt(max) +
                              ", got " + v.dump());
        return x;
    }

    bool boolean(const char* key, bool def) const {
        if (!has(key)) return def;
        const json& v = doc_.at(key);
        if (!v.is_boolean()) throw ConfigError(std::string("\"") + key + "\" must be true or false, got " + v.dump());
        return v.get<bool>();
    }

    std::string string(const char* key, const std::string& def) const {
        if (!has(key)) return def;
        const json& v = doc_.at(key);
        if (!v.is_string()) throw ConfigError(std::string("\"") + key + "\" must be a string, got " + v.dump());
        return v.get<std::string>();
    }

    // A number that transformers 5 keeps in rope_parameters and older configs at the top level.
    double ropeNumber(const char* key, const char* legacyKey, double def) const {
        if (has("rope_parameters")) {
            const json& rope = doc_.at("rope_parameters");
            if (!rope.is_object()) throw ConfigError("\"rope_parameters\" must be an object");
            if (rope.contains(key) && !rope.at(key).is_null()) return Reader(rope).number(key, 0, 1, def);
        }
        if (has(key)) return number(key, 0, 1, def);
        if (legacyKey && has(legacyKey)) return number(legacyKey, 0, 1, def);
        return def;
    }

    const json& doc() const { return doc_; }

private:
    static std::string fmt(double x) {
        char buf[32];
        auto r = std::to_chars(buf, buf + sizeof buf, x);
        return std::string(buf, r.ptr);
    }
    const json& doc_;
};

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

bool headFits(Family f, Head h) {
    switch (h) {
        case Head::CausalLm: return isDecoder(f);
        case Head::MaskedLm: return f == Family::Bert || f == Family::Roberta;
        case Head::SequenceClassification: return f != Family::Vit && f != Family::Qwen;  // Qwen: no such class
        case Head::ImageClassification: return f == Family::Vit;
        case Head::Base: return true;
    }
    return false;
}

// Gemma 3's text classes are Gemma3TextModel and Gemma3TextForSequenceClassification (Gemma3Model and
// Gemma3ForSequenceClassification are the image-text model's).
const char* headSuffix(Family f, Head h) {
    switch (h) {
        case Head::CausalLm: return f == Family::Gpt2 || f == Family::Qwen ? "LMHeadModel" : "ForCausalLM";
        case Head::MaskedLm: return "ForMaskedLM";
        case Head::SequenceClassification:
            return f == Family::Gemma3 ? "TextForSequenceClassification" : "ForSequenceClassification";
        case Head::ImageClassification: return "ForImageClassification";
        case Head::Base: return f == Family::Gemma3 ? "TextModel" : "Model";
    }
    return "Model";
}

Head headOfSuffix(Family f, const std::string& suffix) {
    for (Head h : {Head::CausalLm, Head::MaskedLm, Head::SequenceClassification, Head::ImageClassification, Head::Base})
        if (suffix == headSuffix(f, h)) return h;
    if (suffix == "LMHeadModel" || suffix == "ForCausalLM") return Head::CausalLm;
    throw ConfigError("");
}

// The head: ?head= first, then the first of `architectures`, then the family's usual one.
void chooseHead(Config& c, const Reader& r, const FamilyInfo& fam, const std::map<std::string, std::string>& options) {
    if (auto it = options.find("head"); it != options.end()) {
        const std::map<std::string, Head> names = {{"causal-lm", Head::CausalLm},
                                                   {"masked-lm", Head::MaskedLm},
                                                   {"sequence-classification", Head::SequenceClassification},
                                                   {"image-classification", Head::ImageClassification},
                                                   {"base", Head::Base}};
        auto h = names.find(it->second);
        if (h == names.end())
            throw ConfigError("option 'head' must be one of causal-lm, masked-lm, sequence-classification, "
                              "image-classification, base; got '" + it->second + "'");
        c.head = h->second;
        if (!headFits(c.family, c.head))
            throw ConfigError("option 'head=" + it->second + "' does not apply to model_type \"" + c.modelType + "\"");
    } else if (r.has("architectures")) {
        const json& a = r.doc().at("architectures");
        if (!a.is_array() || a.empty() || !a[0].is_string())
            throw ConfigError("\"architectures\" must be a list of class names");
        const std::string name = a[0].get<std::string>();
        const std::string prefix = fam.prefix;
        bool known = name.rfind(prefix, 0) == 0;
        if (known) {
            try {
                c.head = headOfSuffix(c.family, name.substr(prefix.size()));
            } catch (const ConfigError&) {
                known = false;
            }
        }
        if (!known || !headFits(c.family, c.head)) {
            std::string names;
            for (Head h : {Head::CausalLm, Head::MaskedLm, Head::SequenceClassification, Head::ImageClassification,
                           Head::Base})
                if (headFits(c.family, h)) names += (names.empty() ? "" : ", ") + prefix + headSuffix(c.family, h);
            throw ConfigError("architecture \"" + name + "\" is not supported for model_type \"" + c.modelType +
                              "\" (" + names + "; or choose with ?head=)");
        }
    } else {
        c.head = isDecoder(c.family) ? Head::CausalLm
                 : c.family == Family::Vit ? Head::Base : Head::MaskedLm;
    }
    c.architecture = std::string(fam.prefix) + headSuffix(c.family, c.head);
}

int64_t optionInt(const std::map<std::string, std::string>& options, const std::string& key, int64_t def,
                  int64_t min, int64_t max) {
    auto it = options.find(key);
    if (it == options.end()) return def;
    const std::string& text = it->second;
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        throw ConfigError("option '" + key + "' must be a whole number, got '" + text + "'");
    if (v < min || v > max)
        throw ConfigError("option '" + key + "' must be between " + std::to_string(min) + " and " +
                          std::to_string(max) + ", got " + text);
    return v;
}

// The experts of mixtral (every layer, renormalised top-k) and qwen3_moe (the layers its sparse step
// and mlp_only_layers leave, renormalised when norm_topk_prob).
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

void readExperts(Config& c, const Reader& r) {
    if (c.family == Family::DeepseekV3) return readDeepseekExperts(c, r);
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

// Gemma 2 and Gemma 3's text model: the query scale, the soft caps, and which layers slide. Layer
// types come from `layer_types`, else from Gemma 3's `sliding_window_pattern` (every sixth layer
// global) or Gemma 2's alternation (even layers slide), as their config classes fill them in.
void readGemma2or3(Config& c, const Reader& r) {
    const bool g2 = c.family == Family::Gemma2;
    c.queryPreAttnScalar = r.number("query_pre_attn_scalar", 1e-6, 1e12, 256);
    c.attentionSoftcap = r.number("attn_logit_softcapping", 1e-6, 1e12, g2 ? 50.0 : 0.0);
    c.finalSoftcap = r.number("final_logit_softcapping", 1e-6, 1e12, g2 ? 30.0 : 0.0);
    if (r.boolean("use_bidirectional_attention", false))
        throw ConfigError("\"use_bidirectional_attention\" (an encoder's attention) is not supported: TrainScope "
                          "builds Gemma's causal decoder");
    c.slidingWindow = r.integer("sliding_window", 1, kMaxPositions, 4096);
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
    const int64_t pattern = g2 ? 2 : r.integer("sliding_window_pattern", 1, kMaxLayers, 6);
    for (int64_t i = 0; i < c.layers; ++i) c.slidingLayers[static_cast<size_t>(i)] = (i + 1) % pattern != 0;
}

void readDecoder(Config& c, const Reader& r) {
    if (c.family == Family::Qwen) return readQwen(c, r);
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
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 2048);
    if (gemma2or3(c.family)) {  // Gemma2MLP and Gemma3MLP read hidden_activation
        c.activation = activationOf(r.string("hidden_activation", "gelu_pytorch_tanh"), "hidden_activation");
    } else {
        c.activation = activationOf(r.string("hidden_act", c.family == Family::Gemma ? "gelu_pytorch_tanh"
                                                           : c.family == Family::GptNeoX ? "gelu" : "silu"),
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
    c.kvHeads = r.integer("num_key_value_heads", 1, kMaxHeads, c.heads);
    if (c.heads % c.kvHeads != 0)
        throw ConfigError("\"num_attention_heads\" (" + std::to_string(c.heads) +
                          ") is not a multiple of \"num_key_value_heads\" (" + std::to_string(c.kvHeads) + ")");
    const bool defaultHeadDim = !r.has("head_dim");
    const bool gemma = c.family == Family::Gemma || gemma2or3(c.family);
    if (defaultHeadDim && !gemma && c.family != Family::Qwen3 && c.hidden % c.heads != 0)
        throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\" (and no \"head_dim\")");
    // Gemma's and Qwen3's configs default head_dim to 256 and 128, whatever the width.
    const int64_t headDim = gemma ? 256 : c.family == Family::Qwen3 ? 128 : c.hidden / c.heads;
    c.headDim = r.integer("head_dim", 1, kMaxHidden, headDim);
    c.eps = r.number("rms_norm_eps", 0, 1, c.family == Family::Phi3 ? 1e-5 : 1e-6);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", gemma);
    if (c.family == Family::Qwen2) {
        c.qkvBias = true;  // Qwen2Attention: q, k, v with bias, o_proj without
    } else if (c.family == Family::Llama || gemma || c.family == Family::Qwen3) {
        c.qkvBias = c.outputBias = r.boolean("attention_bias", false);
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
    if (c.family == Family::Llama) c.mlpBias = r.boolean("mlp_bias", false);
    if (c.family == Family::Phi3) {
        c.rotaryFraction = r.ropeNumber("partial_rotary_factor", nullptr, 1.0);
        c.embeddingDropout = r.number("embd_pdrop", 0, 0.999, 0.0);
        c.residualDropout = r.number("resid_pdrop", 0, 0.999, 0.0);
    }
}

void readEncoder(Config& c, const Reader& r) {
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
    if (r.has("classifier_dropout")) c.classifierDropout = r.number("classifier_dropout", 0, 0.999, 0.0);
    else c.classifierDropout = c.residualDropout;
}

}  // namespace

bool Config::slidingLayer(int64_t layer) const {
    return slidingWindow > 0 && layer >= 0 && static_cast<size_t>(layer) < slidingLayers.size() &&
           slidingLayers[static_cast<size_t>(layer)];
}

bool Config::moeLayer(int64_t layer) const {
    if (experts == 0 || layer < firstDenseLayers) return false;
    if (std::find(mlpOnlyLayers.begin(), mlpOnlyLayers.end(), layer) != mlpOnlyLayers.end()) return false;
    return (layer + 1) % sparseStep == 0;
}

const char* familyName(Family f) {
    for (const FamilyInfo& i : kFamilies)
        if (i.family == f) return i.modelType;
    return "?";
}

// Tensor parallelism (Megatron-LM's, PyTorch's ColwiseParallel and RowwiseParallel): each GPU holds
// whole attention heads and key-value groups, a slice of every MLP (and expert) width and of the
// vocabulary; so the degree must divide the heads, the key-value heads and the MLP widths.
void readTensorParallel(Config& c, const std::map<std::string, std::string>& options) {
    c.tensorParallel = optionInt(options, "tensor_parallel", 1, 1, kMaxTensorParallel);
    c.sequenceParallel = optionInt(options, "sequence_parallel", 0, 0, 1) == 1;
    const int64_t t = c.tensorParallel;
    if (c.sequenceParallel && t == 1)
        throw ConfigError("option 'sequence_parallel' splits the tensors between tensor-parallel layers: it needs "
                          "tensor_parallel above 1");
    if (t == 1) return;
    const std::string option = "option 'tensor_parallel=" + std::to_string(t) + "'";
    if (c.family == Family::DeepseekV3)
        throw ConfigError(option + ": tensor parallelism of DeepSeek-V3's latent attention is not modelled");
    if (!isDecoder(c.family))
        throw ConfigError(option + " applies to the decoder families (llama, mistral, mixtral, qwen, qwen2, qwen3, "
                                   "qwen2_moe, qwen3_moe, gemma, gemma2, gemma3_text, phi3, gpt2, gpt_neox), not model_type \"" +
                          c.modelType + "\"");
    auto divides = [&](int64_t n, const std::string& what) {
        if (n % t != 0)
            throw ConfigError(option + " does not divide the " + std::to_string(n) + " " + what +
                              ": each GPU must hold whole ones");
    };
    divides(c.heads, "attention heads");
    divides(c.kvHeads, "key-value heads");
    bool dense = c.experts == 0;
    for (int64_t i = 0; i < c.layers && !dense; ++i) dense = !c.moeLayer(i);
    if (dense) divides(c.intermediate, "MLP features (the intermediate size)");
    if (c.experts > 0) divides(c.expertInner, "features of each expert");
    if (c.sharedExpertInner > 0) divides(c.sharedExpertInner, "features of the shared expert");
}

Config readConfig(const std::string& text, const std::map<std::string, std::string>& options) {
    json doc;
    try {
        auto depthGuard = [](int depth, json::parse_event_t, json&) {
            if (depth > limits::kMaxNesting) throw ConfigError("JSON nesting too deep");
            return true;
        };
        doc = json::parse(text, depthGuard);
    } catch (const json::exception& e) {
        throw ConfigError(std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_object()) throw ConfigError("a Hugging Face config must be a JSON object");
    const Reader r(doc);
    if (!r.has("model_type")) throw ConfigError("\"model_type\" is missing (not a Hugging Face config.json?)");
    Config c;
    c.modelType = r.string("model_type", "");
    const FamilyInfo* fam = nullptr;
    for (const FamilyInfo& i : kFamilies)
        if (c.modelType == i.modelType) fam = &i;
    if (c.modelType == "gemma3")
        throw ConfigError("model_type \"gemma3\" is Gemma 3's image-text model (Gemma3ForConditionalGeneration, with "
                          "its vision tower), which is not supported; its \"text_config\" as a file of its own "
                          "(model_type \"gemma3_text\") gives the text model alone");
    if (!fam) {
        std::string names;
        for (const FamilyInfo& i : kFamilies) names += std::string(names.empty() ? "" : ", ") + i.modelType;
        std::string extra = r.has("num_local_experts") || r.has("num_experts") || r.has("n_routed_experts")
                                ? " (of the mixture-of-experts families, mixtral, qwen2_moe, qwen3_moe and deepseek_v3 are)"
                                : "";
        throw ConfigError("model_type \"" + c.modelType + "\" is not supported" + extra + " (supported: " + names + ")");
    }
    c.family = fam->family;
    for (const auto& [key, value] : options)
        if (key != "seq" && key != "batch" && key != "head" && key != "attention" && key != "tensor_parallel" &&
            key != "sequence_parallel")
            throw ConfigError("unknown option '" + key +
                              "' (a Hugging Face config takes seq, batch, head, attention, tensor_parallel, "
                              "sequence_parallel)");
    chooseHead(c, r, *fam, options);
    if (c.family == Family::Vit) readEncoder(c, r);
    else if (isDecoder(c.family)) readDecoder(c, r);
    else readEncoder(c, r);
    if (c.head == Head::SequenceClassification || c.head == Head::ImageClassification) {
        int64_t labels = 2;
        if (r.has("id2label")) {
            if (!doc.at("id2label").is_object()) throw ConfigError("\"id2label\" must be an object");
            labels = static_cast<int64_t>(doc.at("id2label").size());
        }
        c.numLabels = r.integer("num_labels", 1, kMaxVocab, labels);
        if (c.numLabels < 1) throw ConfigError("\"id2label\" is empty");
    }
    if (c.heads % c.kvHeads != 0 || c.headDim * c.rotaryFraction < 0) throw ConfigError("inconsistent head sizes");
    // The largest weights: embedding, MLP, attention projections, ViT's position table and patch convolution
    // (each factor is bounded above, so the products fit in 64 bits).
    const int64_t patches = c.patch > 0 ? (c.image / c.patch) * (c.image / c.patch) + 1 : 0;
    if (c.hidden * c.vocab > limits::kMaxTensorElements || c.hidden * c.intermediate > limits::kMaxTensorElements ||
        c.hidden * c.heads * c.headDim > limits::kMaxTensorElements ||
        c.hidden * patches > limits::kMaxTensorElements ||
        c.hidden * c.channels * c.patch * c.patch > limits::kMaxTensorElements ||
        c.experts * 2 * c.expertInner * c.hidden > limits::kMaxTensorElements)
        throw ConfigError("absurd sizes: a weight would have more than " + std::to_string(limits::kMaxTensorElements) +
                          " elements");

    // Options: sequence length (learned position tables bound it), batch, attention backend.
    c.batch = optionInt(options, "batch", 1, 1, kMaxBatch);
    if (c.family == Family::Vit) {
        if (options.count("seq")) throw ConfigError("option 'seq' does not apply to vit (the image size fixes it)");
    } else {
        // RoBERTa's positions start after the padding index.
        const int64_t maxSeq = c.family == Family::Roberta ? c.maxPositions - c.padTokenId - 1 : c.maxPositions;
        if (maxSeq < 1) throw ConfigError("\"max_position_embeddings\" leaves no position for a token");
        c.seq = optionInt(options, "seq", std::min<int64_t>(512, maxSeq), 1, maxSeq);
    }
    const bool masked = c.family == Family::Bert || c.family == Family::Roberta;
    // transformers' default: sdpa (flash takes no padding mask); Gemma 2's eager, as sdpa cannot soft-cap.
    // DeepSeek-V3's value heads are narrower than its query and key heads, which PyTorch's flash kernel
    // does not take: sdpa runs the efficient one.
    c.attentionBackend = masked || c.family == Family::DeepseekV3 ? "efficient"
                         : c.family == Family::Gemma2           ? "math"
                                                                : "flash";
    if (auto it = options.find("attention"); it != options.end()) {
        c.attentionByDefault = false;
        if (it->second != "flash" && it->second != "efficient" && it->second != "math")
            throw ConfigError("option 'attention' must be flash, efficient or math, got '" + it->second + "'");
        c.attentionBackend = it->second;
    }
    readTensorParallel(c, options);
    return c;
}

}  // namespace ts::hf

namespace ts {

Graph importHfConfigText(const std::string& text, const std::string& source,
                         const std::map<std::string, std::string>& params) {
    try {
        Graph g = hf::buildModel(hf::readConfig(text, params));
        g.source = source;
        g.format = "huggingface";
        return g;
    } catch (const hf::ConfigError& e) {
        throw ModelError(source, std::string("Hugging Face config: ") + e.what());
    } catch (const ShapeError& e) {
        throw ModelError(source, std::string("Hugging Face config: ") + e.what());
    }
}

}  // namespace ts
