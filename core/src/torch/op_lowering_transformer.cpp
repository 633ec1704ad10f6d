// The transformer operators of core/src/ops/transformer.cpp as ATen calls: RMSNormalization,
// RotaryEmbedding, ScaledDotProductAttention (sdpa, or GPT-OSS's eager attention with sinks) and
// MixtureOfExperts (transformers' eager loop over the experts).
#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <optional>

#include "op_lowering_internal.h"

namespace ts::torchexec {
namespace {

Outputs runRmsNorm(const OpCtx& c) {
    at::Tensor x = c.t(0);
    if (x.dim() == 0) c.fail("does not accept a scalar input");
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", -1), x.dim());
    const std::vector<int64_t> normalized(x.sizes().begin() + axis, x.sizes().end());
    at::Tensor scale = c.t(1) + c.attrFloat("scale_offset", 0.0);  // Gemma multiplies by (1 + weight)
    if (sizesOf(scale) != normalized) scale = scale.expand(normalized);
    return {at::rms_norm(x, normalized, scale, c.attrFloat("epsilon", 1e-5))};
}

// ONNX RotaryEmbedding on [batch, heads, seq, head]: the first rotary_embedding_dim features rotate
// in halves (or interleaved pairs), the rest pass through.
Outputs runRotary(const OpCtx& c) {
    at::Tensor x = c.t(0);
    if (x.dim() != 4) c.fail("expects a 4-D input");
    const int64_t width = c.attrInt("rotary_embedding_dim", 0) == 0 ? x.size(3) : c.attrInt("rotary_embedding_dim", 0);
    at::Tensor cos = c.t(1), sin = c.t(2);
    if (c.has(3)) {  // caches indexed by position ids [batch, seq]
        at::Tensor ids = c.t(3).to(at::kLong);
        cos = cos.index_select(0, ids.reshape({-1})).reshape({ids.size(0), ids.size(1), -1});
        sin = sin.index_select(0, ids.reshape({-1})).reshape({ids.size(0), ids.size(1), -1});
    }
    cos = cos.unsqueeze(1);  // [batch, 1, seq, width/2]
    sin = sin.unsqueeze(1);
    at::Tensor rot = x.narrow(3, 0, width);
    const bool interleaved = c.attrInt("interleaved", 0) != 0;
    at::Tensor x1 = interleaved ? rot.slice(3, 0, width, 2) : rot.narrow(3, 0, width / 2);
    at::Tensor x2 = interleaved ? rot.slice(3, 1, width, 2) : rot.narrow(3, width / 2, width / 2);
    at::Tensor y1 = x1 * cos - x2 * sin, y2 = x2 * cos + x1 * sin;
    at::Tensor y = interleaved ? at::stack({y1, y2}, -1).flatten(3) : at::cat({y1, y2}, 3);
    if (width < x.size(3)) y = at::cat({y, x.narrow(3, width, x.size(3) - width)}, 3);
    return {y};
}

// ATen picks the kernel for the device; the backend attribute is a cost-model choice.
// GPT-OSS's eager attention with learned sinks (sdpa takes none): the scores, masked (causal, the
// window), one more logit per head concatenated, the softmax, the sink's column dropped.
at::Tensor attentionWithSinks(const OpCtx& c, at::Tensor q, at::Tensor k, at::Tensor v,
                              const std::optional<at::Tensor>& mask, double dropout, std::optional<double> scale) {
    const int64_t groups = q.size(1) / k.size(1);
    if (groups > 1) {
        k = k.repeat_interleave(groups, 1);
        v = v.repeat_interleave(groups, 1);
    }
    const int64_t t = q.size(2), s = k.size(2);
    at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * scale.value_or(1.0 / std::sqrt(double(q.size(-1))));
    if (mask) scores = scores + *mask;
    const int64_t window = c.attrInt("window", 0);
    if (c.attrInt("causal", 0) != 0 || window > 0) {
        at::Tensor i = at::arange(t, q.options().dtype(at::kLong)).unsqueeze(1);
        at::Tensor j = at::arange(s, q.options().dtype(at::kLong)).unsqueeze(0);
        at::Tensor keep = c.attrInt("causal", 0) != 0 ? j <= i : at::ones({t, s}, i.options().dtype(at::kBool));
        if (window > 0) keep = keep & (i - j < window);
        scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
    }
    at::Tensor sinks = c.t(4).to(scores.scalar_type()).reshape({1, -1, 1, 1}).expand({scores.size(0), -1, t, 1});
    at::Tensor combined = at::cat({scores, sinks}, -1);
    combined = combined - std::get<0>(combined.max(-1, true));
    at::Tensor probs = at::softmax(combined, -1).slice(-1, 0, s);
    if (dropout > 0) probs = at::dropout(probs, dropout, true);
    return at::matmul(probs.to(v.scalar_type()), v);
}

Outputs runSdpa(const OpCtx& c) {
    at::Tensor q = c.t(0), k = c.t(1), v = c.t(2);
    std::optional<at::Tensor> mask;
    if (c.has(3)) mask = c.t(3).to(q.scalar_type());
    const double dropout = c.options.training ? c.attrFloat("dropout", 0.0) : 0.0;
    std::optional<double> scale;
    if (c.attrFloat("scale", 0.0) > 0) scale = c.attrFloat("scale", 0.0);
    if (c.has(4)) return {attentionWithSinks(c, q, k, v, mask, dropout, scale)};
    return {at::scaled_dot_product_attention(q, k, v, mask, dropout, c.attrInt("causal", 0) != 0, scale,
                                             /*enable_gqa=*/q.size(1) != k.size(1))};
}

// GPT-OSS's clamped SwiGLU: (up + 1) * g * sigmoid(alpha * g), g the gate clamped above at `limit`,
// up clamped to +-limit.
at::Tensor clampedSwiglu(const OpCtx& c, const at::Tensor& gate, const at::Tensor& up) {
    const double limit = c.attrFloat("limit", 7.0), alpha = c.attrFloat("alpha", 1.702);
    at::Tensor g = gate.clamp_max(limit);
    return (up.clamp(-limit, limit) + 1) * (g * at::sigmoid(g * alpha));
}

// Each token to its top_k experts (renormalised when `normalize`), each expert's gated MLP on its
// tokens, scaled by the route's probability and summed into the token: transformers' eager loop, which
// computes what its grouped-GEMM implementation does (ops/transformer.cpp costs that one).
Outputs runMoe(const OpCtx& c) {
    at::Tensor x = c.t(0), probs = c.t(1), gateUp = c.t(2), down = c.t(3);
    const int64_t hidden = x.size(-1), experts = gateUp.size(0), k = c.attrInt("top_k", 1);
    const bool transposed = c.attrInt("transposed", 0) != 0, interleaved = c.attrInt("interleaved", 0) != 0;
    at::Tensor flat = x.reshape({-1, hidden});
    auto [weights, index] = at::topk(probs.reshape({-1, probs.size(-1)}), k, -1);
    // Under expert parallelism (expert_shards) the weights are one GPU's share of the router's experts,
    // and as many routes arrive from the other GPUs as leave for them: each route runs on a local expert.
    if (probs.size(-1) != experts) index = index.remainder(experts);
    if (c.attrInt("normalize", 0) != 0) weights = weights / weights.sum(-1, true);
    weights = weights.to(x.scalar_type()).reshape({-1});
    const std::string act = c.attrString("activation", "Silu");
    // x W^T for [out, in] weights, x W for GPT-OSS's [in, out] ones.
    auto product = [&](const at::Tensor& in, const at::Tensor& w) {
        return transposed ? at::matmul(in, w) : at::linear(in, w);
    };
    at::Tensor out = at::zeros_like(flat);
    for (int64_t e = 0; e < experts; ++e) {
        at::Tensor hit = (index == e).nonzero();  // [routes, 2]: token, slot
        if (hit.size(0) == 0) continue;
        at::Tensor tokens = hit.select(1, 0);
        at::Tensor both = product(flat.index_select(0, tokens), gateUp[e]);
        if (c.has(4)) both = both + c.t(4)[e];
        const int64_t inner = both.size(-1) / 2;
        at::Tensor gate = interleaved ? both.slice(-1, 0, 2 * inner, 2) : both.slice(-1, 0, inner);
        at::Tensor up = interleaved ? both.slice(-1, 1, 2 * inner, 2) : both.slice(-1, inner, 2 * inner);
        at::Tensor gated = act == "ClampedSwiglu" ? clampedSwiglu(c, gate, up)
                           : act == "Silu"        ? at::silu(gate) * up
                           : act == "Relu"        ? at::relu(gate) * up
                                                  : at::gelu(gate, act == "GeluTanh" ? "tanh" : "none") * up;
        at::Tensor y = product(gated, down[e]);
        if (c.has(5)) y = y + c.t(5)[e];
        y = y * weights.index_select(0, tokens * k + hit.select(1, 1)).unsqueeze(-1);
        out = out.index_add(0, tokens, y);
    }
    return {out.reshape(x.sizes())};
}

}  // namespace

void addTransformerLowerings(std::vector<LoweringEntry>& t) {
    t.push_back({"RMSNormalization", runRmsNorm});
    t.push_back({"RotaryEmbedding", runRotary});
    t.push_back({"ScaledDotProductAttention", runSdpa});
    t.push_back({"MixtureOfExperts", runMoe});
}

}  // namespace ts::torchexec
