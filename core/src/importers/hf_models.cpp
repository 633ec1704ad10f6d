// The model graphs of Hugging Face transformers families, built from a config (hf_config_reader.cpp).
// Module paths and parameter names follow transformers 5's modules ("model.layers.0.self_attn.q_proj",
// "transformer.h.0.attn.c_attn", "bert.encoder.layer.0.attention.self.query", "vit.layers.0.mlp.fc1"),
// so that parameter counts equal sum(p.numel() for p in model.parameters()). Attention is one
// ScaledDotProductAttention operator (transformers' default "sdpa" implementation) and dropout is
// present as in training wherever the config gives it a probability above zero.
#include <cmath>
#include <cstdint>
#include <optional>

#include "importers/hf_config.h"
#include "trainscope/core/builder.h"
#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::hf {
namespace {

using zoo::forwardConstant;
using zoo::splitLastAxis;

// A shape vector known at build time, possibly symbolic (Expand's target).
int shapeConstant(ModelBuilder& b, const Shape& shape) {
    Value v;
    v.name = "constant:" + std::to_string(b.graph().values.size());
    v.dtype = DType::Int64;
    v.shape = {Dim(static_cast<int64_t>(shape.size()))};
    v.kind = ValueKind::Constant;
    v.intData = shape;
    return b.graph().addValue(std::move(v));
}

int dropout(ModelBuilder& b, const std::string& module, int x, double p) {
    return p > 0 ? b.dropout(module, x, p) : x;
}

int activation(ModelBuilder& b, const Config& c, int x, const std::string& module) {
    if (c.activation == "Silu") return b.op1("Silu", {x}, {}, module);
    if (c.activation == "GeluTanh") return b.op1("Gelu", {x}, {{"approximate", std::string("tanh")}}, module);
    if (c.activation == "GeluTanhComposite") {
        // NewGELUActivation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), step by step as transformers
        // runs it: pow saves x, tanh its output, the last product both factors.
        const double sqrt2OverPi = std::sqrt(2.0 / 3.14159265358979323846);
        int cube = b.op1("Pow", {x, b.constantFloat(3.0)}, {}, module);
        int inner = b.scale(b.add(x, b.scale(cube, 0.044715, module), module), sqrt2OverPi, module);
        int onePlus = b.add(b.tanh(inner, module), b.constantFloat(1.0), module);
        return b.mul(b.scale(x, 0.5, module), onePlus, module);
    }
    if (c.activation == "Gelu") return b.gelu(x, module);
    if (c.activation == "Relu") return b.relu(x, module);
    return b.tanh(x, module);
}

// transformers' RMSNorm modules are Python, each step a kernel of its own, computed in fp32 whatever
// the model's dtype: h = x.to(float32); h = h * rsqrt(h.pow(2).mean(-1, keepdim) + eps), then
// weight * h.to(x.dtype) (Llama, Mistral, Qwen2, Phi-3) or (h * (1 + weight.float())).type_as(x)
// (Gemma). The casts' "dtype_role" says which is which, since in this float32 graph both cast to
// float32: where the model runs in bf16 (bf16-params) the first is an upcast to fp32 and the second
// a cast back to bf16; in fp32 or under autocast both are no-ops (model_analysis.cpp).
// `width` is the normalised size: the hidden size, or a head's (Qwen3's q_norm and k_norm).
int rmsNorm(ModelBuilder& b, const Config& c, const std::string& module, int x, int64_t width) {
    int w = b.parameter(module, "weight", {width});
    const int64_t kFloat = 1;  // ONNX TensorProto FLOAT
    int h = b.op1("Cast", {x}, {{"to", kFloat}, {"dtype_role", std::string("fp32")}}, module);
    int variance = b.op1("ReduceMean", {b.op1("Pow", {h, b.constantFloat(2.0)}, {}, module)},
                         {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}}, module);
    int inverse = b.op1("Reciprocal", {b.op1("Sqrt", {b.op1("Add", {variance, b.constantFloat(c.eps)}, {}, module)},
                                             {}, module)},
                        {}, module);
    h = b.op1("Mul", {h, inverse}, {}, module);
    const std::map<std::string, Attribute> back{{"to", kFloat}, {"dtype_role", std::string("model")}};
    if (c.family == Family::Gemma) {
        int scale = b.op1("Add", {w, b.constantFloat(1.0)}, {}, module);
        return b.op1("Cast", {b.op1("Mul", {h, scale}, {}, module)}, back, module);
    }
    return b.op1("Mul", {w, b.op1("Cast", {h}, back, module)}, {}, module);
}
int rmsNorm(ModelBuilder& b, const Config& c, const std::string& module, int x) {
    return rmsNorm(b, c, module, x, c.hidden);
}

