// Operators of current transformer models: RMSNormalization (ONNX opset 23 semantics, plus Gemma's
// scale offset), RotaryEmbedding (ONNX opset 23, 4-D input) and ScaledDotProductAttention
// (torch.nn.functional.scaled_dot_product_attention as one operator: grouped-query heads, a causal flag
// and the backend that runs it), and MixtureOfExperts (a sparse MoE layer's experts: top-k routing
// of every token to gated MLPs whose weights are stored as 3-D tensors, transformers 5's layout).
//
// Attention backends differ in what they compute and keep, not in their result:
// - "math" (PyTorch's reference, transformers' "eager"): materializes the [T, S] scores and
//   probabilities, applies a causal mask as an additive mask (all T*S scores are computed) and
//   keeps the probabilities for backward;
// - "flash" and "efficient" (memory-efficient) kernels: tile the scores in on-chip memory, skip
//   the tiles a causal mask hides, keep only the output and a float logsumexp per query, and
//   recompute the scores in backward.
// Two attributes of Gemma's attention: `softcap` (scores capped as cap * tanh(s / cap) before the
// softmax: three more passes over the scores in eager, a few instructions inside a tiled kernel) and
// `window` (sliding-window attention: query i sees keys i-window+1..i). A tiled kernel that takes a
// window (flash-attn's, "flash") skips the tiles outside it; eager masks them. `window_as_mask`: the
// window reaches PyTorch's sdpa as a boolean mask once the sequence outgrows it, so that layer runs
// the efficient kernel over every pair (the flash kernel takes no mask).
// An optional fifth input, `sinks` [heads] (GPT-OSS's learned attention sinks): one more logit per head
// in each query's softmax, dropped after it. Eager concatenates it to the scores, subtracts the row
// maximum and slices it off (two more passes over the scores); a tiled kernel that takes sinks
// (flash-attn 3's, flex attention) adds it to each row's normaliser. `probs_dtype`: "fp32" (transformers'
// eager: softmax in fp32, cast back to the model's dtype) or "model" (GPT-OSS's eager).
#include <algorithm>
#include <cmath>

#include "ops/registry.h"

