// What autograd keeps when an operator saves a tensor: the storage behind it. Views that PyTorch takes
// without copying (an expand, the attention output transposed back for the output projection, a chunk
// that a convolution saves) are kept as the tensor they view, once; views of parameters and constants
// are no activation at all. Every operator's saved tensors go through saveValue (ops/registry.h). Each
// rule was measured against autograd's saved tensors on the CPU (tests/real_models).
#include <set>
#include <string>

#include "ops/registry.h"

namespace ts {
namespace ops {

// Whether `value` is stored data or a view of it (a tied output layer's transposed embedding, a class
// token expanded to the batch): autograd then saves the parameter's own storage, no activation.
static bool viewOfStoredTensor(const Graph& g, int value) {
    for (int step = 0; value >= 0 && step < 64; ++step) {
        const Value& v = g.values[size_t(value)];
        if (v.kind == ValueKind::Parameter || v.kind == ValueKind::Buffer || v.kind == ValueKind::Constant) return true;
        if (v.producer < 0) return false;
        const Operation& op = g.ops[size_t(v.producer)];
        static const std::set<std::string> kViews = {"Transpose", "Reshape",  "Flatten", "Squeeze",
                                                     "Unsqueeze", "Identity", "Expand"};
        if (!kViews.count(op.type) || op.inputs.empty()) return false;
        value = op.inputs[0];
    }
    return false;
}

static const Operation* producerOf(const Graph& g, int v) {
    if (v < 0 || g.values[size_t(v)].producer < 0) return nullptr;
    const Operation& op = g.ops[size_t(g.values[size_t(v)].producer)];
    return op.inputs.empty() || op.inputs[0] < 0 ? nullptr : &op;
}

// Whether an attention's query is, in memory, its own projection's [.., seq, heads x dim] output: viewed
// as heads and transposed (through ops that write in their first full-size input's layout: a full
// rotation, casts, a scale; norms before the transpose), or the outermost slice of a packed projection
// made contiguous (nn.MultiheadAttention's). Otherwise the kernels' output is [batch, heads, seq, dim] in
// memory, as autograd's saved tensors show on the CPU (transformers 5.24): a query concatenated (a
// partial rotation's cat: GPT-NeoX, Phi) or normalised per head after the transpose (Gemma 3) is
// contiguous as [batch, heads, seq, dim]. A query sliced from a fused q, k, v projection is taken as a
// copy too: the kernels write a non-dense query's output as [batch, seq, heads, dim], but every such
// family measured copies before the kernel or after it (Phi-3's rotation concatenates even at full
// width, GPT-2 copies in its own code, ModernBERT unpads), which the graph does not show.
static bool queryInProjectionLayout(const Graph& g, int q) {
    static const std::set<std::string> kLayoutKeeping = {"Mul", "Add", "Sub", "Div", "Neg", "Cast", "Identity"};
    bool transposed = false;
    for (int step = 0; step < 64; ++step) {
        const Operation* op = producerOf(g, q);
        if (!op) return false;
        if (op->type == "MatMul" || op->type == "Gemm") return transposed;
        if (op->type == "LayerNormalization" || op->type == "RMSNormalization") {  // before the transpose only
            if (!transposed) return false;
            q = op->inputs[0];
            continue;
        }
        if (op->type == "RotaryEmbedding") {  // a full rotation; a partial one concatenates
            const Shape& x = g.values[size_t(op->inputs[0])].shape;
            const int64_t width = op->attrInt("rotary_embedding_dim", 0);
            if (width != 0 && (x.empty() || !(x.back() == Dim(width)))) return false;
            q = op->inputs[0];
            continue;
        }
        if (op->type == "Transpose" || op->type == "Reshape" || op->type == "Squeeze" || op->type == "Unsqueeze") {
            transposed |= op->type == "Transpose";
            q = op->inputs[0];
            continue;
        }
        if (op->type == "Gather" && op->attrInt("axis", 0) == 0 && op->inputs.size() == 2 && op->inputs[1] >= 0 &&
            g.values[size_t(op->inputs[1])].shape.empty()) {  // proj[0] of a packed [3, ...] projection
            q = op->inputs[0];
            continue;
        }
        if (!kLayoutKeeping.count(op->type)) return false;
        const Shape& out = g.values[size_t(q)].shape;
        // A norm's scaling by a statistic per row (broadcast along dim), after the transpose.
        if (!transposed && !out.empty() && !(out.back() == Dim(1)))
            for (int in : op->inputs)
                if (in >= 0 && g.values[size_t(in)].kind == ValueKind::Activation &&
                    !g.values[size_t(in)].shape.empty() && g.values[size_t(in)].shape.back() == Dim(1))
                    return false;
        int next = -1;
        for (int in : op->inputs)
            if (in >= 0 && g.values[size_t(in)].kind == ValueKind::Activation && g.values[size_t(in)].shape == out) {
                next = in;
                break;
            }
        if (next < 0) return false;
        q = next;
    }
    return false;
}

// The value whose storage PyTorch keeps when autograd saves `value`, where the two differ only by views
// PyTorch takes without copying:
// - an expand is a view (stride 0 along the broadcast axes), as are the unsqueeze and squeeze before it:
//   F.normalize's denominator, a norm per row expanded to the row, is kept at the norm's size;
// - the flash and memory-efficient attention kernels write their output in the query's memory layout:
//   where the query is its projection's output viewed as heads (queryInProjectionLayout), the output
//   transposed back to heads next to dim ([.., heads, dim]) and merged into [.., heads x dim] for the
//   output projection is the same storage, kept once (transformers' Llama, BERT, BART attentions,
//   nn.MultiheadAttention's; measured on autograd's saved tensors on the CPU).
static int storageOf(const Graph& g, int value) {
    for (int step = 0; step < 64; ++step) {
        const Operation* op = producerOf(g, value);
        if (!op) break;
        if (op->type == "Expand") {
            value = op->inputs[0];
            for (const Operation* view = producerOf(g, value);
                 view && (view->type == "Unsqueeze" || view->type == "Squeeze" || view->type == "Identity");
                 view = producerOf(g, value))
                value = view->inputs[0];
            continue;
        }
        const Operation* transpose = op->type == "Reshape" ? producerOf(g, op->inputs[0]) : op;
        if (!transpose || transpose->type != "Transpose") break;
        const std::vector<int64_t> perm = transpose->attrInts("perm");
        if (perm.size() != 4 || perm[2] != 1 || perm[3] != 3) break;  // [.., heads, dim]
        int output = transpose->inputs[0];
        const Operation* attention = producerOf(g, output);
        while (attention && attention->type == "Reshape" &&  // a view as itself (Falcon's .view(N, H, S, D))
               g.values[size_t(attention->inputs[0])].shape == g.values[size_t(output)].shape) {
            output = attention->inputs[0];
            attention = producerOf(g, output);
        }
        if (!attention || attention->type != "ScaledDotProductAttention" || attention->outputs.empty() ||
            attention->outputs[0] != output || attention->attrString("backend", "math") == "math" ||
            !queryInProjectionLayout(g, attention->inputs[0]))
            break;
        if (op->type == "Reshape") {  // heads and dim merged, last
            const Shape& heads = g.values[size_t(output)].shape;
            const Shape& merged = g.values[size_t(value)].shape;
            if (merged.empty() || heads.size() != 4 || !(merged.back() == heads[1] * heads[3])) break;
        }
        value = output;
    }
    return value;
}

void saveValue(const CostCtx& c, OpCost& cost, int value) {
    if (value < 0) return;
    if (viewOfStoredTensor(c.g, value)) return;
    value = storageOf(c.g, value);
    // A convolution saves its input as given: a slice or a chunk of a tensor (torch.split, chunk and slicing
    // return views) keeps the whole tensor alive (ShuffleNet's branch convolution reads one half of its
    // block's input: autograd keeps both). Other operators are not followed: the measured ones (sdpa on
    // a chunk of a fused projection, matmul, which copies an operand it cannot batch as it is) keep the
    // slice's own bytes.
    if (c.op().type == "Conv" || c.op().type == "ConvTranspose")
        for (int step = 0; step < 64; ++step) {
            const Value& sliced = c.g.values[size_t(value)];
            if (sliced.producer < 0) break;
            const Operation& op = c.g.ops[size_t(sliced.producer)];
            if ((op.type != "Split" && op.type != "Slice") || op.inputs.empty() || op.inputs[0] < 0) break;
            value = storageOf(c.g, op.inputs[0]);
        }
    const Value& v = c.g.values[value];
    for (const SavedTensor& s : cost.saved)
        if (s.value == value) return;
    cost.saved.push_back({value, static_cast<double>(numel(v.shape).eval(c.n, c.s)) * dtypeSize(v.dtype)});
}
void saveInput(const CostCtx& c, OpCost& cost, size_t i) {
    if (c.hasInput(i)) saveValue(c, cost, c.inputValue(i));
}
void saveOutput(const CostCtx& c, OpCost& cost, size_t i) {
    if (i < c.op().outputs.size()) saveValue(c, cost, c.outputValue(i));
}

}  // namespace ops
}  // namespace ts