// [N, T, heads*dim] -> [N, heads, T, dim] and back.
int toHeads(ModelBuilder& b, int x, int64_t heads, int64_t dim) {
    return b.transpose(b.reshape(x, {0, 0, heads, dim}), {0, 2, 1, 3});
}
int fromHeads(ModelBuilder& b, int x, int64_t width) {
    return b.reshape(b.transpose(x, {0, 2, 1, 3}), {0, 0, width});
}

struct Rotary {
    int cos = -1, sin = -1;
    int64_t width = 0;  // rotated features per head; 0: no rotary embedding
};

int rotate(ModelBuilder& b, const Rotary& r, int x) {
    if (r.width == 0) return x;
    return b.op1("RotaryEmbedding", {x, r.cos, r.sin}, {{"rotary_embedding_dim", r.width}});
}

int attention(ModelBuilder& b, const Config& c, int q, int k, int v, int mask, bool causal) {
    std::vector<int> in{q, k, v};
    if (mask >= 0) in.push_back(mask);
    return b.op1("ScaledDotProductAttention", in,
                 {{"backend", c.attentionBackend},
                  {"causal", int64_t{causal ? 1 : 0}},
                  {"scale", 1.0 / std::sqrt(static_cast<double>(c.headDim))},
                  {"dropout", c.attentionDropout}});
}

// ---- decoders with rotary embeddings and RMSNorm: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, gemma,
// phi3 ----

int llamaAttention(ModelBuilder& b, const Config& c, int x, const Rotary& r) {
    auto s = b.scope("self_attn");
    const int64_t qWidth = c.heads * c.headDim, kvWidth = c.kvHeads * c.headDim;
    x = reduceGradient(b, c, x);
    int q, k, v;
    if (c.family == Family::Phi3) {  // one fused projection, split as q | k | v
        int qkv = b.linear("qkv_proj", x, qWidth + 2 * kvWidth, false);
        int sizes = b.constantInts({qWidth, kvWidth, kvWidth}, {Dim(3)});
        std::vector<int> parts = b.op("Split", {qkv, sizes}, {{"axis", int64_t{-1}}}, 3);
        q = parts[0], k = parts[1], v = parts[2];
    } else {
        q = b.linear("q_proj", x, qWidth, c.qkvBias);
        k = b.linear("k_proj", x, kvWidth, c.qkvBias);
        v = b.linear("v_proj", x, kvWidth, c.qkvBias);
    }
    if (c.qkNorm) {  // Qwen3: q_norm(q.view(N, T, heads, d)).transpose(1, 2), k alike
        auto heads = [&](int x, int64_t n, const char* norm) {
            int perHead = rmsNorm(b, c, norm, b.reshape(x, {0, 0, n, c.headDim}), c.headDim);
            return b.transpose(perHead, {0, 2, 1, 3});
        };
        q = rotate(b, r, heads(q, c.heads, "q_norm"));
        k = rotate(b, r, heads(k, c.kvHeads, "k_norm"));
    } else {
        q = rotate(b, r, toHeads(b, q, c.heads, c.headDim));
        k = rotate(b, r, toHeads(b, k, c.kvHeads, c.headDim));
    }
    v = toHeads(b, v, c.kvHeads, c.headDim);
    int context = fromHeads(b, attention(b, c, q, k, v, -1, true), qWidth);
    return reduceOutput(b, c, b.linear("o_proj", context, c.hidden, c.outputBias));
}

