// Broadcasting binary and variadic elementwise operations (ONNX opset 11-17): arithmetic, comparisons, logic,
// Where. When every input's contents are known (shape math: Shape -> Gather -> Mul -> Concat -> Reshape) the
// result's contents are computed too, symbolically where Dim arithmetic allows.
#include <cmath>
#include <functional>

#include "ops/registry.h"

namespace ts::ops {
namespace {

enum class Kind { Arithmetic, Comparison, Logic, Variadic, Where };

Kind kindOf(const std::string& type) {
    if (type == "Equal" || type == "Less" || type == "Greater" || type == "LessOrEqual" || type == "GreaterOrEqual")
        return Kind::Comparison;
    if (type == "And" || type == "Or" || type == "Xor") return Kind::Logic;
    if (type == "Sum" || type == "Mean" || type == "Max" || type == "Min") return Kind::Variadic;
    if (type == "Where") return Kind::Where;
    return Kind::Arithmetic;
}

// ---- symbolic comparison ----

// What is provable about a - b for every N >= 1, S >= 1. A polynomial whose symbolic terms all have
// non-negative coefficients is at least its value at N = S = 1 (and at most it, when all are non-positive).
struct Order {
    bool ge = false, gt = false, le = false, lt = false, eq = false;
};

Order compareDims(const Dim& a, const Dim& b) {
    const Dim diff = a - b;
    bool allNonNegative = true, allNonPositive = true;
    for (const Dim::Term& t : diff.terms()) {
        if (t.batchExp == 0 && t.seqExp == 0) continue;
        allNonNegative &= t.coef >= 0;
        allNonPositive &= t.coef <= 0;
    }
    const int64_t atOne = diff.eval(1, 1);
    Order o;
    o.eq = diff == Dim(0);
    o.ge = allNonNegative && atOne >= 0;
    o.gt = allNonNegative && atOne > 0;
    o.le = allNonPositive && atOne <= 0;
    o.lt = allNonPositive && atOne < 0;
    return o;
}

// 1 when `yes` is provable, 0 when `no` is, unknown otherwise.
std::optional<Dim> decide(bool yes, bool no) {
    if (yes) return Dim(1);
    if (no) return Dim(0);
    return std::nullopt;
}

// ---- known-content evaluation ----

std::optional<int64_t> constantOf(const Dim& d) {
    if (!d.isConstant()) return std::nullopt;
    return d.constant();
}

std::optional<Dim> boolDim(std::optional<bool> b) {
    if (!b) return std::nullopt;
    return Dim(*b ? 1 : 0);
}

// One element of an integer (or bool) result from integer operands.
std::optional<Dim> intBinary(const Operation& op, const Dim& a, const Dim& b) {
    const std::string& t = op.type;
    if (t == "Add" || t == "Sum") return a + b;
    if (t == "Sub") return a - b;
    if (t == "Mul") return a * b;
    if (t == "Div") {
        auto ca = constantOf(a), cb = constantOf(b);
        if (ca && cb) {
            if (*cb == 0) throw ShapeError("Div of known integers divides by zero");
            return Dim(*ca / *cb);  // integer Div truncates (onnxruntime)
        }
        return a.divExact(b);
    }
    if (t == "Max" || t == "Min") {
        const Order o = compareDims(a, b);
        if (o.ge) return t == "Max" ? a : b;
        if (o.le) return t == "Max" ? b : a;
        return std::nullopt;
    }
    if (t == "Equal" || t == "Less" || t == "Greater" || t == "LessOrEqual" || t == "GreaterOrEqual") {
        const Order o = compareDims(a, b);
        if (t == "Equal") return decide(o.eq, o.gt || o.lt);
        if (t == "Less") return decide(o.lt, o.ge);
        if (t == "Greater") return decide(o.gt, o.le);
        if (t == "LessOrEqual") return decide(o.le, o.gt);
        return decide(o.ge, o.lt);
    }
    if (t == "Pow") {
        auto e = constantOf(b);
        if (!e || *e < 0 || *e > 62) return std::nullopt;
        Dim r(1);
        for (int64_t i = 0; i < *e; ++i) r = r * a;  // Dim arithmetic throws on overflow
        return r;
    }
    auto ca = constantOf(a), cb = constantOf(b);
    if (!ca || !cb) return std::nullopt;
    if (t == "Mod") {
        if (*cb == 0) throw ShapeError("Mod of known integers divides by zero");
        int64_t r = *ca % *cb;
        // fmod=0: the result takes the divisor's sign (Python semantics).
        if (op.attrInt("fmod", 0) == 0 && r != 0 && ((r < 0) != (*cb < 0))) r += *cb;
        return Dim(r);
    }
    if (t == "And") return boolDim((*ca != 0) && (*cb != 0));
    if (t == "Or") return boolDim((*ca != 0) || (*cb != 0));
    if (t == "Xor") return boolDim((*ca != 0) != (*cb != 0));
    if (t == "BitShift") {
        if (*cb < 0 || *cb > 63) return std::nullopt;
        const bool left = op.attrString("direction", "") == "LEFT";
        const uint64_t v = static_cast<uint64_t>(*ca);
        return Dim(static_cast<int64_t>(left ? v << *cb : v >> *cb));
    }
    return std::nullopt;
}

// One element of a floating result, or a comparison of floating operands (as 0/1).
std::optional<double> floatBinary(const Operation& op, double a, double b) {
    const std::string& t = op.type;
    if (t == "Add" || t == "Sum") return a + b;
    if (t == "Sub") return a - b;
    if (t == "Mul") return a * b;
    if (t == "Div") return a / b;
    if (t == "Pow") return std::pow(a, b);
    if (t == "Max") return std::fmax(a, b);
    if (t == "Min") return std::fmin(a, b);
    if (t == "Mod") return op.attrInt("fmod", 0) ? std::fmod(a, b) : a - std::floor(a / b) * b;
    if (t == "Equal") return a == b ? 1.0 : 0.0;
    if (t == "Less") return a < b ? 1.0 : 0.0;
    if (t == "Greater") return a > b ? 1.0 : 0.0;
    if (t == "LessOrEqual") return a <= b ? 1.0 : 0.0;
    if (t == "GreaterOrEqual") return a >= b ? 1.0 : 0.0;
    return std::nullopt;
}

// Constant shape, or empty optional when some dimension is symbolic.
std::optional<std::vector<int64_t>> constShape(const Shape& s) {
    std::vector<int64_t> r;
    for (const Dim& d : s) {
        if (!d.isConstant()) return std::nullopt;
        r.push_back(d.constant());
    }
    return r;
}

// For every output element, the flat index into an input broadcast to `out`.
std::vector<size_t> broadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
    size_t total = 1;
    for (int64_t d : out) total *= static_cast<size_t>(d);
    std::vector<size_t> idx(total, 0);
    const size_t offset = out.size() - in.size();
    for (size_t flat = 0; flat < total; ++flat) {
        size_t rem = flat, src = 0, stride = 1;
        for (size_t k = out.size(); k-- > 0;) {
            const size_t coord = rem % static_cast<size_t>(out[k]);
            rem /= static_cast<size_t>(out[k]);
            if (k >= offset) {
                const int64_t dim = in[k - offset];
                if (dim != 1) src += coord * stride;
                stride *= static_cast<size_t>(dim);
            }
        }
        idx[flat] = src;
    }
    return idx;
}

// A value's contents as doubles: its float data, or its integer data when all constant.
std::optional<std::vector<double>> numericData(const Value& v) {
    if (v.floatData) return v.floatData;
    if (!v.intData) return std::nullopt;
    std::vector<double> r;
    for (const Dim& d : *v.intData) {
        if (!d.isConstant()) return std::nullopt;
        r.push_back(static_cast<double>(d.constant()));
    }
    return r;
}

// Computes the output's known contents when every input's are known and the shapes are constant and small.
void foldContents(InferCtx& c, const std::vector<const Value*>& ins, const Shape& outShape, DType outType) {
    auto outDims = constShape(outShape);
    if (!outDims) return;
    const Dim total = numel(outShape);
    if (total.constant() > limits::kMaxKnownValueElements) return;
    const size_t count = static_cast<size_t>(total.constant());
    std::vector<std::vector<size_t>> index;
    for (const Value* v : ins) {
        auto dims = constShape(v->shape);
        if (!dims) return;
        const size_t elems = static_cast<size_t>(numel(v->shape).constant());
        // Contents unknown or inconsistent with the shape: every kind held must match it (numericData
        // reads floatData first, the integer paths intData).
        if (!v->intData && !v->floatData) return;
        if (v->intData && v->intData->size() != elems) return;
        if (v->floatData && v->floatData->size() != elems) return;
        index.push_back(broadcastIndex(*dims, *outDims));
    }
    const Operation& op = c.op();
    const Kind kind = kindOf(op.type);
    if (kind == Kind::Where) {
        // Select known contents element by element; the condition must be constant.
        const Value& cond = *ins[0];
        if (!cond.intData) return;
        const bool floating = isFloating(outType);
        std::vector<Dim> ints;
        std::vector<double> floats;
        std::optional<std::vector<double>> fx, fy;
        if (floating && (!(fx = numericData(*ins[1])) || !(fy = numericData(*ins[2])))) return;
        if (!floating && (!ins[1]->intData || !ins[2]->intData)) return;
        for (size_t i = 0; i < count; ++i) {
            auto pick = constantOf((*cond.intData)[index[0][i]]);
            if (!pick) return;
            const size_t which = *pick ? 1 : 2;
            if (floating)
                floats.push_back((which == 1 ? *fx : *fy)[index[which][i]]);
            else
                ints.push_back((*ins[which]->intData)[index[which][i]]);
        }
        if (floating)
            c.out(0).floatData = std::move(floats);
        else
            c.out(0).intData = std::move(ints);
        return;
    }
    bool allInts = true;
    for (const Value* v : ins) allInts &= v->intData.has_value();
    if (allInts && !isFloating(outType)) {
        std::vector<Dim> r(count);
        for (size_t i = 0; i < count; ++i) {
            Dim acc = (*ins[0]->intData)[index[0][i]];
            for (size_t k = 1; k < ins.size(); ++k) {
                auto next = intBinary(op, acc, (*ins[k]->intData)[index[k][i]]);
                if (!next) return;
                acc = *next;
            }
            if (op.type == "Mean") {
                auto q = acc.divExact(Dim(static_cast<int64_t>(ins.size())));
                if (!q) return;
                acc = *q;
            }
            r[i] = acc;
        }
        c.out(0).intData = std::move(r);
        return;
    }
    // Floating contents (or comparisons of floating contents).
    std::vector<std::vector<double>> data;
    for (const Value* v : ins) {
        auto d = numericData(*v);
        if (!d) return;
        data.push_back(std::move(*d));
    }
    std::vector<double> r(count);
    for (size_t i = 0; i < count; ++i) {
        double acc = data[0][index[0][i]];
        for (size_t k = 1; k < ins.size(); ++k) {
            auto next = floatBinary(op, acc, data[k][index[k][i]]);
            if (!next) return;
            acc = *next;
        }
        if (op.type == "Mean") acc /= static_cast<double>(ins.size());
        r[i] = acc;
    }
    if (isFloating(outType)) {
        c.out(0).floatData = std::move(r);
    } else if (outType == DType::Bool || kind == Kind::Comparison) {
        std::vector<Dim> ints;
        for (double v : r) ints.push_back(Dim(v != 0 ? 1 : 0));
        c.out(0).intData = std::move(ints);
    } else {
        // Integer result from floating operands (e.g. Pow of an int by a float exponent): keep exact integers.
        std::vector<Dim> ints;
        for (double v : r) {
            if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) > 9.0e15) return;
            ints.push_back(Dim(static_cast<int64_t>(v)));
        }
        c.out(0).intData = std::move(ints);
    }
}

