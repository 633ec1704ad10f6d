// Reductions (ONNX opset 11-17): Reduce* (axes as an attribute, or as the second input from opset 13 for
// ReduceSum and opset 18 for the others), ArgMax/ArgMin and CumSum.
#include <algorithm>

#include "ops/registry.h"

namespace ts::ops {
namespace {

struct ReduceInfo {
    const char* type;
    double forwardPerInput;   // FLOPs per input element
    double forwardPerOutput;  // FLOPs per output element (final division, root, log)
    double backwardPerInput;  // FLOPs per input element when the input needs a gradient
    bool savesInput, savesOutput;
};

const ReduceInfo kReduce[] = {
    {"ReduceSum", 1, 0, 1, false, false},   // backward broadcasts the gradient
    {"ReduceMean", 1, 1, 1, false, false},  // sum, one division per output
    {"ReduceMax", 1, 0, 2, true, true},     // amax/amin backward: mask where x == result
    {"ReduceMin", 1, 0, 2, true, true},        {"ReduceProd", 1, 0, 2, true, true},  // prod_backward: g * result / x
    {"ReduceL1", 2, 0, 2, true, false},         // |x| and add; backward g * sign(x)
    {"ReduceL2", 2, 1, 2, true, true},          // square-accumulate, sqrt; norm_backward: g * x / result
    {"ReduceSumSquare", 2, 0, 2, true, false},  // backward 2 * x * g
    {"ReduceLogSum", 1, 1, 1, false, false},    // log of a sum: keeps only the small sum
    {"ReduceLogSumExp", 4, 1, 3, true, true},   // max, sub, exp, add; logsumexp_backward: g * exp(x - result)
};

const ReduceInfo& reduceInfo(const std::string& type) {
    for (const ReduceInfo& r : kReduce)
        if (type == r.type) return r;
    throw ShapeError("no reduction entry for " + type);
}

// The reduced axes (normalized, sorted) or nullopt for "no reduction" (noop_with_empty_axes).
std::optional<std::vector<int64_t>> reducedAxes(const InferCtx& c, int64_t rank) {
    const Operation& op = c.op();
    std::vector<int64_t> axes;
    bool given = false;
    if (c.hasInput(1)) {
        axes = knownConstInts(c, 1, "axes");
        given = true;
    } else if (op.hasAttr("axes")) {
        axes = op.attrInts("axes");
        given = true;
    }
    if (given && !axes.empty()) {
        for (int64_t& a : axes) a = normalizeAxis(a, rank);
        std::sort(axes.begin(), axes.end());
        if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
            throw ShapeError(op.type + " lists an axis twice");
        return axes;
    }
    if (op.attrInt("noop_with_empty_axes", 0) != 0) return std::nullopt;
    axes.resize(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) axes[static_cast<size_t>(i)] = i;
    return axes;
}

void inferReduce(InferCtx& c) {
    c.expectInputs(1, 2);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    auto axes = reducedAxes(c, rank);
    const std::optional<std::vector<Dim>> ints = x.intData;
    if (!axes) {
        c.setOutput(0, x.dtype, x.shape);
        c.out(0).intData = ints;
        return;
    }
    const bool keep = op.attrInt("keepdims", 1) != 0;
    Shape out;
    for (int64_t i = 0; i < rank; ++i) {
        const bool reduced = std::binary_search(axes->begin(), axes->end(), i);
        if (!reduced)
            out.push_back(x.shape[static_cast<size_t>(i)]);
        else if (keep)
            out.push_back(Dim(1));
    }
    c.setOutput(0, x.dtype, out);
    // Known integer contents reduced to one element (e.g. ReduceProd of a shape slice feeding a Reshape).
    if (ints && numel(out) == Dim(1) && !ints->empty()) {
        Dim acc = (*ints)[0];
        for (size_t i = 1; i < ints->size(); ++i) {
            const Dim& v = (*ints)[i];
            if (op.type == "ReduceSum")
                acc = acc + v;
            else if (op.type == "ReduceProd")
                acc = acc * v;
            else if ((op.type == "ReduceMax" || op.type == "ReduceMin") && acc.isConstant() && v.isConstant())
                acc = (op.type == "ReduceMax") == (v.constant() > acc.constant()) ? v : acc;
            else
                return;
        }
        c.out(0).intData = std::vector<Dim>{acc};
    }
}

OpCost costReduce(const CostCtx& c) {
    const ReduceInfo& info = reduceInfo(c.op().type);
    OpCost cost;
    const double in = c.inNumel(0), out = c.outNumel(0);
    cost.forwardFlops = info.forwardPerInput * in + info.forwardPerOutput * out;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = info.backwardPerInput * in;
        if (info.savesInput) saveInput(c, cost, 0);
        if (info.savesOutput) saveOutput(c, cost, 0);
    }
    return cost;
}

// ---- ArgMax, ArgMin ----

void inferArg(InferCtx& c) {
    c.expectInputs(1, 1);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (rank == 0) throw ShapeError(op.type + " does not accept a scalar input");
    const int64_t axis = normalizeAxis(op.attrInt("axis", 0), rank);
    const bool keep = op.attrInt("keepdims", 1) != 0;
    Shape out = x.shape;
    if (keep)
        out[static_cast<size_t>(axis)] = Dim(1);
    else
        out.erase(out.begin() + axis);
    c.setOutput(0, DType::Int64, std::move(out));
}

OpCost costArg(const CostCtx& c) {
    OpCost cost;
    cost.forwardFlops = c.inNumel(0);  // one comparison per element; integer output, no gradient
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    return cost;
}

// ---- CumSum ----

void inferCumSum(InferCtx& c) {
    c.expectInputs(2, 2);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    const Value& axisValue = c.in(1);
    if (numel(axisValue.shape) != Dim(1))
        throw ShapeError("CumSum axis must be a scalar, got " + shapeStr(axisValue.shape));
    std::optional<int64_t> axis;
    if (axisValue.intData && axisValue.intData->size() == 1 && (*axisValue.intData)[0].isConstant())
        axis = normalizeAxis((*axisValue.intData)[0].constant(), static_cast<int64_t>(x.shape.size()));
    const std::optional<std::vector<Dim>> ints = x.intData;
    c.setOutput(0, x.dtype, x.shape);
    // Known 1-D integer contents: running sums stay exact.
    if (ints && axis && x.shape.size() == 1 && !ints->empty()) {
        std::vector<Dim> r(ints->size());
        const bool exclusive = op.attrInt("exclusive", 0) != 0, reverse = op.attrInt("reverse", 0) != 0;
        Dim acc(0);
        for (size_t k = 0; k < ints->size(); ++k) {
            const size_t i = reverse ? ints->size() - 1 - k : k;
            if (exclusive) {
                r[i] = acc;
                acc = acc + (*ints)[i];
            } else {
                acc = acc + (*ints)[i];
                r[i] = acc;
            }
        }
        c.out(0).intData = std::move(r);
    }
}

OpCost costCumSum(const CostCtx& c) {
    OpCost cost;
    const double elems = c.inNumel(0);
    cost.forwardFlops = elems;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) cost.backwardFlops = elems;  // a reversed cumulative sum; nothing saved
    return cost;
}

}  // namespace

void registerReductionOps(std::vector<OpDef>& t) {
    for (const ReduceInfo& r : kReduce) t.push_back({r.type, inferReduce, costReduce});
    t.push_back({"ArgMax", inferArg, costArg});
    t.push_back({"ArgMin", inferArg, costArg});
    t.push_back({"CumSum", inferCumSum, costCumSum});
}

}  // namespace ts::ops