int gatedMlp(ModelBuilder& b, const Config& c, int x) {
    auto s = b.scope("mlp");
    x = reduceGradient(b, c, x);
    int gate, up;
    if (c.family == Family::Phi3) {  // gate_up_proj, chunked gate | up
        std::vector<int> parts = splitLastAxis(b, b.linear("gate_up_proj", x, 2 * c.intermediate, false), 2,
                                               c.intermediate);
        gate = parts[0], up = parts[1];
        return reduceOutput(
            b, c, b.linear("down_proj", b.mul(up, activation(b, c, gate, "activation_fn")), c.hidden, false));
    }
    gate = b.linear("gate_proj", x, c.intermediate, c.mlpBias);
    up = b.linear("up_proj", x, c.intermediate, c.mlpBias);
    return reduceOutput(b, c, b.linear("down_proj", b.mul(activation(b, c, gate, "act_fn"), up), c.hidden, c.mlpBias));
}

// transformers' sparse MoE block (mlp): the router `gate` (a [E, H] weight, no bias), the softmax of
// its logits in fp32, and the experts (gate_up_proj [E, 2I, H], down_proj [E, H, I]) as one operator,
// as transformers 5's default grouped-GEMM implementation runs them.
int sparseMoe(ModelBuilder& b, const Config& c, int x) {
    auto s = b.scope("mlp");
    const int64_t kFloat = 1;  // ONNX TensorProto FLOAT
    int logits = b.linear("gate", x, c.experts, false);
    b.graph().ops[size_t(b.graph().values[size_t(logits)].producer)].attrs["router"] = int64_t{1};  // no LoRA target
    logits = b.op1("Cast", {logits}, {{"to", kFloat}, {"dtype_role", std::string("fp32")}}, "gate");
    int probs = b.op1("Softmax", {logits}, {{"axis", int64_t{-1}}}, "gate");
    // The experts compute in the model's dtype and return it (the top-k weights are cast back, or
    // their fp32 product is): the probabilities' fp32 island ends here.
    probs = b.op1("Cast", {probs}, {{"to", kFloat}, {"dtype_role", std::string("model")}}, "gate");
    int gateUp = b.parameter("experts", "gate_up_proj", {c.experts, 2 * c.expertInner, c.hidden});
    int down = b.parameter("experts", "down_proj", {c.experts, c.hidden, c.expertInner});
    // Under tensor parallelism every GPU routes every token (the router is replicated) and holds a
    // slice of each expert's width, as Megatron-LM's experts without expert parallelism.
    int experts = b.op1("MixtureOfExperts", {reduceGradient(b, c, x), probs, gateUp, down},
                        {{"top_k", c.topK}, {"normalize", int64_t{c.normTopK ? 1 : 0}}, {"activation", c.activation}},
                        "experts");
    return reduceOutput(b, c, experts);
}

Rotary rotaryTables(ModelBuilder& b, const Config& c, const std::string& module) {
    Rotary r;
    r.width = static_cast<int64_t>(static_cast<double>(c.headDim) * c.rotaryFraction);
    r.width -= r.width % 2;
    if (r.width == 0) return r;
    // cos and sin of every position, computed once per forward by the rotary_emb module (its
    // inv_freq is a buffer, not a parameter).
    const std::string prefix = b.childPath(module);
    r.cos = forwardConstant(b, prefix + ".cos", {1, Dim::seq(), r.width / 2}, DType::Float32);
    r.sin = forwardConstant(b, prefix + ".sin", {1, Dim::seq(), r.width / 2}, DType::Float32);
    return r;
}

// The decoder body in the current module; returns the final hidden states and the embedding weight.
std::pair<int, int> llamaModel(ModelBuilder& b, const Config& c, int ids) {
    int x = reduceOutput(b, c, b.embedding("embed_tokens", ids, c.vocab, c.hidden), "embed_tokens");
    const int embedWeight = b.graph().findValue(b.childPath("embed_tokens") + ".weight");
    if (c.family == Family::Gemma) x = b.scale(x, std::sqrt(static_cast<double>(c.hidden)), "embed_tokens");
    x = dropout(b, "embed_dropout", x, c.embeddingDropout);
    const Rotary r = rotaryTables(b, c, "rotary_emb");
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            int y = llamaAttention(b, c, rmsNorm(b, c, "input_layernorm", x), r);
            x = b.add(x, dropout(b, "resid_attn_dropout", y, c.residualDropout));
            const int normed = rmsNorm(b, c, "post_attention_layernorm", x);
            y = c.moeLayer(i) ? sparseMoe(b, c, normed) : gatedMlp(b, c, normed);
            x = b.add(x, dropout(b, "resid_mlp_dropout", y, c.residualDropout));
        }
    }
    return {rmsNorm(b, c, "norm", x), embedWeight};
}

