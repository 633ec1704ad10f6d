// Reads a Hugging Face transformers config.json: the family (model_type), the head (architectures or
// ?head=), the options, and limits against absurd sizes; hf_config_fields.cpp (decoders) and
// hf_config_encoder_fields.cpp (encoders, encoder-decoders) read each family's sizes and fields, with
// transformers' own defaults (5.x configuration classes).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "importers/hf_config.h"
#include "importers/hf_config_json.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace ts::hf {
namespace {

struct FamilyInfo {
    const char* modelType;
    Family family;
    const char* prefix;  // class-name prefix: "Llama" in LlamaForCausalLM
};
const FamilyInfo kFamilies[] = {
    {"llama", Family::Llama, "Llama"},
    {"granite", Family::Granite, "Granite"},
    {"smollm3", Family::SmolLM3, "SmolLM3"},
    {"olmo2", Family::Olmo2, "Olmo2"},
    {"olmo3", Family::Olmo3, "Olmo3"},
    {"glm4", Family::Glm4, "Glm4"},
    {"mistral", Family::Mistral, "Mistral"},
    {"mixtral", Family::Mixtral, "Mixtral"},
    {"qwen", Family::Qwen, "QWen"},
    {"qwen2", Family::Qwen2, "Qwen2"},
    {"qwen2_moe", Family::Qwen2Moe, "Qwen2Moe"},
    {"qwen3", Family::Qwen3, "Qwen3"},
    {"qwen3_moe", Family::Qwen3Moe, "Qwen3Moe"},
    {"deepseek_v3", Family::DeepseekV3, "DeepseekV3"},
    {"glm4_moe", Family::Glm4Moe, "Glm4Moe"},
    {"olmoe", Family::Olmoe, "Olmoe"},
    {"gpt_oss", Family::GptOss, "GptOss"},
    {"gemma", Family::Gemma, "Gemma"},
    {"gemma2", Family::Gemma2, "Gemma2"},
    {"gemma3_text", Family::Gemma3, "Gemma3"},
    {"phi", Family::Phi, "Phi"},
    {"phi3", Family::Phi3, "Phi3"},
    {"gpt2", Family::Gpt2, "GPT2"},
    {"gpt_neox", Family::GptNeoX, "GPTNeoX"},
    {"mpt", Family::Mpt, "Mpt"},
    {"starcoder2", Family::Starcoder2, "Starcoder2"},
    {"bert", Family::Bert, "Bert"},
    {"roberta", Family::Roberta, "Roberta"},
    {"xlm-roberta", Family::Roberta, "XLMRoberta"},
    {"distilbert", Family::DistilBert, "DistilBert"},
    {"modernbert", Family::ModernBert, "ModernBert"},
    {"vit", Family::Vit, "ViT"},
    {"bart", Family::Bart, "Bart"},
    {"mbart", Family::MBart, "MBart"},
    {"t5", Family::T5, "T5"},
    {"mt5", Family::MT5, "MT5"},
};

bool isEncoderDecoder(Family f) {
    return f == Family::Bart || f == Family::MBart || f == Family::T5 || f == Family::MT5;
}

bool hasExperts(Family f) {
    return f == Family::Mixtral || f == Family::Qwen2Moe || f == Family::Qwen3Moe || f == Family::DeepseekV3 ||
           f == Family::Glm4Moe || f == Family::Olmoe || f == Family::GptOss;
}

// The mixture-of-experts families' model_type names, for messages.
std::string expertFamilies() {
    std::string names;
    for (const FamilyInfo& i : kFamilies)
        if (hasExperts(i.family)) names += std::string(names.empty() ? "" : ", ") + i.modelType;
    return names;
}

bool isDecoder(Family f) {
    return f != Family::Bert && f != Family::Roberta && f != Family::DistilBert && f != Family::ModernBert &&
           f != Family::Vit && !isEncoderDecoder(f);
}

// Every head, in the order the messages list them.
constexpr Head kHeads[] = {Head::CausalLm, Head::MaskedLm,          Head::SequenceClassification,
                           Head::ImageClassification, Head::Seq2SeqLm, Head::Base};

bool headFits(Family f, Head h) {
    switch (h) {
        case Head::CausalLm: return isDecoder(f);
        case Head::MaskedLm:
            return f == Family::Bert || f == Family::Roberta || f == Family::DistilBert || f == Family::ModernBert;
        case Head::SequenceClassification:  // Qwen (v1), Granite, GLM-4.5 and OLMoE have no such class; BART's
                                            // is not modelled
            return f != Family::Vit && f != Family::Qwen && f != Family::Granite && f != Family::Glm4Moe &&
                   f != Family::Olmoe && !isEncoderDecoder(f);
        case Head::ImageClassification: return f == Family::Vit;
        case Head::Seq2SeqLm: return isEncoderDecoder(f);
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
        case Head::Seq2SeqLm: return "ForConditionalGeneration";
        case Head::Base: return f == Family::Gemma3 ? "TextModel" : "Model";
    }
    return "Model";
}

Head headOfSuffix(Family f, const std::string& suffix) {
    for (Head h : kHeads)
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
                                                   {"seq2seq-lm", Head::Seq2SeqLm},
                                                   {"base", Head::Base}};
        auto h = names.find(it->second);
        if (h == names.end())
            throw ConfigError("option 'head' must be one of causal-lm, masked-lm, sequence-classification, "
                              "image-classification, seq2seq-lm, base; got '" + it->second + "'");
        c.head = h->second;
        if (!headFits(c.family, c.head))
            throw ConfigError("option 'head=" + it->second + "' does not apply to model_type \"" + c.modelType + "\"");
    } else if (r.has("architectures")) {
        const json& a = r.doc().at("architectures");
        if (!a.is_array() || a.empty() || !a[0].is_string())
            throw ConfigError("\"architectures\" must be a list of class names");
        const std::string name = a[0].get<std::string>();
        const std::string prefix = fam.prefix;
        // Case aside: MosaicML's remote code names MPT's classes MPTForCausalLM, transformers MptForCausalLM.
        bool known =
            name.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), name.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
            });
        if (known) {
            try {
                c.head = headOfSuffix(c.family, name.substr(prefix.size()));
            } catch (const ConfigError&) {
                known = false;
            }
        }
        if (!known || !headFits(c.family, c.head)) {
            std::string names;
            for (Head h : kHeads)
                if (headFits(c.family, h)) names += (names.empty() ? "" : ", ") + prefix + headSuffix(c.family, h);
            throw ConfigError("architecture \"" + name + "\" is not supported for model_type \"" + c.modelType +
                              "\" (" + names + "; or choose with ?head=)");
        }
        c.architecture = name;  // as the config writes it (MosaicML's MPTForCausalLM)
        return;
    } else {
        c.head = isDecoder(c.family)          ? Head::CausalLm
                 : isEncoderDecoder(c.family) ? Head::Seq2SeqLm
                 : c.family == Family::Vit    ? Head::Base
                                              : Head::MaskedLm;
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
    if (c.qkNormWhole)
        throw ConfigError(option + ": " +
                          (c.family == Family::Olmo2   ? "OLMo 2"
                           : c.family == Family::Olmo3 ? "OLMo 3"
                                                       : "OLMoE") +
                          "'s q_norm and k_norm normalise the whole projection, across the heads a GPU would hold; "
                          "not modelled");
    if (!isDecoder(c.family)) {
        std::string decoders;
        for (const FamilyInfo& i : kFamilies)
            if (isDecoder(i.family) && i.family != Family::DeepseekV3 && i.family != Family::Olmo2 &&
                i.family != Family::Olmo3 && i.family != Family::Olmoe)
                decoders += std::string(decoders.empty() ? "" : ", ") + i.modelType;
        throw ConfigError(option + " applies to the decoder families (" + decoders + "), not model_type \"" +
                          c.modelType + "\"");
    }
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

// Expert parallelism (torchtitan's, Megatron-LM's --expert-model-parallel-size, DeepSpeed-MoE's): each
// GPU of a group holds whole routed experts, so the degree must divide their number.
void readExpertParallel(Config& c, const std::map<std::string, std::string>& options) {
    c.expertParallel = optionInt(options, "expert_parallel", 1, 1, kMaxExpertParallel);
    const int64_t e = c.expertParallel;
    if (e == 1) return;
    const std::string option = "option 'expert_parallel=" + std::to_string(e) + "'";
    if (c.experts == 0)
        throw ConfigError(option + " splits the routed experts of a mixture-of-experts model (" + expertFamilies() +
                          "); model_type \"" + c.modelType + "\" has none");
    if (c.experts % e != 0)
        throw ConfigError(option + " does not divide the " + std::to_string(c.experts) +
                          " routed experts: each GPU must hold whole ones");
    if (c.tensorParallel > 1)
        throw ConfigError(option + " with tensor_parallel: experts split both ways are not modelled");
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
                                ? " (of the mixture-of-experts families, " + expertFamilies() + " are)"
                                : "";
        throw ConfigError("model_type \"" + c.modelType + "\" is not supported" + extra + " (supported: " + names + ")");
    }
    c.family = fam->family;
    for (const auto& [key, value] : options)
        if (key != "seq" && key != "target_seq" && key != "batch" && key != "head" && key != "attention" &&
            key != "loss" && key != "tensor_parallel" && key != "sequence_parallel" && key != "expert_parallel")
            throw ConfigError("unknown option '" + key +
                              "' (a Hugging Face config takes seq, target_seq, batch, head, attention, loss, "
                              "tensor_parallel, sequence_parallel, expert_parallel)");
    chooseHead(c, r, *fam, options);
    if (c.family == Family::Vit) readEncoder(c, r);
    else if (isDecoder(c.family)) readDecoder(c, r);
    else if (c.family == Family::T5 || c.family == Family::MT5) readT5(c, r);
    else if (isEncoderDecoder(c.family)) readSeq2Seq(c, r);
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
        c.hidden * c.decoderIntermediate > limits::kMaxTensorElements ||
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
    if (options.count("target_seq")) {
        if (!isEncoderDecoder(c.family))
            throw ConfigError("option 'target_seq' (the decoder's length) applies to the encoder-decoder families "
                              "(bart, mbart, t5, mt5), not model_type \"" + c.modelType + "\"");
        c.targetSeq = optionInt(options, "target_seq", 0, 1, c.maxPositions);
    }
    const bool masked = !isDecoder(c.family) && c.family != Family::Vit;  // the padding mask (an encoder's)
    // transformers' default: sdpa (flash takes no padding mask); Gemma 2's eager, as sdpa cannot soft-cap,
    // and GPT-OSS's, as sdpa takes no sinks (transformers offers it no sdpa). DeepSeek-V3's value heads are
    // narrower than its query and key heads, which PyTorch's flash kernel does not take: sdpa runs the
    // efficient one.
    c.attentionBackend = masked || c.family == Family::DeepseekV3 || c.tritonAttention                  ? "efficient"
                         : c.family == Family::Gemma2 || c.family == Family::GptOss || c.eagerAttention ? "math"
                                                                                                        : "flash";
    if (auto it = options.find("attention"); it != options.end()) {
        c.attentionByDefault = false;
        if (it->second != "flash" && it->second != "efficient" && it->second != "math")
            throw ConfigError("option 'attention' must be flash, efficient or math, got '" + it->second + "'");
        c.attentionBackend = it->second;
    }
    // The token loss: "fp32" (transformers' loss functions: cross-entropy of an fp32 copy of the logits), "model"
    // (of the logits in their dtype) or "fused" (flash-attn's or Liger's fused cross-entropy: one kernel each
    // way over the logits in their dtype, no log-probabilities kept, no scratch beside the gradient).
    if (auto it = options.find("loss"); it != options.end()) {
        if (it->second != "fp32" && it->second != "model" && it->second != "fused")
            throw ConfigError("option 'loss' must be fp32, model or fused, got '" + it->second + "'");
        c.lossInFp32 = it->second == "fp32";
        c.fusedLoss = it->second == "fused";
    }
    readTensorParallel(c, options);
    readExpertParallel(c, options);
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