// ---- inference ----

void inferElementwise(InferCtx& c) {
    const Operation& op = c.op();
    const Kind kind = kindOf(op.type);
    if (kind == Kind::Variadic)
        c.expectInputs(1);
    else if (kind == Kind::Where)
        c.expectInputs(3, 3);
    else
        c.expectInputs(2, 2);
    std::vector<const Value*> ins;
    for (size_t i = 0; i < c.numInputs(); ++i) ins.push_back(&c.in(i));
    if (kind == Kind::Logic)
        for (const Value* v : ins)
            if (v->dtype != DType::Bool)
                throw ShapeError(op.type + " expects bool inputs, got " + std::string(dtypeName(v->dtype)));
    if (kind == Kind::Where && ins[0]->dtype != DType::Bool)
        throw ShapeError("Where condition must be bool, got " + std::string(dtypeName(ins[0]->dtype)));
    if (op.type == "BitShift") {
        std::string dir = op.attrString("direction", "");
        if (dir != "LEFT" && dir != "RIGHT") throw ShapeError("BitShift direction must be LEFT or RIGHT");
    }
    Shape out = ins[0]->shape;
    for (size_t i = 1; i < ins.size(); ++i) {
        try {
            out = broadcastShapes(out, ins[i]->shape);
        } catch (const ShapeError&) {
            std::string shapes;
            for (size_t k = 0; k < ins.size(); ++k) shapes += (k ? " and " : "") + shapeStr(ins[k]->shape);
            throw ShapeError(op.type + " inputs " + shapes + " do not broadcast");
        }
    }
    DType outType = ins[0]->dtype;
    if (kind == Kind::Comparison || kind == Kind::Logic) outType = DType::Bool;
    if (kind == Kind::Where) outType = ins[1]->dtype;
    // Copy the inputs' contents before setOutput clears the output (an input may alias nothing here, but be safe).
    std::vector<Value> copies;
    copies.reserve(ins.size());
    for (const Value* v : ins) {
        Value k;
        k.shape = v->shape;
        k.dtype = v->dtype;
        k.intData = v->intData;
        k.floatData = v->floatData;
        copies.push_back(std::move(k));
    }
    c.setOutput(0, outType, out);
    std::vector<const Value*> known;
    bool allKnown = true;
    for (const Value& v : copies) {
        allKnown &= v.intData.has_value() || v.floatData.has_value();
        known.push_back(&v);
    }
    if (allKnown) foldContents(c, known, out, outType);
}