// ---- qwen (v1): QWenLMHeadModel of Qwen's remote code ----

std::pair<int, int> qwenModel(ModelBuilder& b, const Config& c, int ids) {
    int x = reduceOutput(b, c, b.embedding("wte", ids, c.vocab, c.hidden), "wte");
    const int embedWeight = b.graph().findValue(b.childPath("wte") + ".weight");
    x = dropout(b, "drop", x, c.embeddingDropout);
    const Rotary r = rotaryTables(b, c, "rotary_emb");
    {
        auto h = b.scope("h");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto block = b.scope(std::to_string(i));
            int y = rmsNorm(b, c, "ln_1", x);
            {
                auto attn = b.scope("attn");
                const int64_t width = c.heads * c.headDim;  // projection_size, or its shard
                std::vector<int> qkv =
                    splitLastAxis(b, b.linear("c_attn", reduceGradient(b, c, y), 3 * width, true), 3, width);
                int context = attention(b, c, rotate(b, r, toHeads(b, qkv[0], c.heads, c.headDim)),
                                        rotate(b, r, toHeads(b, qkv[1], c.heads, c.headDim)),
                                        toHeads(b, qkv[2], c.heads, c.headDim), -1, true);
                y = reduceOutput(b, c, b.linear("c_proj", fromHeads(b, context, width), c.hidden, c.outputBias));
            }
            x = b.add(x, y);
            y = rmsNorm(b, c, "ln_2", x);
            {
                auto mlp = b.scope("mlp");  // a1 = w1(x), a2 = w2(x), c_proj(a1 * silu(a2))
                y = reduceGradient(b, c, y);
                int a1 = b.linear("w1", y, c.intermediate, c.mlpBias);
                int a2 = b.linear("w2", y, c.intermediate, c.mlpBias);
                y = reduceOutput(b, c, b.linear("c_proj", b.mul(a1, activation(b, c, a2, "act")), c.hidden, c.mlpBias));
            }
            x = b.add(x, y);
        }
    }
    return {rmsNorm(b, c, "ln_f", x), embedWeight};
}

// ---- gpt2 ----

std::pair<int, int> gpt2Model(ModelBuilder& b, const Config& c, int ids) {
    int positions = forwardConstant(b, b.childPath("position_ids"), {1, Dim::seq()}, DType::Int64);
    int x = reduceOutput(b, c, b.embedding("wte", ids, c.vocab, c.hidden), "wte");
    const int embedWeight = b.graph().findValue(b.childPath("wte") + ".weight");
    x = b.add(x, b.embedding("wpe", positions, c.maxPositions, c.hidden));
    x = dropout(b, "drop", x, c.embeddingDropout);
    {
        auto h = b.scope("h");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto block = b.scope(std::to_string(i));
            int y = b.layerNorm("ln_1", x, c.eps);
            {
                auto attn = b.scope("attn");
                const int64_t width = c.heads * c.headDim;  // the hidden size, or its shard
                // Conv1D layers: weight [in, out], as the MatMul here stores it.
                std::vector<int> qkv =
                    splitLastAxis(b, b.linear("c_attn", reduceGradient(b, c, y), 3 * width), 3, width);
                int context = attention(b, c, toHeads(b, qkv[0], c.heads, c.headDim),
                                        toHeads(b, qkv[1], c.heads, c.headDim),
                                        toHeads(b, qkv[2], c.heads, c.headDim), -1, true);
                y = reduceOutput(b, c, b.linear("c_proj", fromHeads(b, context, width), c.hidden));
                y = dropout(b, "resid_dropout", y, c.residualDropout);
            }
            x = b.add(y, x);
            y = b.layerNorm("ln_2", x, c.eps);
            {
                auto mlp = b.scope("mlp");
                y = activation(b, c, b.linear("c_fc", reduceGradient(b, c, y), c.intermediate), "act");
                y = dropout(b, "dropout", reduceOutput(b, c, b.linear("c_proj", y, c.hidden)), c.residualDropout);
            }
            x = b.add(y, x);
        }
    }
    return {b.layerNorm("ln_f", x, c.eps), embedWeight};
}

