// Unary math and activations (ONNX opset 11-17 plus "Gelu" and "Silu"): shape-preserving, one table of per-element costs.
// Also Clip, PRelu and the axis-wise Softmax, LogSoftmax and Hardmax.
#include <cmath>

#include "ops/registry.h"

namespace ts::ops {
namespace {

int64_t opsetOf(const Operation& op) {
    return op.attrInt("_opset", 17);
}

// What autograd keeps for the backward of a unary operation (PyTorch derivatives.yaml).
enum class Saves { Nothing, Input, Output, InputAndOutput };

struct UnaryInfo {
    const char* type;
    double forwardFlops;   // per element
    double backwardFlops;  // per element, when the input needs a gradient
    Saves saves;
    double (*fold)(double);  // evaluates known float constants; nullptr: not folded
};

double relu(double x) {
    return x > 0 ? x : 0;
}
double sigmoid(double x) {
    return 1 / (1 + std::exp(-x));
}
double sign(double x) {
    return x > 0 ? 1 : (x < 0 ? -1 : 0);
}
double reciprocal(double x) {
    return 1 / x;
}
double neg(double x) {
    return -x;
}
double identity(double x) {
    return x;
}
double roundEven(double x) {
    return std::nearbyint(x);
}
double sqrtd(double x) {
    return std::sqrt(x);
}
double expd(double x) {
    return std::exp(x);
}
double logd(double x) {
    return std::log(x);
}
double absd(double x) {
    return std::fabs(x);
}
double floord(double x) {
    return std::floor(x);
}
double ceild(double x) {
    return std::ceil(x);
}
double erfd(double x) {
    return std::erf(x);
}
double tanhd(double x) {
    return std::tanh(x);
}

// Forward counts: 1 per arithmetic step or transcendental call (ops.h convention).
const UnaryInfo kUnary[] = {
    // Activations.
    {"Relu", 1, 1, Saves::Output, relu},         // threshold_backward(grad, result)
    {"LeakyRelu", 2, 2, Saves::Input, nullptr},  // leaky_relu_backward(grad, self)
    {"ThresholdedRelu", 1, 1, Saves::Input, nullptr},
    {"Elu", 3, 3, Saves::Input, nullptr},  // elu_backward(..., is_result=false, self)
    {"Selu", 4, 3, Saves::Input, nullptr},
    {"Celu", 4, 3, Saves::Input, nullptr},
    {"Sigmoid", 4, 3, Saves::Output, sigmoid},     // sigmoid_backward(grad, result): g*y*(1-y)
    {"HardSigmoid", 3, 2, Saves::Input, nullptr},  // hardsigmoid_backward(grad, self)
    {"HardSwish", 5, 4, Saves::Input, nullptr},    // hardswish_backward(grad, self)
    {"Tanh", 1, 3, Saves::Output, tanhd},          // tanh_backward(grad, result): g*(1-y^2)
    {"Softplus", 3, 4, Saves::Input, nullptr},     // softplus_backward(grad, self, ...)
    {"Softsign", 3, 4, Saves::Input, nullptr},     // x/(1+|x|): the gradient needs x
    {"Mish", 5, 8, Saves::Input, nullptr},         // mish_backward(grad, self)
    {"Gelu", 8, 10, Saves::Input, nullptr},        // gelu_backward(grad, self, approximate)
    // x * sigmoid(x) (4 + 1); silu_backward(grad, self) recomputes the sigmoid: g * s * (1 + x * (1 - s)).
    {"Silu", 5, 9, Saves::Input, nullptr},
    // Math.
    {"Erf", 1, 4, Saves::Input, erfd},                // 2/sqrt(pi) * exp(-x^2) * g
    {"Exp", 1, 1, Saves::Output, expd},               // g * result
    {"Log", 1, 1, Saves::Input, logd},                // g / self
    {"Sqrt", 1, 2, Saves::Output, sqrtd},             // g / (2 * result)
    {"Reciprocal", 1, 3, Saves::Output, reciprocal},  // -g * result^2
    {"Neg", 1, 1, Saves::Nothing, neg},
    {"Abs", 1, 2, Saves::Input, absd},  // g * sign(self)
    {"Sin", 1, 2, Saves::Input, nullptr},
    {"Cos", 1, 3, Saves::Input, nullptr},
    {"Tan", 1, 3, Saves::Output, nullptr},  // g * (1 + result^2)
    {"Asin", 1, 4, Saves::Input, nullptr},
    {"Acos", 1, 4, Saves::Input, nullptr},
    {"Atan", 1, 3, Saves::Input, nullptr},
    {"Sinh", 1, 2, Saves::Input, nullptr},
    {"Cosh", 1, 2, Saves::Input, nullptr},
    {"Asinh", 1, 4, Saves::Input, nullptr},
    {"Acosh", 1, 4, Saves::Input, nullptr},
    {"Atanh", 1, 3, Saves::Input, nullptr},
    // Piecewise-constant: zero gradient, nothing to keep.
    {"Floor", 1, 0, Saves::Nothing, floord},
    {"Ceil", 1, 0, Saves::Nothing, ceild},
    {"Round", 1, 0, Saves::Nothing, roundEven},
    {"Sign", 1, 0, Saves::Nothing, sign},
    // A view: no arithmetic.
    {"Identity", 0, 0, Saves::Nothing, identity},
};

const UnaryInfo& unaryInfo(const std::string& type) {
    for (const UnaryInfo& u : kUnary)
        if (type == u.type) return u;
    throw ShapeError("no unary cost entry for " + type);
}

// Integer contents pass through the integer-exact unary operations (shape math such as Neg, Abs, Identity).
std::optional<std::vector<Dim>> foldInts(const std::string& type, const std::vector<Dim>& data) {
    if (type == "Identity" || type == "Floor" || type == "Ceil" || type == "Round") return data;
    std::vector<Dim> r;
    for (const Dim& d : data) {
        if (type == "Neg")
            r.push_back(Dim(0) - d);
        else if (!d.isConstant())
            return std::nullopt;
        else if (type == "Abs")
            r.push_back(Dim(d.constant() < 0 ? -d.constant() : d.constant()));
        else if (type == "Sign")
            r.push_back(Dim(d.constant() > 0 ? 1 : (d.constant() < 0 ? -1 : 0)));
        else if (type == "Relu")
            r.push_back(Dim(d.constant() > 0 ? d.constant() : 0));
        else
            return std::nullopt;
    }
    return r;
}

void inferUnary(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& x = c.in(0);
    const std::string& type = c.op().type;
    if (type == "Gelu") {
        std::string approx = c.op().attrString("approximate", "none");
        if (approx != "none" && approx != "tanh")
            throw ShapeError("Gelu approximate must be \"none\" or \"tanh\", got \"" + approx + "\"");
    }
    std::optional<std::vector<Dim>> ints = x.intData;
    std::optional<std::vector<double>> floats = x.floatData;
    c.setOutput(0, x.dtype, x.shape);
    Value& y = c.out(0);
    const UnaryInfo& info = unaryInfo(type);
    if (ints) y.intData = foldInts(type, *ints);
    if (floats && info.fold) {
        std::vector<double> r;
        for (double v : *floats) r.push_back(info.fold(v));
        y.floatData = std::move(r);
    }
}

OpCost costUnary(const CostCtx& c) {
    const UnaryInfo& info = unaryInfo(c.op().type);
    if (c.op().type == "Identity") return {};
    OpCost cost = elementwiseCost(c, info.forwardFlops, info.backwardFlops);
    if (c.inNeedsGrad(0)) {
        if (info.saves == Saves::Input || info.saves == Saves::InputAndOutput) saveInput(c, cost, 0);
        if (info.saves == Saves::Output || info.saves == Saves::InputAndOutput) saveOutput(c, cost, 0);
    }
    return cost;
}

// ---- boolean predicates: Not, IsNaN, IsInf ----

void inferPredicate(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& x = c.in(0);
    if (c.op().type == "Not" && x.dtype != DType::Bool)
        throw ShapeError("Not expects a bool input, got " + std::string(dtypeName(x.dtype)));
    std::optional<std::vector<Dim>> ints = x.intData;
    c.setOutput(0, DType::Bool, x.shape);
    if (c.op().type == "Not" && ints) {
        std::vector<Dim> r;
        for (const Dim& d : *ints) {
            if (!d.isConstant()) return;
            r.push_back(Dim(d.constant() == 0 ? 1 : 0));
        }
        c.out(0).intData = std::move(r);
    }
}

OpCost costPredicate(const CostCtx& c) {
    return elementwiseCost(c, 1, 0);
}

// ---- PRelu ----

void inferPRelu(InferCtx& c) {
    c.expectInputs(2, 2);
    const Value& x = c.in(0);
    const Value& slope = c.in(1);
    // Before opset 7 a 1-D slope of C values applies along the channel axis (legacy broadcast).
    if (opsetOf(c.op()) < 7 && slope.shape.size() == 1 && x.shape.size() >= 2 && slope.shape[0] == x.shape[1]) {
        c.setOutput(0, x.dtype, x.shape);
        return;
    }
    // From opset 7 the slope broadcasts unidirectionally to the input.
    Shape b;
    try {
        b = broadcastShapes(x.shape, slope.shape);
    } catch (const ShapeError&) {
    }
    if (b != x.shape)
        throw ShapeError("PRelu slope " + shapeStr(slope.shape) + " does not broadcast to the input " +
                         shapeStr(x.shape));
    c.setOutput(0, x.dtype, x.shape);
}

OpCost costPRelu(const CostCtx& c) {
    OpCost cost = elementwiseCost(c, 2, 0);
    const double elems = c.outNumel(0);
    if (c.inNeedsGrad(0)) cost.backwardFlops += 2 * elems;
    if (c.inNeedsGrad(1)) cost.backwardFlops += 2 * elems;  // x * g where x < 0, summed to the slope's shape
    if (c.anyInputNeedsGrad()) {
        saveInput(c, cost, 0);  // _prelu_kernel_backward(grad, self, weight)
        saveInput(c, cost, 1);
    }
    return cost;
}

// ---- Clip ----

void inferClip(InferCtx& c) {
    c.expectInputs(1, 3);
    const Value& x = c.in(0);
    for (size_t i = 1; i < 3; ++i)
        if (c.hasInput(i) && !c.in(i).shape.empty() && numel(c.in(i).shape) != Dim(1))
            throw ShapeError(std::string("Clip ") + (i == 1 ? "min " : "max ") + shapeStr(c.in(i).shape) +
                             " must be a scalar");
    // Bounds: inputs from opset 11, attributes min/max before.
    std::optional<double> lo, hi;
    auto bound = [&](size_t i, const char* attr) -> std::optional<double> {
        if (c.hasInput(i)) {
            const Value& v = c.in(i);
            if (v.floatData && v.floatData->size() == 1) return (*v.floatData)[0];
            if (v.intData && v.intData->size() == 1 && (*v.intData)[0].isConstant())
                return static_cast<double>((*v.intData)[0].constant());
            return std::nullopt;
        }
        if (c.op().hasAttr(attr)) return c.op().attrFloat(attr, 0);
        return std::nullopt;
    };
    lo = bound(1, "min");
    hi = bound(2, "max");
    const bool boundsKnown = (!c.hasInput(1) || lo) && (!c.hasInput(2) || hi);
    std::optional<std::vector<Dim>> ints = x.intData;
    std::optional<std::vector<double>> floats = x.floatData;
    c.setOutput(0, x.dtype, x.shape);
    if (!boundsKnown) return;
    auto clip = [&](double v) {
        if (lo && v < *lo) v = *lo;
        if (hi && v > *hi) v = *hi;
        return v;
    };
    if (floats) {
        std::vector<double> r;
        for (double v : *floats) r.push_back(clip(v));
        c.out(0).floatData = std::move(r);
    }
    if (ints) {
        std::vector<Dim> r;
        for (const Dim& d : *ints) {
            if (!d.isConstant()) return;
            r.push_back(Dim(static_cast<int64_t>(clip(static_cast<double>(d.constant())))));
        }
        c.out(0).intData = std::move(r);
    }
}

OpCost costClip(const CostCtx& c) {
    OpCost cost = elementwiseCost(c, 2, 0);
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = 2 * c.outNumel(0);  // clamp_backward: the gradient masked where x is inside the bounds
        saveInput(c, cost, 0);
    }
    return cost;
}

// ---- Softmax, LogSoftmax, Hardmax ----

// Before opset 13 the input is coerced to 2-D at `axis` (default 1); from 13 the axis is a single dimension
// (default -1). The output shape is the input's either way; the axis is validated.
void inferSoftmax(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& x = c.in(0);
    const int64_t defaultAxis = opsetOf(c.op()) < 13 ? 1 : -1;
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = c.op().attrInt("axis", defaultAxis);
    if (rank == 0) {
        if (axis != 0 && axis != -1) normalizeAxis(axis, rank);
    } else {
        normalizeAxis(axis, rank);
    }
    c.setOutput(0, x.dtype, x.shape);
}

OpCost costSoftmax(const CostCtx& c) {
    const std::string& type = c.op().type;
    if (type == "Hardmax") return elementwiseCost(c, 2, 0);  // argmax then one-hot; gradient is zero
    // max, subtract, exp, sum, divide (LogSoftmax: log of the sum, subtract) per element.
    OpCost cost = elementwiseCost(c, 5, 0);
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = 4 * c.outNumel(0);  // y*(g - sum(g*y)) or g - exp(y)*sum(g)
        saveOutput(c, cost, 0);                  // _softmax_backward_data / _log_softmax_backward_data use the result
    }
    return cost;
}

}  // namespace

void registerActivationOps(std::vector<OpDef>& t) {
    for (const UnaryInfo& u : kUnary) t.push_back({u.type, inferUnary, costUnary});
    for (const char* p : {"Not", "IsNaN", "IsInf"}) t.push_back({p, inferPredicate, costPredicate});
    t.push_back({"PRelu", inferPRelu, costPRelu});
    t.push_back({"Clip", inferClip, costClip});
    for (const char* s : {"Softmax", "LogSoftmax", "Hardmax"}) t.push_back({s, inferSoftmax, costSoftmax});
}

}  // namespace ts::ops