// ---- costs ----

OpCost baseCost(const CostCtx& c, double forwardPerElement) {
    OpCost cost;
    cost.forwardFlops = forwardPerElement * c.outNumel(0);
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    return cost;
}

// Add, Sub, Sum: each input's gradient is the output gradient (negated or summed over broadcast dimensions):
// one operation per output element per input that needs it. Nothing is saved.
OpCost costAdditive(const CostCtx& c) {
    const double inputs = static_cast<double>(c.op().inputs.size());
    OpCost cost = baseCost(c, std::max(1.0, inputs - 1));
    for (size_t i = 0; i < c.op().inputs.size(); ++i)
        if (c.inNeedsGrad(i)) cost.backwardFlops += c.outNumel(0);
    return cost;
}

OpCost costMean(const CostCtx& c) {
    OpCost cost = baseCost(c, static_cast<double>(c.op().inputs.size()));  // adds and one division
    for (size_t i = 0; i < c.op().inputs.size(); ++i)
        if (c.inNeedsGrad(i)) cost.backwardFlops += c.outNumel(0);
    return cost;
}

OpCost costMul(const CostCtx& c) {
    OpCost cost = baseCost(c, 1);
    const double elems = c.outNumel(0);
    if (c.inNeedsGrad(0)) cost.backwardFlops += elems;  // g * b
    if (c.inNeedsGrad(1)) cost.backwardFlops += elems;  // g * a
    if (c.inNeedsGrad(1)) saveInput(c, cost, 0);
    if (c.inNeedsGrad(0)) saveInput(c, cost, 1);
    return cost;
}