// ---- gpt_neox ----

std::pair<int, int> gptNeoXModel(ModelBuilder& b, const Config& c, int ids) {
    int x = reduceOutput(b, c, b.embedding("embed_in", ids, c.vocab, c.hidden), "embed_in");
    const int embedWeight = b.graph().findValue(b.childPath("embed_in") + ".weight");
    x = dropout(b, "emb_dropout", x, c.residualDropout);
    const Rotary r = rotaryTables(b, c, "rotary_emb");
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            int attended;
            {
                int y = b.layerNorm("input_layernorm", x, c.eps);
                auto attn = b.scope("attention");
                // query_key_value interleaves per head: [N, T, heads, 3*dim] -> q, k, v of [N, heads, T, dim].
                const int64_t width = c.heads * c.headDim;  // the hidden size, or its shard
                int qkv = b.linear("query_key_value", reduceGradient(b, c, y), 3 * width, c.qkvBias);
                qkv = b.transpose(b.reshape(qkv, {0, 0, c.heads, 3 * c.headDim}), {0, 2, 1, 3});
                std::vector<int> parts = splitLastAxis(b, qkv, 3, c.headDim);
                int context = attention(b, c, rotate(b, r, parts[0]), rotate(b, r, parts[1]), parts[2], -1, true);
                attended =
                    reduceOutput(b, c, b.linear("dense", fromHeads(b, context, width), c.hidden, c.outputBias));
            }
            attended = dropout(b, "post_attention_dropout", attended, c.residualDropout);
            auto mlp = [&](int in) {
                int y = b.layerNorm("post_attention_layernorm", in, c.eps);
                auto s = b.scope("mlp");
                y = activation(b, c, b.linear("dense_h_to_4h", reduceGradient(b, c, y), c.intermediate, c.mlpBias),
                               "act");
                return reduceOutput(b, c, b.linear("dense_4h_to_h", y, c.hidden, c.mlpBias));
            };
            if (c.parallelResidual) {  // x + attn(ln1(x)) + mlp(ln2(x))
                int m = dropout(b, "post_mlp_dropout", mlp(x), c.residualDropout);
                x = b.add(b.add(m, attended), x);
            } else {
                x = b.add(attended, x);
                x = b.add(dropout(b, "post_mlp_dropout", mlp(x), c.residualDropout), x);
            }
        }
    }
    return {b.layerNorm("final_layer_norm", x, c.eps), embedWeight};
}

// ---- bert, roberta ----

int encoderLayer(ModelBuilder& b, const Config& c, int x, int mask) {
    int attended;
    {
        auto attn = b.scope("attention");
        int context;
        {
            auto self = b.scope("self");
            int q = toHeads(b, b.linear("query", x, c.hidden), c.heads, c.headDim);
            int k = toHeads(b, b.linear("key", x, c.hidden), c.heads, c.headDim);
            int v = toHeads(b, b.linear("value", x, c.hidden), c.heads, c.headDim);
            context = fromHeads(b, attention(b, c, q, k, v, mask, false), c.hidden);
        }
        auto out = b.scope("output");
        int y = dropout(b, "dropout", b.linear("dense", context, c.hidden), c.residualDropout);
        attended = b.layerNorm("LayerNorm", b.add(y, x), c.eps);
    }
    int h;
    {
        auto inter = b.scope("intermediate");
        h = activation(b, c, b.linear("dense", attended, c.intermediate), "intermediate_act_fn");
    }
    auto out = b.scope("output");
    int y = dropout(b, "dropout", b.linear("dense", h, c.hidden), c.residualDropout);
    return b.layerNorm("LayerNorm", b.add(y, attended), c.eps);
}

