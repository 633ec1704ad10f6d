// The decoder families of the Hugging Face builders (hf_models.cpp) with RMSNorms: llama, granite, smollm3,
// olmo2, olmo3, glm4, mistral, mixtral, qwen (v1), qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v3, glm4_moe,
// olmoe, gpt_oss, gemma, gemma2, gemma3_text and phi3; and every decoder's head (causal LM, sequence
// classification or none), the LayerNorm families' bodies (gpt2, gpt_neox, phi, mpt, starcoder2) coming
// from hf_decoders_layernorm.cpp.
#include <cmath>
#include <cstdint>
#include <optional>

#include "importers/hf_model_parts.h"
#include "zoo/zoo_common.h"

namespace ts::hf {
namespace {

using zoo::forwardConstant;
using zoo::splitLastAxis;

bool gemmaFamily(Family f) {
    return f == Family::Gemma || f == Family::Gemma2 || f == Family::Gemma3;
}

int rmsNorm(ModelBuilder& b, const Config& c, const std::string& module, int x) {
    return rmsNorm(b, c, module, x, c.hidden);
}

// Causal self-attention of decoder layer `layer`: Gemma's query scale and score soft-cap, and the
// layer's sliding window (its attributes; the window's cost depends on the sequence, known only when
// costed: ops/transformer.cpp).
int windowedAttention(ModelBuilder& b, const Config& c, int q, int k, int v, int64_t layer) {
    // GPT-OSS's sinks: one learned logit per head (self_attn.sinks).
    const int sinks = c.attentionSinks ? b.parameter("", "sinks", {c.heads}) : -1;
    int out = attention(b, c, q, k, v, -1, true, sinks);
    Operation& op = b.graph().ops[size_t(b.graph().values[size_t(out)].producer)];
    if (c.queryPreAttnScalar > 0) op.attrs["scale"] = 1.0 / std::sqrt(c.queryPreAttnScalar);
    if (c.family == Family::Granite) op.attrs["scale"] = c.attentionMultiplier;
    if (c.attentionSoftcap > 0) op.attrs["softcap"] = c.attentionSoftcap;
    if (c.slidingLayer(layer)) {
        op.attrs["window"] = c.slidingWindow;
        // sdpa gets the window as a mask; flash-attn's kernel (the flash option) and eager apply it themselves.
        if (c.attentionByDefault && c.attentionBackend == "flash") op.attrs["window_as_mask"] = int64_t{1};
    }
    return out;
}

// DeepSeek-V3's multi-head latent attention (DeepseekV3Attention, rope_interleave's permutation aside):
// q from the rank-q_lora_rank bottleneck (q_a_proj, q_a_layernorm, q_b_proj), keys and values from the
// kv_lora_rank latent of kv_a_proj_with_mqa (its last qk_rope_head_dim features the one rotated key
// every head shares), expanded by kv_b_proj; the rotated and position-free parts concatenated.
int latentAttention(ModelBuilder& b, const Config& c, int x, const Rotary& r, int64_t layer) {
    auto s = b.scope("self_attn");
    const int64_t qk = c.qkNopeDim + c.qkRopeDim;
    auto split2 = [&](int t, int64_t first, int64_t second) {
        int sizes = b.constantInts({first, second}, {Dim(2)});
        return b.op("Split", {t, sizes}, {{"axis", int64_t{-1}}}, 2);
    };
    int q = c.qLoraRank > 0
                ? b.linear("q_b_proj",
                           rmsNorm(b, c, "q_a_layernorm", b.linear("q_a_proj", x, c.qLoraRank, c.qkvBias), c.qLoraRank),
                           c.heads * qk, false)
                : b.linear("q_proj", x, c.heads * qk, false);
    std::vector<int> qParts = split2(toHeads(b, q, c.heads, qk), c.qkNopeDim, c.qkRopeDim);
    std::vector<int> kv = split2(b.linear("kv_a_proj_with_mqa", x, c.kvLoraRank + c.qkRopeDim, c.qkvBias),
                                 c.kvLoraRank, c.qkRopeDim);
    const int latent = rmsNorm(b, c, "kv_a_layernorm", kv[0], c.kvLoraRank);
    const int kRot = rotate(b, r, toHeads(b, kv[1], 1, c.qkRopeDim));
    const int query = b.concat({qParts[0], rotate(b, r, qParts[1])}, -1);
    std::vector<int> kvHeads =
        split2(toHeads(b, b.linear("kv_b_proj", latent, c.heads * (c.qkNopeDim + c.vHeadDim), false), c.heads,
                       c.qkNopeDim + c.vHeadDim),
               c.qkNopeDim, c.vHeadDim);
    const int kRotAll = b.op1("Expand", {kRot, shapeConstant(b, {1, c.heads, 1, 1})});
    const int key = b.concat({kvHeads[0], kRotAll}, -1);
    const int context = fromHeads(b, windowedAttention(b, c, query, key, kvHeads[1], layer), c.heads * c.vHeadDim);
    return b.linear("o_proj", context, c.hidden, c.outputBias);
}

// Gemma 2's logits: cap * tanh(logits / cap), three kernels over [N, S, vocab]; Granite's divided by
// logits_scaling.
int logitsBeforeLoss(ModelBuilder& b, const Config& c, int logits) {
    if (c.family == Family::Granite && c.logitsScaling != 1.0) return b.scale(logits, 1.0 / c.logitsScaling);
    if (c.finalSoftcap <= 0) return logits;
    int x = b.scale(logits, 1.0 / c.finalSoftcap);
    return b.scale(b.op1("Tanh", {x}), c.finalSoftcap);
}

// ---- decoders with rotary embeddings and RMSNorm: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, gemma,
// phi3 ----

// The SwiGLU MLP down_proj(act(gate_proj(x)) * up_proj(x)) of `width` features in `module`, its partial
// sums under tensor parallelism left to the caller to reduce.
int gatedMlpPartial(ModelBuilder& b, const Config& c, int x, const std::string& module, int64_t width) {
    auto s = b.scope(module);
    int gate = b.linear("gate_proj", x, width, c.mlpBias);
    int up = b.linear("up_proj", x, width, c.mlpBias);
    return b.linear("down_proj", b.mul(activation(b, c, gate, "act_fn"), up), c.hidden, c.mlpBias);
}

int gatedMlp(ModelBuilder& b, const Config& c, int x) {
    auto s = b.scope("mlp");
    x = reduceGradient(b, c, x);
    int gate, up;
    if (c.family == Family::Phi3 || c.family == Family::Glm4) {  // gate_up_proj, chunked gate | up
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

// The routed experts one GPU holds.
int64_t localExperts(const Config& c) {
    return c.experts / c.expertParallel;
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
    // DeepSeek-V3 and GLM-4.5 score each expert by a sigmoid, the others by a softmax over the experts.
    const bool deepseekExperts = c.family == Family::DeepseekV3 || c.family == Family::Glm4Moe;
    int probs = deepseekExperts ? b.op1("Sigmoid", {logits}, {}, "gate")
                                : b.op1("Softmax", {logits}, {{"axis", int64_t{-1}}}, "gate");
    // The experts compute in the model's dtype and return it (the top-k weights are cast back, or
    // their fp32 product is): the probabilities' fp32 island ends here.
    probs = b.op1("Cast", {probs}, {{"to", kFloat}, {"dtype_role", std::string("model")}}, "gate");
    // Under expert parallelism each GPU holds experts / expertParallel of them (localExperts).
    int gateUp = b.parameter("experts", "gate_up_proj", {localExperts(c), 2 * c.expertInner, c.hidden});
    int down = b.parameter("experts", "down_proj", {localExperts(c), c.hidden, c.expertInner});
    // Under tensor parallelism every GPU routes every token (the router is replicated) and holds a
    // slice of each expert's width, as Megatron-LM's experts without expert parallelism.
    const int sharded = reduceGradient(b, c, x);
    int experts = b.op1("MixtureOfExperts", {expertDispatch(b, c, sharded), probs, gateUp, down},
                        {{"top_k", c.topK},
                         {"normalize", int64_t{c.normTopK ? 1 : 0}},
                         {"activation", c.activation},
                         {"expert_shards", c.expertParallel}},
                        "experts");
    experts = expertCombine(b, c, experts);
    if (deepseekExperts && c.sharedExpertInner > 0) {  // + shared_experts(x)
        experts = b.add(experts, gatedMlpPartial(b, c, sharded, "shared_experts", c.sharedExpertInner));
    } else if (c.sharedExpertInner > 0) {
        // Qwen2-MoE: + sigmoid(shared_expert_gate(x)) * shared_expert(x). The gate (one output) is
        // replicated; the shared expert is sharded like an MLP, and scaling its partial sums before the
        // one all-reduce is the same as scaling the sum.
        int shared = gatedMlpPartial(b, c, sharded, "shared_expert", c.sharedExpertInner);
        int gate = b.op1("Sigmoid", {b.linear("shared_expert_gate", x, 1, false)}, {}, "shared_expert_gate");
        experts = b.add(experts, b.mul(gate, shared));
    }
    return reduceOutput(b, c, experts);
}

// GPT-OSS's MoE block (GptOssMLP): the router (a weight and a bias, logits in the model's dtype, the
// softmax over each token's top-k logits: the renormalised top-k of the softmax over all) and the
// experts' transposed, interleaved and biased weights with the clamped SwiGLU.
int gptOssMoe(ModelBuilder& b, const Config& c, int x) {
    auto s = b.scope("mlp");
    int logits = b.linear("router", x, c.experts, true);
    // No LoRA target: the product, before its bias add.
    const Operation& add = b.graph().ops[size_t(b.graph().values[size_t(logits)].producer)];
    b.graph().ops[size_t(b.graph().values[size_t(add.inputs[0])].producer)].attrs["router"] = int64_t{1};
    int probs = b.op1("Softmax", {logits}, {{"axis", int64_t{-1}}}, "router");
    int gateUp = b.parameter("experts", "gate_up_proj", {localExperts(c), c.hidden, 2 * c.expertInner});
    int gateUpBias = b.parameter("experts", "gate_up_proj_bias", {localExperts(c), 2 * c.expertInner});
    int down = b.parameter("experts", "down_proj", {localExperts(c), c.expertInner, c.hidden});
    int downBias = b.parameter("experts", "down_proj_bias", {localExperts(c), c.hidden});
    const int sharded = reduceGradient(b, c, x);
    int experts = b.op1("MixtureOfExperts", {expertDispatch(b, c, sharded), probs, gateUp, down, gateUpBias, downBias},
                        {{"top_k", c.topK},
                         {"normalize", int64_t{1}},
                         {"activation", std::string("ClampedSwiglu")},
                         {"alpha", c.swigluAlpha},
                         {"limit", c.swigluLimit},
                         {"transposed", int64_t{1}},
                         {"interleaved", int64_t{1}},
                         {"expert_shards", c.expertParallel}},
                        "experts");
    return reduceOutput(b, c, expertCombine(b, c, experts));
}

// One decoder layer `i` in the current module, x -> x, with its family's arrangement of norms and
// residual adds around the attention and the MLP (or the sparse block).
int decoderLayer(ModelBuilder& b, const Config& c, int x, const Rotary& r, int64_t i) {
    auto attention = [&](int in) {
        return c.family == Family::DeepseekV3 ? latentAttention(b, c, in, r, i) : llamaAttention(b, c, in, r, i);
    };
    auto mlp = [&](int in) {
        if (!c.moeLayer(i)) return gatedMlp(b, c, in);
        return c.family == Family::GptOss ? gptOssMoe(b, c, in) : sparseMoe(b, c, in);
    };
    switch (c.family) {
        case Family::Glm4:  // Gemma 2's four norms, as Llama's RMSNorm
            x = b.add(x, rmsNorm(b, c, "post_self_attn_layernorm", attention(rmsNorm(b, c, "input_layernorm", x))));
            return b.add(x, rmsNorm(b, c, "post_mlp_layernorm", mlp(rmsNorm(b, c, "post_attention_layernorm", x))));
        case Family::Olmo2:
        case Family::Olmo3:  // norms on the sub-layers' outputs only
            x = b.add(x, rmsNorm(b, c, "post_attention_layernorm", attention(x)));
            return b.add(x, rmsNorm(b, c, "post_feedforward_layernorm", mlp(x)));
        case Family::Gemma2:
        case Family::Gemma3:  // pre- and post-norms around both sub-layers
            x = b.add(x, rmsNorm(b, c, "post_attention_layernorm", attention(rmsNorm(b, c, "input_layernorm", x))));
            return b.add(x, rmsNorm(b, c, "post_feedforward_layernorm",
                                    mlp(rmsNorm(b, c, "pre_feedforward_layernorm", x))));
        case Family::Granite:  // residual + sub-layer * residual_multiplier
            x = b.add(x, b.scale(attention(rmsNorm(b, c, "input_layernorm", x)), c.residualMultiplier));
            return b.add(x, b.scale(mlp(rmsNorm(b, c, "post_attention_layernorm", x)), c.residualMultiplier));
        default:
            x = b.add(x, dropout(b, "resid_attn_dropout", attention(rmsNorm(b, c, "input_layernorm", x)),
                                 c.residualDropout));
            return b.add(x, dropout(b, "resid_mlp_dropout", mlp(rmsNorm(b, c, "post_attention_layernorm", x)),
                                    c.residualDropout));
    }
}

// The decoder body in the current module; returns the final hidden states and the embedding weight.
std::pair<int, int> llamaModel(ModelBuilder& b, const Config& c, int ids) {
    int x = reduceOutput(b, c, b.embedding("embed_tokens", ids, c.vocab, c.hidden), "embed_tokens");
    const int embedWeight = b.graph().findValue(b.childPath("embed_tokens") + ".weight");
    if (gemmaFamily(c.family)) x = b.scale(x, std::sqrt(static_cast<double>(c.hidden)), "embed_tokens");
    if (c.family == Family::Granite) x = b.scale(x, c.embeddingMultiplier);  // in GraniteModel.forward
    x = dropout(b, "embed_dropout", x, c.embeddingDropout);
    const Rotary r = rotaryTables(b, c, "rotary_emb");
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            x = decoderLayer(b, c, x, r, i);
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

}  // namespace

int rotate(ModelBuilder& b, const Rotary& r, int x) {
    if (r.width == 0) return x;
    return b.op1("RotaryEmbedding", {x, r.cos, r.sin}, {{"rotary_embedding_dim", r.width}});
}

Rotary rotaryTables(ModelBuilder& b, const Config& c, const std::string& module) {
    Rotary r;
    r.width = c.family == Family::DeepseekV3 ? c.qkRopeDim
                                             : static_cast<int64_t>(static_cast<double>(c.headDim) * c.rotaryFraction);
    r.width -= r.width % 2;
    if (r.width == 0) return r;
    // cos and sin of every position, computed once per forward by the rotary_emb module (its
    // inv_freq is a buffer, not a parameter).
    const std::string prefix = b.childPath(module);
    r.cos = forwardConstant(b, prefix + ".cos", {1, Dim::seq(), r.width / 2}, DType::Float32);
    r.sin = forwardConstant(b, prefix + ".sin", {1, Dim::seq(), r.width / 2}, DType::Float32);
    return r;
}

// Llama's grouped-query attention (self_attn): q, k, v (Phi-3's fused qkv_proj), the family's q and k norms,
// the rotary embedding (none in SmolLM3's NoPE layers), the layer's window; o_proj.
int llamaAttention(ModelBuilder& b, const Config& c, int x, const Rotary& r, int64_t layer) {
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
    if (c.qkNormWhole) {  // OLMo 2, OLMoE: q_norm(q_proj(x)) over all heads' features, k alike
        q = rmsNorm(b, c, "q_norm", q, qWidth);
        k = rmsNorm(b, c, "k_norm", k, kvWidth);
    }
    if (c.clipQkv > 0) {  // OLMoE: q, k and v clamped in place at clip_qkv
        auto clip = [&](int t) { return b.op1("Clip", {t}, {{"min", -c.clipQkv}, {"max", c.clipQkv}}); };
        q = clip(q), k = clip(k), v = clip(v);
    }
    const Rotary none;
    const Rotary& rope = c.ropeLayer(layer) ? r : none;  // SmolLM3's NoPE layers rotate nothing
    if (c.qkNorm) {  // Qwen3: q_norm(q.view(N, T, heads, d)).transpose(1, 2), k alike; Gemma 3 normalises
                     // after the transpose, which leaves q contiguous as [N, heads, T, d] (the attention's
                     // output layout follows: ops/saved_tensors.cpp)
        auto heads = [&](int x, int64_t n, const char* norm) {
            if (c.family == Family::Gemma3) return rmsNorm(b, c, norm, toHeads(b, x, n, c.headDim), c.headDim);
            int perHead = rmsNorm(b, c, norm, b.reshape(x, {0, 0, n, c.headDim}), c.headDim);
            return b.transpose(perHead, {0, 2, 1, 3});
        };
        q = rotate(b, rope, heads(q, c.heads, "q_norm"));
        k = rotate(b, rope, heads(k, c.kvHeads, "k_norm"));
    } else {
        q = rotate(b, rope, toHeads(b, q, c.heads, c.headDim));
        k = rotate(b, rope, toHeads(b, k, c.kvHeads, c.headDim));
    }
    v = toHeads(b, v, c.kvHeads, c.headDim);
    int context = fromHeads(b, windowedAttention(b, c, q, k, v, layer), qWidth);
    return reduceOutput(b, c, b.linear("o_proj", context, c.hidden, c.outputBias));
}

// transformers' RMSNorm modules are Python, each step a kernel of its own, computed in fp32 whatever
// the model's dtype: h = x.to(float32); h = h * rsqrt(h.pow(2).mean(-1, keepdim) + eps), then
// weight * h.to(x.dtype) (Llama, Mistral, Qwen2, Phi-3), (h * (1 + weight.float())).type_as(x)
// (Gemma) or (weight * h).to(x.dtype) (OLMo 2, GPT-OSS). The casts' "dtype_role" says which is which, since in
// this float32 graph both cast to float32: where the model runs in bf16 (bf16-params) the first is an
// upcast to fp32 and the second a cast back to bf16; in fp32 or under autocast both are no-ops
// (element_sizes.cpp).
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
    if (gemmaFamily(c.family)) {
        int scale = b.op1("Add", {w, b.constantFloat(1.0)}, {}, module);
        return b.op1("Cast", {b.op1("Mul", {h, scale}, {}, module)}, back, module);
    }
    if (c.family == Family::Olmo2 || c.family == Family::Olmo3 || c.family == Family::GptOss)
        return b.op1("Cast", {b.op1("Mul", {w, h}, {}, module)}, back, module);
    return b.op1("Mul", {w, b.op1("Cast", {h}, back, module)}, {}, module);
}

Graph buildDecoder(ModelBuilder& b, const Config& c) {
    int ids = b.input("input_ids", {Dim::batch(), Dim::seq()}, DType::Int64);
    const bool base = c.head == Head::Base;
    const char* bodyName = c.family == Family::Gpt2 || c.family == Family::Qwen || c.family == Family::Mpt
                               ? "transformer"
                           : c.family == Family::GptNeoX ? "gpt_neox"
                                                         : "model";
    std::pair<int, int> body;
    {
        std::optional<ModelBuilder::ScopeGuard> scope;
        if (!base) scope.emplace(b.scope(bodyName));
        if (c.family == Family::Gpt2) body = gpt2Model(b, c, ids);
        else if (c.family == Family::Qwen) body = qwenModel(b, c, ids);
        else if (c.family == Family::GptNeoX) body = gptNeoXModel(b, c, ids);
        else if (c.family == Family::Phi) body = phiModel(b, c, ids);
        else if (c.family == Family::Mpt)
            body = mptModel(b, c, ids);
        else if (c.family == Family::Starcoder2)
            body = starcoder2Model(b, c, ids);
        else body = llamaModel(b, c, ids);
    }
    auto [hidden, embedWeight] = body;
    if (base) return b.finish({hidden});
    // The LM head is column-parallel over the vocabulary: each GPU scores its slice, and the loss is
    // Megatron-LM's vocabulary-parallel cross-entropy (its all-reduces are of one number per token,
    // not modelled).
    if (c.head == Head::CausalLm) {
        const int in = reduceGradient(b, c, hidden, "lm_head");
        int logits = vocabProjection(b, c, "lm_head", in, embedWeight);
        // Phi's lm_head has a bias (of the GPU's vocabulary slice under tensor parallelism).
        if (c.family == Family::Phi) logits = b.add(logits, b.parameter("lm_head", "bias", {c.vocab}), "lm_head");
        return finishTokenLoss(b, c, logitsBeforeLoss(b, c, logits));
    }
    // Sequence classification: score every token, keep the last one's (no padding in the batch).
    int scores = b.linear("score", hidden, c.numLabels, false);
    int last = zoo::sliceAxis(b, scores, 1, -1, INT64_MAX);
    return finishClassification(b, c, b.reshape(last, {Dim::batch(), c.numLabels}));
}

}  // namespace ts::hf