OpCost costDiv(const CostCtx& c) {
    OpCost cost = baseCost(c, 1);
    const double elems = c.outNumel(0);
    if (c.inNeedsGrad(0)) cost.backwardFlops += elems;      // g / b
    if (c.inNeedsGrad(1)) cost.backwardFlops += 3 * elems;  // -g * a / b^2
    // The numerator's gradient needs b; the denominator's needs a and b.
    if (c.anyInputNeedsGrad()) saveInput(c, cost, 1);
    if (c.inNeedsGrad(1)) saveInput(c, cost, 0);
    return cost;
}

OpCost costPow(const CostCtx& c) {
    OpCost cost = baseCost(c, 1);
    const double elems = c.outNumel(0);
    if (c.inNeedsGrad(0)) cost.backwardFlops += 3 * elems;  // g * e * x^(e-1)
    if (c.inNeedsGrad(1)) cost.backwardFlops += 3 * elems;  // g * y * ln(x)
    // pow.Tensor_Scalar (a constant exponent) keeps the base; pow.Tensor_Tensor also the exponent,
    // and the result for its gradient.
    if (c.anyInputNeedsGrad()) {
        saveInput(c, cost, 0);
        if (c.g.values[c.inputValue(1)].kind != ValueKind::Constant) saveInput(c, cost, 1);
    }
    if (c.inNeedsGrad(1)) saveOutput(c, cost, 0);
    return cost;
}