struct EncoderOut {
    int sequence = -1, pooled = -1, wordEmbeddings = -1;
};

int firstToken(ModelBuilder& b, int x) {
    return b.op1("Gather", {x, b.constantInts({0})}, {{"axis", int64_t{1}}});
}

EncoderOut bertModel(ModelBuilder& b, const Config& c, int ids, int tokenTypes, int attentionMask, bool pooler) {
    EncoderOut out;
    // The extended attention mask: (1 - mask[:, None, None, :]) * the dtype's lowest value, added to the scores.
    int mask = b.op1("Cast", {attentionMask}, {{"to", int64_t{1}}});
    mask = b.reshape(mask, {Dim::batch(), 1, 1, Dim::seq()});
    mask = b.scale(b.op1("Sub", {b.constantFloat(1.0), mask}), -3.4028234663852886e38);
    int x;
    {
        auto e = b.scope("embeddings");
        int positions = forwardConstant(b, b.childPath("position_ids"), {1, Dim::seq()}, DType::Int64);
        x = b.embedding("word_embeddings", ids, c.vocab, c.hidden);
        out.wordEmbeddings = b.graph().findValue(b.childPath("word_embeddings") + ".weight");
        if (c.typeVocab > 0) x = b.add(x, b.embedding("token_type_embeddings", tokenTypes, c.typeVocab, c.hidden));
        x = b.add(x, b.embedding("position_embeddings", positions, c.maxPositions, c.hidden));
        x = dropout(b, "dropout", b.layerNorm("LayerNorm", x, c.eps), c.residualDropout);
    }
    {
        auto encoder = b.scope("encoder");
        auto list = b.scope("layer");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            x = encoderLayer(b, c, x, mask);
        }
    }
    out.sequence = x;
    if (pooler) {
        auto p = b.scope("pooler");
        out.pooled = b.tanh(b.linear("dense", firstToken(b, x), c.hidden), "activation");
    }
    return out;
}

// ---- vit ----

EncoderOut vitModel(ModelBuilder& b, const Config& c, int image, bool pooler) {
    EncoderOut out;
    const int64_t patches = (c.image / c.patch) * (c.image / c.patch);
    int x;
    {
        auto e = b.scope("embeddings");
        int cls = b.parameter("", "cls_token", {1, 1, c.hidden});
        int positions = b.parameter("", "position_embeddings", {1, patches + 1, c.hidden});
        {
            auto pe = b.scope("patch_embeddings");
            x = b.conv2d("projection", image, c.hidden, c.patch, c.patch);
            x = b.transpose(b.reshape(x, {0, c.hidden, patches}), {0, 2, 1});  // flatten(2).transpose(1, 2)
        }
        int tokens = b.op1("Expand", {cls, shapeConstant(b, {Dim::batch(), 1, c.hidden})});
        x = b.add(b.concat({tokens, x}, 1), positions);
        x = dropout(b, "dropout", x, c.residualDropout);
    }
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            int y = b.layerNorm("layernorm_before", x, c.eps);
            {
                auto attn = b.scope("attention");
                int q = toHeads(b, b.linear("q_proj", y, c.hidden, c.qkvBias), c.heads, c.headDim);
                int k = toHeads(b, b.linear("k_proj", y, c.hidden, c.qkvBias), c.heads, c.headDim);
                int v = toHeads(b, b.linear("v_proj", y, c.hidden, c.qkvBias), c.heads, c.headDim);
                y = b.linear("o_proj", fromHeads(b, attention(b, c, q, k, v, -1, false), c.hidden), c.hidden);
                y = dropout(b, "dropout", y, c.residualDropout);
            }
            x = b.add(y, x);
            y = b.layerNorm("layernorm_after", x, c.eps);
            {
                auto mlp = b.scope("mlp");
                y = activation(b, c, b.linear("fc1", y, c.intermediate), "act");
                y = dropout(b, "dropout", b.linear("fc2", y, c.hidden), c.residualDropout);
            }
            x = b.add(y, x);
        }
    }
    out.sequence = b.layerNorm("layernorm", x, c.eps);
    if (pooler) {
        auto p = b.scope("pooler");
        out.pooled = b.tanh(b.linear("dense", firstToken(b, out.sequence), c.poolerSize), "activation");
    }
    return out;
}