namespace ts::ops {
namespace {

// ---- RMSNormalization ----

void inferRmsNorm(InferCtx& c) {
    c.expectInputs(2, 2);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    if (x.shape.empty()) throw ShapeError("RMSNormalization does not accept a scalar input");
    const int64_t axis = normalizeAxis(op.attrInt("axis", -1), static_cast<int64_t>(x.shape.size()));
    const Shape normalized(x.shape.begin() + axis, x.shape.end());
    const Value& scale = c.in(1);
    bool ok = scale.shape.size() <= normalized.size();
    if (ok) {
        try {
            ok = broadcastShapes(scale.shape, normalized) == normalized;
        } catch (const ShapeError&) {
            ok = false;
        }
    }
    if (!ok)
        throw ShapeError("RMSNormalization scale " + shapeStr(scale.shape) + " does not match the normalized dimensions " +
                         shapeStr(normalized) + " of input " + shapeStr(x.shape));
    if (c.numOutputs() != 1) throw ShapeError("RMSNormalization has one output");
    c.setOutput(0, x.dtype, x.shape);
}

OpCost costRmsNorm(const CostCtx& c) {
    OpCost cost;
    const auto x = c.inShape(0);
    const int64_t axis = normalizeAxis(c.op().attrInt("axis", -1), static_cast<int64_t>(x.size()));
    double rows = 1;
    for (int64_t i = 0; i < axis; ++i) rows *= static_cast<double>(x[static_cast<size_t>(i)]);
    const double elems = c.inNumel(0);
    // Square-accumulate (2), times the inverse RMS (1), times the scale (1) per element; eps and
    // rsqrt per row; Gemma's (1 + scale) once per scale element.
    cost.forwardFlops = 4 * elems + 2 * rows + (c.op().attrFloat("scale_offset", 0.0) != 0 ? c.inNumel(1) : 0.0);
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    // dx = r * (g*w - x_hat * mean(g*w*x_hat)): 6 per element; d(scale) = sum of g * x_hat: 2.
    if (c.inNeedsGrad(0)) cost.backwardFlops += 6 * elems;
    if (c.inNeedsGrad(1)) cost.backwardFlops += 2 * elems;
    if (c.anyInputNeedsGrad()) {
        // transformers' RMSNorm modules are Python (pow, mean, rsqrt, mul, mul): autograd keeps the
        // input, the normalized tensor (the scale's gradient needs it) and a float inverse RMS per row.
        saveInput(c, cost, 0);
        cost.saved.push_back({-1, c.inBytes(0)});
        cost.saved.push_back({-1, rows * 4});
    }
    return cost;
}

// ---- RotaryEmbedding ----

// Rotated width: rotary_embedding_dim, or the whole head.
int64_t rotaryWidth(const Operation& op, int64_t headDim) {
    const int64_t r = op.attrInt("rotary_embedding_dim", 0);
    return r == 0 ? headDim : r;
}

void inferRotary(InferCtx& c) {
    c.expectInputs(3, 4);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    if (x.shape.size() != 4)
        throw ShapeError("RotaryEmbedding expects an input [batch, heads, seq, head_size], got " + shapeStr(x.shape));
    if (!x.shape[3].isConstant()) throw ShapeError("RotaryEmbedding head size must not depend on the batch");
    const int64_t headDim = x.shape[3].constant();
    const int64_t width = rotaryWidth(op, headDim);
    if (width <= 0 || width > headDim || width % 2 != 0)
        throw ShapeError("RotaryEmbedding rotary_embedding_dim " + std::to_string(width) +
                         " must be even and at most the head size " + std::to_string(headDim));
    const Dim half(width / 2);
    const Shape& cosShape = c.in(1).shape;
    if (c.in(2).shape != cosShape)
        throw ShapeError("RotaryEmbedding cos " + shapeStr(cosShape) + " and sin " + shapeStr(c.in(2).shape) +
                         " differ");
    if (c.hasInput(3)) {  // caches [max_position, width/2] indexed by position_ids [batch, seq]
        const Shape& ids = c.in(3).shape;
        if (ids.size() != 2 || ids[1] != x.shape[2] || cosShape.size() != 2 || cosShape[1] != half)
            throw ShapeError("RotaryEmbedding with position_ids " + shapeStr(ids) + " needs caches [positions, " +
                             half.str() + "], got " + shapeStr(cosShape));
    } else {
        // cos, sin [batch or 1, seq, width/2].
        if (cosShape.size() != 3 || cosShape[1] != x.shape[2] || cosShape[2] != half ||
            (cosShape[0] != Dim(1) && cosShape[0] != x.shape[0]))
            throw ShapeError("RotaryEmbedding cos " + shapeStr(cosShape) + " must have shape [" + x.shape[0].str() +
                             " or 1, " + x.shape[2].str() + ", " + half.str() + "] for input " + shapeStr(x.shape));
    }
    c.setOutput(0, x.dtype, x.shape);
}

OpCost costRotary(const CostCtx& c) {
    OpCost cost;
    const auto x = c.inShape(0);
    const double rotated = c.inNumel(0) * static_cast<double>(rotaryWidth(c.op(), x[3])) / static_cast<double>(x[3]);
    // Each rotated element: x1*cos - x2*sin (2 multiplies, 1 add); the gradient is the inverse rotation.
    cost.forwardFlops = 3 * rotated;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = 3 * rotated;
        // The gradient needs cos and sin only (constants, or one tensor shared by every layer).
        saveInput(c, cost, 1);
        saveInput(c, cost, 2);
    }
    return cost;
}

// ---- ScaledDotProductAttention ----

enum class Backend { Math, Flash, Efficient };

Backend backendOf(const Operation& op) {
    const std::string b = op.attrString("backend", "math");
    if (b == "math") return Backend::Math;
    if (b == "flash") return Backend::Flash;
    if (b == "efficient") return Backend::Efficient;
    throw ShapeError("ScaledDotProductAttention backend must be \"math\", \"flash\" or \"efficient\", got \"" + b + "\"");
}

void inferSdpa(InferCtx& c) {
    c.expectInputs(3, 5);
    const Operation& op = c.op();
    backendOf(op);
    const double dropout = op.attrFloat("dropout", 0.0);
    if (!(dropout >= 0 && dropout < 1)) throw ShapeError("ScaledDotProductAttention dropout must be in [0, 1)");
    if (op.attrInt("window", 0) < 0) throw ShapeError("ScaledDotProductAttention window must not be negative");
    if (!(op.attrFloat("softcap", 0.0) >= 0)) throw ShapeError("ScaledDotProductAttention softcap must not be negative");
    const std::string probs = op.attrString("probs_dtype", "fp32");
    if (probs != "fp32" && probs != "model")
        throw ShapeError("ScaledDotProductAttention probs_dtype must be \"fp32\" or \"model\", got \"" + probs + "\"");
    const Value& q = c.in(0);
    const Value& k = c.in(1);
    const Value& v = c.in(2);
    for (const Value* t : {&q, &k, &v})
        if (t->shape.size() != 4)
            throw ShapeError("ScaledDotProductAttention expects query, key and value [batch, heads, seq, dim], got " +
                             shapeStr(q.shape) + ", " + shapeStr(k.shape) + ", " + shapeStr(v.shape));
    if (k.shape[3] != q.shape[3])
        throw ShapeError("ScaledDotProductAttention key dim " + k.shape[3].str() + " differs from query dim " +
                         q.shape[3].str());
    if (k.shape[1] != v.shape[1] || k.shape[2] != v.shape[2])
        throw ShapeError("ScaledDotProductAttention key " + shapeStr(k.shape) + " and value " + shapeStr(v.shape) +
                         " differ in heads or length");
    if (!q.shape[1].isConstant() || !k.shape[1].isConstant() || k.shape[1].constant() <= 0 ||
        q.shape[1].constant() % k.shape[1].constant() != 0)
        throw ShapeError("ScaledDotProductAttention query heads " + q.shape[1].str() +
                         " are not a multiple of key/value heads " + k.shape[1].str() + " (grouped-query attention)");
    Shape batch;
    try {
        batch = broadcastShapes({q.shape[0]}, {k.shape[0]});
        broadcastShapes({k.shape[0]}, {v.shape[0]});
    } catch (const ShapeError&) {
        throw ShapeError("ScaledDotProductAttention batch sizes of " + shapeStr(q.shape) + " and " + shapeStr(k.shape) +
                         " differ");
    }
    const Shape scores{batch[0], q.shape[1], q.shape[2], k.shape[2]};
    if (c.hasInput(3)) {
        const Shape& m = c.in(3).shape;
        bool ok = m.size() <= 4;
        if (ok) {
            try {
                ok = broadcastShapes(m, scores) == scores;
            } catch (const ShapeError&) {
                ok = false;
            }
        }
        if (!ok)
            throw ShapeError("ScaledDotProductAttention mask " + shapeStr(m) + " does not broadcast to the scores " +
                             shapeStr(scores));
    }
    if (c.hasInput(4) && c.in(4).shape != Shape{q.shape[1]})
        throw ShapeError("ScaledDotProductAttention sinks " + shapeStr(c.in(4).shape) +
                         " are not one per query head (" + q.shape[1].str() + ")");
    c.setOutput(0, q.dtype, {batch[0], q.shape[1], q.shape[2], v.shape[3]});
}

// Query-key pairs a causal mask keeps (top-left aligned, as PyTorch's is_causal): query i sees
// keys 0..i.
double causalPairs(double t, double s) {
    if (t <= s) return t * (t + 1) / 2;
    return s * (s + 1) / 2 + (t - s) * s;
}

// Query-key pairs a causal mask with a sliding window of `w` keys keeps: query i sees keys
// max(0, i-w+1)..min(i, s-1).
double windowedCausalPairs(double t, double s, double w) {
    if (w <= 0 || w >= std::max(t, s)) return causalPairs(t, s);
    const double m = std::min(t, s);  // queries 0..m-1 see min(i+1, w) keys
    double pairs = m <= w ? m * (m + 1) / 2 : w * (w + 1) / 2 + (m - w) * w;
    if (t > s) {  // queries s+j (j < t-s) see min(s, w-1-j) keys while that is positive
        const double n = t - s;
        const double full = std::clamp(w - s, 0.0, n);  // those that still see all s keys
        pairs += full * s;
        const double end = std::min(n, w - 1);
        if (end > full) pairs += (end - full) * (w - 1) - (full + end - 1) * (end - full) / 2;
    }
    return pairs;
}

// Per score: the scale (1) and softmax (max, subtract, exp, sum, divide: 5), plus the additive
// mask (1) and dropout (random draw and masked scale: 2) when present.
constexpr double kScoreFlops = 6;

OpCost costSdpa(const CostCtx& c) {
    OpCost cost;
    const Operation& op = c.op();
    Backend backend = backendOf(op);
    const bool causal = op.attrInt("causal", 0) != 0;
    const double dropout = op.attrFloat("dropout", 0.0);
    const double softcap = op.attrFloat("softcap", 0.0);
    const auto q = c.inShape(0), k = c.inShape(1), v = c.inShape(2);
    const auto out = c.outShape(0);
    const double batch = static_cast<double>(out[0]), heads = static_cast<double>(q[1]);
    const double t = static_cast<double>(q[2]), s = static_cast<double>(k[2]);
    const double d = static_cast<double>(q[3]), dv = static_cast<double>(v[3]);
    const double fullPairs = batch * heads * t * s;
    // A window the sequence outgrows: sdpa's mask (the efficient kernel over every pair) or a tiled
    // kernel's own window.
    double window = static_cast<double>(op.attrInt("window", 0));
    if (window >= std::max(t, s)) window = 0;
    // (PyTorch's efficient kernel has no window of its own: a mask it computes every pair of.)
    const bool windowMask = window > 0 && (op.attrInt("window_as_mask", 0) != 0 || backend == Backend::Efficient);
    if (windowMask) backend = Backend::Efficient;
    // The math backend computes every score and masks; the tiled kernels skip the masked tiles.
    double pairs = fullPairs;
    if (causal && backend != Backend::Math && !windowMask)
        pairs = batch * heads * windowedCausalPairs(t, s, window);
    const bool masked = c.hasInput(3) || windowMask || ((causal || window > 0) && backend == Backend::Math);
    const bool sinks = c.hasInput(4);
    // The cap: divide, tanh, multiply; eager's sinks: the subtraction of the row maximum.
    const double perScore = kScoreFlops + (masked ? 1 : 0) + (dropout > 0 ? 2 : 0) + (softcap > 0 ? 3 : 0) +
                            (sinks && backend == Backend::Math ? 1 : 0);
    cost.forwardFlops = 2 * pairs * d + 2 * pairs * dv + perScore * pairs;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    const double scoreBytes = fullPairs * dtypeSize(c.g.values[static_cast<size_t>(c.inputValue(0))].dtype);
    const double statsBytes = batch * heads * t * 4;  // float logsumexp per query
    // transformers' repeat_kv copies k and v unless there is one key-value head (a stride-0 view then).
    const bool repeatCopies = static_cast<double>(k[1]) != heads && k[1] > 1;
    if (windowMask) {
        cost.bytesRead += batch * t * s;  // the [N, 1, T, S] boolean mask
        if (repeatCopies) {  // k and v repeated to every head first (below)
            const double repeated = batch * heads * s * (d + dv) * dtypeSize(c.g.values[size_t(c.inputValue(1))].dtype);
            cost.bytesWritten += repeated;
            cost.bytesRead += repeated;
        }
    }
    if (backend == Backend::Math) {
        // Scores and probabilities (and the dropped probabilities, and the cap's three steps) go
        // through memory.
        // With sinks, the concatenation and the subtraction of the maximum are two more.
        const double copies = 2 + (dropout > 0 ? 1 : 0) + (softcap > 0 ? 3 : 0) + (sinks ? 2 : 0);
        cost.bytesWritten += copies * scoreBytes;
        cost.bytesRead += copies * scoreBytes;
    } else {
        cost.bytesWritten += statsBytes;
    }
    const bool dq = c.inNeedsGrad(0), dk = c.inNeedsGrad(1), dvGrad = c.inNeedsGrad(2);
    if (!(dq || dk || dvGrad)) return cost;
    // dP = dO V^T, the softmax (and dropout) backward, then dQ = dS K, dK = dS^T Q, dV = P^T dO; the
    // cap's backward (1 - tanh^2) and its two scalings.
    cost.backwardFlops = 2 * pairs * dv + (4 + (dropout > 0 ? 1 : 0) + (softcap > 0 ? 5 : 0)) * pairs;
    if (dq) cost.backwardFlops += 2 * pairs * d;
    if (dk) cost.backwardFlops += 2 * pairs * d;
    if (dvGrad) cost.backwardFlops += 2 * pairs * dv;
    const double elem = dtypeSize(c.g.values[static_cast<size_t>(c.inputValue(0))].dtype);
    if (backend == Backend::Math) {
        saveInput(c, cost, 0);
        const double kvHeads = static_cast<double>(k[1]);
        if (kvHeads == heads) {
            saveInput(c, cost, 1);
            saveInput(c, cost, 2);
        } else {  // grouped-query: key and value are repeated to every query head before the products
            cost.saved.push_back({-1, batch * heads * s * d * elem, true});
            cost.saved.push_back({-1, batch * heads * s * dv * elem, true});
        }
        // The probabilities, kept for the softmax's backward: Llama's eager attention computes them in
        // fp32 (softmax(dtype=float32)) and casts them to the model's dtype for the product with v;
        // BERT's, BART's and GPT-2's (`probs_dtype` "model") take the softmax without a dtype, in the
        // scores' own (fp32 under autocast, as autocast runs softmax), and GPT-OSS's in the scores'
        // dtype, which its fp32 sinks widen under autocast. The product with v keeps its input: the
        // cast copy where the probabilities are wider than the model's dtype, or, with dropout, the
        // dropped probabilities (dropout keeps only its one-byte mask), in the model's dtype.
        SavedTensor probs{-1, scoreBytes};
        probs.fp32UnderAutocast = op.attrString("probs_dtype", "fp32") == "model";
        cost.saved.push_back(probs);
        if (dropout <= 0) cost.saved.push_back({-1, scoreBytes, false, true});  // their cast copy
        if (softcap > 0) cost.saved.push_back({-1, scoreBytes, true});  // tanh's output, for its gradient
        if (dropout > 0) {
            cost.saved.push_back({-1, fullPairs});         // bool mask
            cost.saved.push_back({-1, scoreBytes, true});  // dropped probabilities
        }
    } else {
        // Recompute the scores and probabilities from the saved logsumexp: QK^T, scale, exp.
        cost.backwardFlops += 2 * pairs * d + 2 * pairs;
        saveInput(c, cost, 0);
        if (windowMask && repeatCopies) {
            // With a mask transformers repeats k and v to every query head (sdpa's grouped-query path
            // takes no mask), and the kernel keeps the copies.
            cost.saved.push_back({-1, batch * heads * s * d * elem, true});
            cost.saved.push_back({-1, batch * heads * s * dv * elem, true});
        } else {
            saveInput(c, cost, 1);
            saveInput(c, cost, 2);
        }
        saveOutput(c, cost, 0);
        cost.saved.push_back({-1, statsBytes});
        // The kernel's backward reads its mask again: a broadcast padding mask is small, T5's per-head
        // position-bias mask ([N, heads, T, S]) is not.
        if (c.hasInput(3)) saveInput(c, cost, 3);
    }
    return cost;
}

// ---- MixtureOfExperts ----
// Inputs: x [..., H], the router's probabilities [..., E] (the softmax over the experts), gate_up
// [E, 2I, H] (gate rows, then up rows), down [E, H, I], and optionally their biases [E, 2I] and [E, H].
// Attributes: top_k, normalize (the top-k probabilities renormalised to sum to 1), activation (of the
// gate: "Silu", "Gelu", "GeluTanh", "Relu", or "ClampedSwiglu", GPT-OSS's (up + 1) * g * sigmoid(alpha
// * g) of the gate clamped above at `limit` and the up half clamped to +-limit), transposed (weights
// stored [E, H, 2I] and [E, I, H], multiplied as x @ W: GPT-OSS's layout), interleaved (gate and up
// features alternate along 2I instead of forming halves). Each token goes to its top_k experts; each
// expert computes down(act(gate x) * up x), scaled by the token's probability and summed into the
// token's output. Costs follow transformers' experts (its default grouped-GEMM path; the eager loop
// keeps the same tensors): a token's copy is gathered per route, and a route is computed whatever the
// balance, so FLOPs depend only on tokens x top_k.
// expert_shards (default 1): under expert parallelism the weights are one GPU's E / expert_shards
// experts of the router's E; its tokens' routes leave for the other GPUs' experts and as many arrive
// (the all-to-alls around it, ops/collective.cpp), so with balanced routing it computes tokens x top_k
// routes as without.

constexpr int64_t kMaxExpertShards = 1024;  // as a collective's group (ops/collective.cpp)

struct ExpertSizes {
    double experts = 0, hidden = 0, inner = 0, topK = 0;
    double routed = 0;  // the router's experts: `experts` (this GPU's) x expert_shards
};

ExpertSizes expertSizes(const Operation& op, const std::vector<int64_t>& gateUp, const std::vector<int64_t>& down) {
    const bool transposed = op.attrInt("transposed", 0) != 0;
    const double local = static_cast<double>(gateUp[0]);
    return {local, static_cast<double>(down[transposed ? 2 : 1]), static_cast<double>(down[transposed ? 1 : 2]),
            static_cast<double>(op.attrInt("top_k", 1)), local * static_cast<double>(op.attrInt("expert_shards", 1))};
}

void inferMoe(InferCtx& c) {
    c.expectInputs(4, 6);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    const Value& probs = c.in(1);
    const Value& gateUp = c.in(2);
    const Value& down = c.in(3);
    const bool transposed = op.attrInt("transposed", 0) != 0;
    const char* layout = transposed ? "[E, H, 2I] and [E, I, H]" : "[E, 2I, H] and [E, H, I]";
    if (x.shape.empty()) throw ShapeError("MixtureOfExperts does not accept a scalar input");
    if (gateUp.shape.size() != 3 || down.shape.size() != 3)
        throw ShapeError(std::string("MixtureOfExperts expects expert weights ") + layout + ", got " +
                         shapeStr(gateUp.shape) + " and " + shapeStr(down.shape));
    for (const Shape* weights : {&gateUp.shape, &down.shape})
        for (const Dim& d : *weights)
            if (!d.isConstant() || d.constant() <= 0)
                throw ShapeError("MixtureOfExperts expert weights must have constant, positive sizes");
    const int64_t e = gateUp.shape[0].constant();
    const int64_t h = down.shape[transposed ? 2 : 1].constant(), i = down.shape[transposed ? 1 : 2].constant();
    const int64_t gateUpWidth = gateUp.shape[transposed ? 2 : 1].constant();
    const int64_t gateUpIn = gateUp.shape[transposed ? 1 : 2].constant();
    if (down.shape[0].constant() != e || gateUpWidth != 2 * i || gateUpIn != h)
        throw ShapeError("MixtureOfExperts expert weights " + shapeStr(gateUp.shape) + " and " + shapeStr(down.shape) +
                         " are not " + layout);
    if (c.hasInput(4) && c.in(4).shape != Shape{Dim(e), Dim(2 * i)})
        throw ShapeError("MixtureOfExperts gate-up bias " + shapeStr(c.in(4).shape) + " is not [E, 2I] = [" +
                         std::to_string(e) + ", " + std::to_string(2 * i) + "]");
    if (c.hasInput(5) && c.in(5).shape != Shape{Dim(e), Dim(h)})
        throw ShapeError("MixtureOfExperts down bias " + shapeStr(c.in(5).shape) + " is not [E, H] = [" +
                         std::to_string(e) + ", " + std::to_string(h) + "]");
    if (x.shape.back() != Dim(h))
        throw ShapeError("MixtureOfExperts input " + shapeStr(x.shape) + " does not end in the experts' width " +
                         std::to_string(h));
    const int64_t shards = op.attrInt("expert_shards", 1);
    if (shards < 1 || shards > kMaxExpertShards)
        throw ShapeError("MixtureOfExperts expert_shards must be from 1 to " + std::to_string(kMaxExpertShards) +
                         ", got " + std::to_string(shards));
    const int64_t routedExperts = e * shards;
    Shape routed(x.shape.begin(), x.shape.end() - 1);
    routed.push_back(Dim(routedExperts));
    if (probs.shape != routed)
        throw ShapeError(
            "MixtureOfExperts router probabilities " + shapeStr(probs.shape) + " are not " + shapeStr(routed) +
            (shards > 1 ? " (" + std::to_string(e) + " experts on each of " + std::to_string(shards) + " GPUs)"
                        : std::string()));
    const int64_t k = op.attrInt("top_k", 1);
    if (k < 1 || k > routedExperts)
        throw ShapeError("MixtureOfExperts top_k " + std::to_string(k) + " is not between 1 and the " +
                         std::to_string(routedExperts) + " experts");
    const std::string act = op.attrString("activation", "Silu");
    if (act != "Silu" && act != "Gelu" && act != "GeluTanh" && act != "Relu" && act != "ClampedSwiglu")
        throw ShapeError("MixtureOfExperts activation must be Silu, Gelu, GeluTanh, Relu or ClampedSwiglu, got \"" +
                         act + "\"");
    if (!(op.attrFloat("limit", 7.0) > 0)) throw ShapeError("MixtureOfExperts limit must be positive");
    c.setOutput(0, x.dtype, x.shape);
}

OpCost costMoe(const CostCtx& c) {
    OpCost cost;
    const ExpertSizes z = expertSizes(c.op(), c.inShape(2), c.inShape(3));
    const double elem = dtypeSize(c.g.values[static_cast<size_t>(c.inputValue(0))].dtype);
    const double tokens = c.inNumel(0) / z.hidden, routes = tokens * z.topK;
    const double h = z.hidden, in = z.inner;
    // GPT-OSS's activation is Python: two clamps, the scaled sigmoid, its product, up + 1 and the
    // product, a kernel each over the route's inner features, each saving what its gradient needs (3
    // more [routes, I] tensors than SiLU's).
    const bool clamped = c.op().attrString("activation", "Silu") == "ClampedSwiglu";
    const bool biased = c.hasInput(4) || c.hasInput(5);
    const double actFlops = clamped ? 11 : 5;
    // The clamped activation's 7 kernels read 9 and write 7 [routes, I] tensors, SiLU and its product 3 and 2.
    const double actReads = clamped ? 6 : 0, actWrites = clamped ? 5 : 0;
    // Experts that get a token read their weights (and biases): all of them once the routes outnumber them.
    double weightBytes = c.inBytes(2) + c.inBytes(3);
    if (c.hasInput(4)) weightBytes += c.inBytes(4);
    if (c.hasInput(5)) weightBytes += c.inBytes(5);
    weightBytes *= std::min(1.0, routes / z.experts);
    // Per route: the gate-up and down products (2 x H x 2I + 2 x I x H), their bias adds, the activation
    // and product, the scale and the sum into the output (2 per hidden element); top-k over the
    // probabilities (E per token).
    const double gemmFlops = 6 * routes * h * in;
    cost.forwardFlops = gemmFlops + routes * (actFlops * in + 2 * h) + tokens * z.routed;
    if (biased) cost.forwardFlops += routes * (2 * in + h);
    // Gather, gate-up, the activation's kernels, down, scale, sum: the activations in and out of each
    // step (the bias adds fused into the products' epilogues).
    cost.bytesRead = c.inBytes(1) + weightBytes + routes * (4 * h + (3 + actReads) * in) * elem;
    cost.bytesWritten = routes * (2 * h + (3 + actWrites) * in) * elem + 2 * c.outBytes(0);
    const bool dx = c.inNeedsGrad(0), dw = c.inNeedsGrad(2) || c.inNeedsGrad(3), dp = c.inNeedsGrad(1);
    if (!(dx || dw || dp)) return cost;
    cost.backwardFlops = (dx ? gemmFlops : 0) + (dw ? gemmFlops : 0) + routes * ((clamped ? 16 : 8) * in + 3 * h);
    // What autograd keeps per route: the gathered token (the gate-up product's input), the gate-up
    // output (the activation's input and the up half), the activation's output, the down product's
    // input, its output (for the scale's gradient), the route's probability and token index.
    cost.saved.push_back({-1, routes * h * elem, true});
    cost.saved.push_back({-1, routes * 2 * in * elem, true});
    cost.saved.push_back({-1, routes * in * elem, true});
    cost.saved.push_back({-1, routes * in * elem, true});
    if (clamped) cost.saved.push_back({-1, 3 * routes * in * elem, true});  // clamped gate, sigmoid, up + 1
    cost.saved.push_back({-1, routes * h * elem, true});
    cost.saved.push_back({-1, routes * (4 + 8)});
    return cost;
}

}  // namespace

void registerTransformerOps(std::vector<OpDef>& t) {
    t.push_back({"RMSNormalization", inferRmsNorm, costRmsNorm});
    t.push_back({"RotaryEmbedding", inferRotary, costRotary});
    t.push_back({"ScaledDotProductAttention", inferSdpa, costSdpa});
    t.push_back({"MixtureOfExperts", inferMoe, costMoe});
}

}  // namespace ts::ops