OpCost costMod(const CostCtx& c) {
    OpCost cost = baseCost(c, 1);
    const double elems = c.outNumel(0);
    if (c.inNeedsGrad(0)) cost.backwardFlops += elems;
    if (c.inNeedsGrad(1)) {
        cost.backwardFlops += 2 * elems;  // -g * trunc(a / b)
        saveInput(c, cost, 0);
        saveInput(c, cost, 1);
    }
    return cost;
}

// Max/Min: the gradient goes to the input that won (maximum/minimum save both operands for the mask).
OpCost costMaxMin(const CostCtx& c) {
    const size_t n = c.op().inputs.size();
    OpCost cost = baseCost(c, std::max<double>(1, static_cast<double>(n) - 1));
    for (size_t i = 0; i < n; ++i)
        if (c.inNeedsGrad(i)) cost.backwardFlops += 2 * c.outNumel(0);
    if (c.anyInputNeedsGrad() && n > 1)
        for (size_t i = 0; i < n; ++i) saveInput(c, cost, i);
    return cost;
}

// Comparisons, logic, bit shifts: one operation per element, no gradient.
OpCost costNoGrad(const CostCtx& c) {
    return baseCost(c, 1);
}

OpCost costWhere(const CostCtx& c) {
    OpCost cost = baseCost(c, 1);
    for (size_t i = 1; i < 3; ++i)
        if (c.inNeedsGrad(i)) cost.backwardFlops += c.outNumel(0);  // the gradient masked by the condition
    if (c.inNeedsGrad(1) || c.inNeedsGrad(2)) saveInput(c, cost, 0);
    return cost;
}

}  // namespace

void registerElementwiseOps(std::vector<OpDef>& t) {
    t.push_back({"Add", inferElementwise, costAdditive});
    t.push_back({"Sub", inferElementwise, costAdditive});
    t.push_back({"Sum", inferElementwise, costAdditive});
    t.push_back({"Mean", inferElementwise, costMean});
    t.push_back({"Mul", inferElementwise, costMul});
    t.push_back({"Div", inferElementwise, costDiv});
    t.push_back({"Pow", inferElementwise, costPow});
    t.push_back({"Mod", inferElementwise, costMod});
    t.push_back({"Max", inferElementwise, costMaxMin});
    t.push_back({"Min", inferElementwise, costMaxMin});
    for (const char* type :
         {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitShift"})
        t.push_back({type, inferElementwise, costNoGrad});
    t.push_back({"Where", inferElementwise, costWhere});
}

}  // namespace ts::ops