// ---- heads ----

int crossEntropy(ModelBuilder& b, int scores, int targets) {
    return b.op1("SoftmaxCrossEntropyLoss", {scores, targets},
                 {{"reduction", std::string("mean")}, {"ignore_index", int64_t{-100}}});
}

// Logits over the vocabulary: the embedding matrix transposed when tied, else a weight of its own.
int vocabProjection(ModelBuilder& b, const Config& c, const std::string& module, int x, int embedWeight) {
    if (c.tieEmbeddings) return b.matmul(x, b.transpose(embedWeight, {1, 0}, module), module);
    return b.linear(module, x, c.vocab, false);
}

// The masked-LM decoder: tied, the word embeddings transposed plus the head's "bias"; untied, a Linear
// with its own bias (transformers 5 then also keeps the head's "bias", which the forward never uses and
// which is not counted here).
int mlmDecoder(ModelBuilder& b, const Config& c, int h, int wordEmbeddings) {
    if (!c.tieEmbeddings) return b.linear("decoder", h, c.vocab, true);
    int bias = b.parameter("", "bias", {c.vocab});
    return b.add(vocabProjection(b, c, "decoder", h, wordEmbeddings), bias, "decoder");
}

// Token-level loss over [N, S, vocab] logits with [N, S] labels (transformers shifts the labels of a
// causal LM by one: S-1 positions; here all S count). transformers' loss functions take the logits
// in fp32 (logits.float()): a kernel and an fp32 copy wherever the model runs in 16 bits; Qwen (v1)
// takes them as they are.
Graph finishTokenLoss(ModelBuilder& b, const Config& c, int logits) {
    int labels = b.input("labels", {Dim::batch(), Dim::seq()}, DType::Int64);
    int scores = b.reshape(logits, {-1, c.vocab});
    if (c.lossInFp32) scores = b.op1("Cast", {scores}, {{"to", int64_t{1}}, {"dtype_role", std::string("fp32")}});
    int loss = crossEntropy(b, scores, b.reshape(labels, {-1}));
    return b.finish({loss, logits});
}

Graph finishClassification(ModelBuilder& b, const Config& c, int logits) {
    int labels = b.input("labels", {Dim::batch()}, DType::Int64);
    return b.finish({crossEntropy(b, logits, labels), logits});
}

Graph buildDecoder(ModelBuilder& b, const Config& c) {
    int ids = b.input("input_ids", {Dim::batch(), Dim::seq()}, DType::Int64);
    const bool base = c.head == Head::Base;
    const char* bodyName = c.family == Family::Gpt2 || c.family == Family::Qwen ? "transformer"
                           : c.family == Family::GptNeoX                       ? "gpt_neox"
                                                                               : "model";
    std::pair<int, int> body;
    {
        std::optional<ModelBuilder::ScopeGuard> scope;
        if (!base) scope.emplace(b.scope(bodyName));
        if (c.family == Family::Gpt2) body = gpt2Model(b, c, ids);
        else if (c.family == Family::Qwen) body = qwenModel(b, c, ids);
        else if (c.family == Family::GptNeoX) body = gptNeoXModel(b, c, ids);
        else body = llamaModel(b, c, ids);
    }
    auto [hidden, embedWeight] = body;
    if (base) return b.finish({hidden});
    // The LM head is column-parallel over the vocabulary: each GPU scores its slice, and the loss is
    // Megatron-LM's vocabulary-parallel cross-entropy (its all-reduces are of one number per token,
    // not modelled).
    if (c.head == Head::CausalLm)
        return finishTokenLoss(b, c,
                               vocabProjection(b, c, "lm_head", reduceGradient(b, c, hidden, "lm_head"), embedWeight));
    // Sequence classification: score every token, keep the last one's (no padding in the batch).
    int scores = b.linear("score", hidden, c.numLabels, false);
    int last = zoo::sliceAxis(b, scores, 1, -1, INT64_MAX);
    return finishClassification(b, c, b.reshape(last, {Dim::batch(), c.numLabels}));
}

