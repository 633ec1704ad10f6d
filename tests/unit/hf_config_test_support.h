#pragma once
// What the Hugging Face config tests share (test_hf_config.cpp: the reader and the families' structure;
// test_hf_operator_costs.cpp: the attention's and the experts' costs): the published configs' folder,
// small configs written here, and helpers.
#include <map>
#include <stdexcept>
#include <string>

#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace hftest {

inline const std::string kConfigs = std::string(TRAINSCOPE_TEST_DATA_DIR) + "/hf-configs/";

// A small Llama: V=1000, H=64, 2 layers, 4 heads of 16, 2 key/value heads, MLP 176.
inline const std::string kSmallLlama = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "intermediate_size": 176, "rms_norm_eps": 1e-6})";

// The same sizes as sparse MoE models: 4 experts of width 176 (Mixtral), or of 48 beside a dense MLP of
// 176 (Qwen3-MoE, head_dim 16), two per token.
inline const std::string kSmallMixtral = R"({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
  "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "intermediate_size": 176, "num_local_experts": 4, "num_experts_per_tok": 2})";
inline const std::string kSmallQwen3Moe = R"({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
  "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 176, "moe_intermediate_size": 48,
  "num_experts": 4, "num_experts_per_tok": 2})";

// Gemma 2's sizes as small: 4 heads of 16 (2 key/value heads), a window of 4 keys in the even layers, the
// soft caps at their defaults (50 and 30), queries scaled by 24^-0.5.
inline const std::string kSmallGemma2 = R"({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
  "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 176, "sliding_window": 4,
  "query_pre_attn_scalar": 24})";

// GPT-OSS's layout as small: 4 heads of 16 (2 key/value heads) with biases and sinks, a window of 4 keys in
// the even layers, 4 experts of width 176 with biases, two per token.
inline const std::string kSmallGptOss = R"({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
  "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 176, "sliding_window": 4,
  "num_local_experts": 4, "num_experts_per_tok": 2})";

inline ts::Graph load(const std::string& text, std::map<std::string, std::string> params = {}) {
    return ts::importHfConfigText(text, "config.json", params);
}

inline std::string errorOf(const std::string& text, std::map<std::string, std::string> params = {}) {
    try {
        load(text, params);
    } catch (const ts::ModelError& e) {
        return e.what();
    }
    return "";
}

inline bool hasModule(const ts::Graph& g, const std::string& path) {
    for (const auto& op : g.ops)
        if (op.modulePath == path) return true;
    return false;
}

inline const ts::LayerCost& layerOf(const ts::Graph& g, const ts::ModelCosts& c, const std::string& type, int nth = 0) {
    for (const ts::LayerCost& l : c.layers)
        if (g.ops[size_t(l.op)].type == type && nth-- == 0) return l;
    throw std::runtime_error("no " + type);
}

}  // namespace hftest
