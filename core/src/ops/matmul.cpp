// Matrix products (ONNX opset 11-17): MatMul (numpy semantics), Gemm, Einsum.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "ops/registry.h"

namespace ts::ops {
namespace {

// ---- MatMul ----

void inferMatMul(InferCtx& c) {
    c.expectInputs(2, 2);
    const Value& a = c.in(0);
    const Value& b = c.in(1);
    if (a.shape.empty() || b.shape.empty())
        throw ShapeError("MatMul does not accept scalars (shapes " + shapeStr(a.shape) + " and " + shapeStr(b.shape) +
                         ")");
    // 1-D operands: a [K] acts as [1, K], b [K] as [K, 1]; the added dimension is removed afterwards.
    Shape sa = a.shape, sb = b.shape;
    const bool vecA = sa.size() == 1, vecB = sb.size() == 1;
    if (vecA) sa.insert(sa.begin(), Dim(1));
    if (vecB) sb.push_back(Dim(1));
    const Dim& ka = sa[sa.size() - 1];
    const Dim& kb = sb[sb.size() - 2];
    if (ka != kb)
        throw ShapeError("MatMul inner dimensions differ: " + shapeStr(a.shape) + " x " + shapeStr(b.shape) + " (" +
                         ka.str() + " vs " + kb.str() + ")");
    Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
    Shape out;
    try {
        out = broadcastShapes(batchA, batchB);
    } catch (const ShapeError&) {
        throw ShapeError("MatMul batch dimensions of " + shapeStr(a.shape) + " and " + shapeStr(b.shape) +
                         " do not broadcast");
    }
    if (!vecA) out.push_back(sa[sa.size() - 2]);
    if (!vecB) out.push_back(sb[sb.size() - 1]);
    c.setOutput(0, a.dtype, std::move(out));
}

OpCost costMatMul(const CostCtx& c) {
    OpCost cost;
    auto a = c.inShape(0);
    // Every output element is a dot product of length K (the last dimension of A).
    const double k = static_cast<double>(a.back());
    const double gemm = 2.0 * c.outNumel(0) * k;
    cost.forwardFlops = gemm;
    // One GEMM of the same size per input needing a gradient (dA = dY B^T, dB = A^T dY).
    if (c.inNeedsGrad(0)) cost.backwardFlops += gemm;
    if (c.inNeedsGrad(1)) cost.backwardFlops += gemm;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    // dA needs B, dB needs A; parameters are never counted as saved.
    if (c.inNeedsGrad(1)) saveInput(c, cost, 0);
    if (c.inNeedsGrad(0)) saveInput(c, cost, 1);
    return cost;
}

// ---- Gemm ----

void inferGemm(InferCtx& c) {
    c.expectInputs(2, 3);
    const Operation& op = c.op();
    const Value& a = c.in(0);
    const Value& b = c.in(1);
    if (a.shape.size() != 2 || b.shape.size() != 2)
        throw ShapeError("Gemm expects 2-D inputs, got " + shapeStr(a.shape) + " and " + shapeStr(b.shape));
    const bool transA = op.attrInt("transA", 0) != 0, transB = op.attrInt("transB", 0) != 0;
    const Dim& m = transA ? a.shape[1] : a.shape[0];
    const Dim& ka = transA ? a.shape[0] : a.shape[1];
    const Dim& kb = transB ? b.shape[1] : b.shape[0];
    const Dim& n = transB ? b.shape[0] : b.shape[1];
    if (ka != kb)
        throw ShapeError("Gemm inner dimensions differ: A " + shapeStr(a.shape) + (transA ? " (transposed)" : "") +
                         " and B " + shapeStr(b.shape) + (transB ? " (transposed)" : "") + " (" + ka.str() + " vs " +
                         kb.str() + ")");
    Shape out{m, n};
    if (c.hasInput(2)) {
        const Value& bias = c.in(2);
        // C broadcasts unidirectionally to [M, N].
        bool ok = bias.shape.size() <= 2;
        if (ok) {
            try {
                ok = broadcastShapes(bias.shape, out) == out;
            } catch (const ShapeError&) {
                ok = false;
            }
        }
        if (!ok) throw ShapeError("Gemm C " + shapeStr(bias.shape) + " does not broadcast to " + shapeStr(out));
    }
    c.setOutput(0, a.dtype, std::move(out));
}

OpCost costGemm(const CostCtx& c) {
    OpCost cost;
    auto a = c.inShape(0);
    const double k = static_cast<double>(c.op().attrInt("transA", 0) ? a[0] : a[1]);
    const double outElems = c.outNumel(0);
    const double gemm = 2.0 * outElems * k;
    cost.forwardFlops = gemm + (c.hasInput(2) ? outElems : 0.0);  // + beta*C added once per output
    if (c.inNeedsGrad(0)) cost.backwardFlops += gemm;
    if (c.inNeedsGrad(1)) cost.backwardFlops += gemm;
    if (c.inNeedsGrad(2)) cost.backwardFlops += outElems;  // dC: the output gradient summed to C's shape
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(1)) saveInput(c, cost, 0);
    if (c.inNeedsGrad(0)) saveInput(c, cost, 1);
    return cost;
}

// ---- Einsum ----

struct EinsumSpec {
    std::vector<std::string> inputs;  // labels per operand; '.' stands for the ellipsis dims (one char)
    std::string output;
    bool explicitOutput = false;
};

EinsumSpec parseEinsum(const std::string& equation, size_t numInputs) {
    std::string eq;
    for (char ch : equation)
        if (ch != ' ') eq += ch;
    EinsumSpec spec;
    size_t arrow = eq.find("->");
    std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
    if (arrow != std::string::npos) {
        spec.explicitOutput = true;
        spec.output = eq.substr(arrow + 2);
    }
    auto compact = [&](std::string term) {
        size_t e = term.find("...");
        if (e != std::string::npos) term.replace(e, 3, ".");
        for (char ch : term)
            if (ch != '.' && !std::isalpha(static_cast<unsigned char>(ch)))
                throw ShapeError("Einsum equation '" + equation + "' has an invalid character '" + ch + "'");
        if (std::count(term.begin(), term.end(), '.') > 1)
            throw ShapeError("Einsum equation '" + equation + "' has more than one ellipsis in a term");
        return term;
    };
    size_t start = 0;
    while (true) {
        size_t comma = lhs.find(',', start);
        spec.inputs.push_back(compact(lhs.substr(start, comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (spec.inputs.size() != numInputs)
        throw ShapeError("Einsum equation '" + equation + "' names " + std::to_string(spec.inputs.size()) +
                         " operands but has " + std::to_string(numInputs) + " inputs");
    spec.output = compact(spec.output);
    return spec;
}

// Label sizes (and ellipsis dims) of an einsum; fills `out` with the output shape.
std::map<char, Dim> einsumLabels(const InferCtx& c, const EinsumSpec& spec, Shape& out) {
    std::map<char, Dim> sizes;
    Shape ellipsis;
    bool hasEllipsis = false;
    for (size_t i = 0; i < spec.inputs.size(); ++i) {
        const Shape& shape = c.in(i).shape;
        const std::string& term = spec.inputs[i];
        const bool ell = term.find('.') != std::string::npos;
        const size_t named = term.size() - (ell ? 1 : 0);
        if (ell ? shape.size() < named : shape.size() != named)
            throw ShapeError("Einsum operand " + std::to_string(i) + " " + shapeStr(shape) + " does not match term '" +
                             term + "'");
        size_t dim = 0;
        for (char ch : term) {
            if (ch == '.') {
                size_t len = shape.size() - named;
                Shape e(shape.begin() + dim, shape.begin() + dim + len);
                ellipsis = hasEllipsis ? broadcastShapes(ellipsis, e) : e;
                hasEllipsis = true;
                dim += len;
                continue;
            }
            const Dim& d = shape[dim++];
            auto it = sizes.find(ch);
            if (it == sizes.end())
                sizes.emplace(ch, d);
            else if (it->second == Dim(1))
                it->second = d;
            else if (d != it->second && d != Dim(1))
                throw ShapeError(std::string("Einsum label '") + ch + "' has sizes " + it->second.str() + " and " +
                                 d.str());
        }
    }
    std::string output = spec.output;
    if (!spec.explicitOutput) {
        // Implicit output: ellipsis first, then labels seen exactly once, alphabetically.
        std::map<char, int> counts;
        for (const auto& t : spec.inputs)
            for (char ch : t)
                if (ch != '.') ++counts[ch];
        output = hasEllipsis ? "." : "";
        for (auto [ch, n] : counts)
            if (n == 1) output += ch;
    }
    std::set<char> seen;
    for (char ch : output) {
        if (ch == '.') {
            out.insert(out.end(), ellipsis.begin(), ellipsis.end());
            continue;
        }
        if (!seen.insert(ch).second) throw ShapeError(std::string("Einsum output repeats label '") + ch + "'");
        auto it = sizes.find(ch);
        if (it == sizes.end())
            throw ShapeError(std::string("Einsum output label '") + ch + "' does not appear in any operand");
        out.push_back(it->second);
    }
    sizes.emplace('.', numel(ellipsis));
    return sizes;
}

void inferEinsum(InferCtx& c) {
    c.expectInputs(1);
    EinsumSpec spec = parseEinsum(c.op().attrString("equation", ""), c.numInputs());
    Shape out;
    einsumLabels(c, spec, out);
    c.setOutput(0, c.in(0).dtype, std::move(out));
}

OpCost costEinsum(const CostCtx& c) {
    OpCost cost;
    // Evaluated as pairwise contractions, each a multiply-add over the joint index space of all labels
    // (an upper bound when a contraction order could shrink intermediate results).
    EinsumSpec spec = parseEinsum(c.op().attrString("equation", ""), c.op().inputs.size());
    std::map<char, double> sizes;
    double ellipsis = 1;
    for (size_t i = 0; i < spec.inputs.size(); ++i) {
        auto shape = c.inShape(i);
        const std::string& term = spec.inputs[i];
        const size_t named = term.size() - (term.find('.') != std::string::npos ? 1 : 0);
        if (shape.size() < named) continue;  // inference rejected it already
        size_t dim = 0;
        for (char ch : term) {
            if (dim >= shape.size() && ch != '.') break;
            if (ch == '.') {
                double e = 1;
                for (size_t k = 0; k < shape.size() - named; ++k) e *= static_cast<double>(shape[dim++]);
                ellipsis = std::max(ellipsis, e);
                continue;
            }
            double d = static_cast<double>(shape[dim++]);
            sizes[ch] = std::max(sizes[ch], d);
        }
    }
    double space = ellipsis;
    for (auto [ch, d] : sizes) space *= d;
    const double operands = static_cast<double>(spec.inputs.size());
    const double passes = std::max(1.0, operands - 1);
    cost.forwardFlops = (operands > 1 ? 2.0 : 1.0) * space * passes;
    for (size_t i = 0; i < spec.inputs.size(); ++i)
        if (c.inNeedsGrad(i)) cost.backwardFlops += cost.forwardFlops;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    // Each operand's gradient contracts the output gradient with the other operands.
    if (spec.inputs.size() > 1)
        for (size_t i = 0; i < spec.inputs.size(); ++i)
            for (size_t j = 0; j < spec.inputs.size(); ++j)
                if (i != j && c.inNeedsGrad(j)) saveInput(c, cost, i);
    return cost;
}

}  // namespace

void registerMatMulOps(std::vector<OpDef>& t) {
    t.push_back({"MatMul", inferMatMul, costMatMul});
    t.push_back({"Gemm", inferGemm, costGemm});
    t.push_back({"Einsum", inferEinsum, costEinsum});
}

}  // namespace ts::ops