Graph buildEncoder(ModelBuilder& b, const Config& c) {
    int ids = b.input("input_ids", {Dim::batch(), Dim::seq()}, DType::Int64);
    int tokenTypes = c.typeVocab > 0 ? b.input("token_type_ids", {Dim::batch(), Dim::seq()}, DType::Int64) : -1;
    int attentionMask = b.input("attention_mask", {Dim::batch(), Dim::seq()}, DType::Int64);
    const bool roberta = c.family == Family::Roberta;
    const std::string bodyName = roberta ? "roberta" : "bert";
    if (c.head == Head::Base) {
        EncoderOut out = bertModel(b, c, ids, tokenTypes, attentionMask, true);
        return b.finish({out.sequence, out.pooled});
    }
    // BertForSequenceClassification keeps the pooler; the MLM heads and RoBERTa's classifier do not.
    const bool pooler = !roberta && c.head == Head::SequenceClassification;
    EncoderOut out;
    {
        auto s = b.scope(bodyName);
        out = bertModel(b, c, ids, tokenTypes, attentionMask, pooler);
    }
    if (c.head == Head::MaskedLm) {
        int logits;
        if (roberta) {  // RobertaLMHead: dense, gelu, layer_norm, decoder
            auto head = b.scope("lm_head");
            int h = b.gelu(b.linear("dense", out.sequence, c.hidden), "gelu");
            h = b.layerNorm("layer_norm", h, c.eps);
            logits = mlmDecoder(b, c, h, out.wordEmbeddings);
        } else {  // BertOnlyMLMHead: cls.predictions.transform, decoder, bias
            auto cls = b.scope("cls");
            auto predictions = b.scope("predictions");
            int h;
            {
                auto transform = b.scope("transform");
                h = activation(b, c, b.linear("dense", out.sequence, c.hidden), "transform_act_fn");
                h = b.layerNorm("LayerNorm", h, c.eps);
            }
            logits = mlmDecoder(b, c, h, out.wordEmbeddings);
        }
        return finishTokenLoss(b, c, logits);
    }
    int logits;
    if (roberta) {  // RobertaClassificationHead on the first token: dropout, dense, tanh, dropout, out_proj
        auto head = b.scope("classifier");
        int h = dropout(b, "dropout", firstToken(b, out.sequence), c.classifierDropout);
        h = dropout(b, "dropout", b.tanh(b.linear("dense", h, c.hidden)), c.classifierDropout);
        logits = b.linear("out_proj", h, c.numLabels);
    } else {
        logits = b.linear("classifier", dropout(b, "dropout", out.pooled, c.classifierDropout), c.numLabels);
    }
    return finishClassification(b, c, logits);
}

Graph buildVit(ModelBuilder& b, const Config& c) {
    int image = b.input("pixel_values", {Dim::batch(), c.channels, c.image, c.image});
    if (c.head == Head::Base) {
        EncoderOut out = vitModel(b, c, image, true);
        return b.finish({out.sequence, out.pooled});
    }
    EncoderOut out;
    {
        auto s = b.scope("vit");
        out = vitModel(b, c, image, false);
    }
    return finishClassification(b, c, b.linear("classifier", firstToken(b, out.sequence), c.numLabels));
}

}  // namespace

Graph buildModel(const Config& full) {
    const Config c = tensorParallelShard(full);
    ModelBuilder b(c.architecture, SymbolDefaults{c.batch, c.seq});
    switch (c.family) {
        case Family::Bert:
        case Family::Roberta: return buildEncoder(b, c);
        case Family::Vit: return buildVit(b, c);
        default: break;
    }
    Graph g = buildDecoder(b, c);
    if (full.sequenceParallel) markSequenceShards(g, full.tensorParallel);
    if (full.tensorParallel > 1) {
        // The whole model's parameters (goals per parameter, reports): the model built unsplit.
        Config whole = full;
        whole.tensorParallel = 1;
        whole.sequenceParallel = false;
        g.shard = {int(full.tensorParallel), buildModel(whole).parameterCount()};
    }
    return g;
}

}  // namespace ts::hf
