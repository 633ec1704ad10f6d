// Graph operations as ATen calls: the dispatch table, the operation context, dtype mapping, and the
// elementwise family (unary math, activations, broadcasting binary and variadic operators).
// Convolutions, normalizations, recurrences and losses are in op_lowering_nn.cpp; shapes, indexing,
// reductions, generators and the contents of leaf values in op_lowering_tensor.cpp.
#include <ATen/ATen.h>

#include <cmath>
#include <unordered_map>

#include "op_lowering_internal.h"
#include "op_lowering_roles.h"
#include "trainscope/core/errors.h"

namespace ts::torchexec {

// ---- the operation context ----

OpCtx::OpCtx(const Graph& graph, int opIndex, const std::vector<at::Tensor>& in, const LoweringOptions& opts)
    : g(graph), op(graph.ops.at(static_cast<size_t>(opIndex))), inputs(in), options(opts) {
    for (const at::Tensor& x : inputs)
        if (x.defined() && !x.is_cpu()) {
            device_ = x.device();
            break;
        }
}

void OpCtx::fail(const std::string& problem) const {
    throw ExecutionError(op.name + " (" + op.type + "): " + problem);
}

const at::Tensor& OpCtx::raw(size_t i) const {
    if (!has(i)) fail("input " + std::to_string(i) + " is missing");
    return inputs[i];
}

at::Tensor OpCtx::t(size_t i) const {
    const at::Tensor& x = raw(i);
    if (x.device() == device_) return x;
    // Host constants (index lists) reach the device without waiting for the work queued before them.
    return x.to(device_, /*non_blocking=*/x.is_cpu());
}

at::Tensor OpCtx::operand(size_t i) const {
    const at::Tensor& x = raw(i);
    return x.is_cpu() && x.dim() == 0 ? x : t(i);
}

std::vector<int64_t> OpCtx::ints(size_t i) const {
    const at::Tensor& x = raw(i);
    if (!x.is_cpu()) {
        // The graph knows the contents of shape arguments: reading them does not wait for the device.
        const Value& v = inputValue(i);
        if (v.intData && static_cast<int64_t>(v.intData->size()) == x.numel()) {
            std::vector<int64_t> r;
            for (const Dim& d : *v.intData) r.push_back(d.eval(options.batch, options.seq));
            return r;
        }
    }
    if (x.is_complex()) fail("input " + std::to_string(i) + " must hold integers, not complex numbers");
    at::Tensor c = x.to(at::kCPU).to(at::kLong).contiguous().reshape({-1});
    const int64_t* p = c.data_ptr<int64_t>();
    return std::vector<int64_t>(p, p + c.numel());
}

std::optional<double> OpCtx::knownScalar(size_t i) const {
    if (!has(i)) return std::nullopt;
    const Value& v = inputValue(i);
    if (v.floatData && v.floatData->size() == 1) return (*v.floatData)[0];
    if (v.intData && v.intData->size() == 1 && (*v.intData)[0].isConstant())
        return static_cast<double>((*v.intData)[0].constant());
    return std::nullopt;
}

double OpCtx::scalar(size_t i) const {
    const at::Tensor& x = raw(i);
    if (x.numel() != 1)
        fail("input " + std::to_string(i) + " must hold one value, it has " + std::to_string(x.numel()));
    if (!x.is_cpu())
        if (auto k = knownScalar(i)) return *k;
    return x.to(at::kCPU).to(at::kDouble).item<double>();
}

int64_t OpCtx::scalarInt(size_t i) const {
    std::vector<int64_t> v = ints(i);
    if (v.size() != 1) fail("input " + std::to_string(i) + " must hold one value, it has " + std::to_string(v.size()));
    return v[0];
}

std::vector<double> OpCtx::attrFloats(const std::string& key) const {
    auto it = op.attrs.find(key);
    if (it == op.attrs.end()) return {};
    if (auto* v = std::get_if<std::vector<double>>(&it->second)) return *v;
    if (auto* v = std::get_if<double>(&it->second)) return {*v};
    if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return std::vector<double>(v->begin(), v->end());
    if (auto* v = std::get_if<int64_t>(&it->second)) return {static_cast<double>(*v)};
    fail("attribute '" + key + "' must hold numbers");
}

std::vector<std::string> OpCtx::attrStrings(const std::string& key) const {
    auto it = op.attrs.find(key);
    if (it == op.attrs.end()) return {};
    if (auto* v = std::get_if<std::vector<std::string>>(&it->second)) return *v;
    if (auto* v = std::get_if<std::string>(&it->second)) return {*v};
    fail("attribute '" + key + "' must hold strings");
}

DType OpCtx::outDtype(size_t k) const {
    if (k >= op.outputs.size() || op.outputs[k] < 0) return DType::Unknown;
    return g.values[static_cast<size_t>(op.outputs[k])].dtype;
}

int64_t normalizeAxis(const OpCtx& c, int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank)
        c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

at::Tensor wrapNegativeIndices(const at::Tensor& idx, int64_t size) {
    at::Tensor i = idx.scalar_type() == at::kLong ? idx : idx.to(at::kLong);
    // Ids the executor generates are never negative: skip the extra kernel on an accelerator for those.
    if (i.is_cpu() && (i.numel() == 0 || !i.lt(0).any().item<bool>())) return i;
    return at::where(i.lt(0), i + size, i);
}

std::vector<int64_t> sizesOf(const at::Tensor& t) {
    return std::vector<int64_t>(t.sizes().begin(), t.sizes().end());
}

// ---- dtypes ----

at::ScalarType scalarTypeOf(DType t) {
    switch (t) {
        case DType::Float32:
            return at::kFloat;
        case DType::Float16:
            return at::kHalf;
        case DType::BFloat16:
            return at::kBFloat16;
        case DType::Float64:
            return at::kDouble;
        case DType::Float8E4M3:
            return at::kFloat8_e4m3fn;
        case DType::Float8E5M2:
            return at::kFloat8_e5m2;
        case DType::Int64:
            return at::kLong;
        case DType::Int32:
            return at::kInt;
        case DType::Int16:
            return at::kShort;
        case DType::Int8:
            return at::kChar;
        case DType::UInt8:
            return at::kByte;
        case DType::Bool:
            return at::kBool;
        case DType::Complex64:
            return at::kComplexFloat;
        case DType::String:
        case DType::Unknown:
            break;
    }
    throw ExecutionError(std::string("tensors of type ") + dtypeName(t) + " cannot be executed");
}

DType dtypeOf(at::ScalarType t) {
    switch (t) {
        case at::kFloat:
            return DType::Float32;
        case at::kHalf:
            return DType::Float16;
        case at::kBFloat16:
            return DType::BFloat16;
        case at::kDouble:
            return DType::Float64;
        case at::kFloat8_e4m3fn:
            return DType::Float8E4M3;
        case at::kFloat8_e5m2:
            return DType::Float8E5M2;
        case at::kLong:
            return DType::Int64;
        case at::kInt:
            return DType::Int32;
        case at::kShort:
            return DType::Int16;
        case at::kChar:
            return DType::Int8;
        case at::kByte:
            return DType::UInt8;
        case at::kBool:
            return DType::Bool;
        case at::kComplexFloat:
            return DType::Complex64;
        default:
            return DType::Unknown;
    }
}

namespace {

// ---- unary math and activations ----

using Unary = at::Tensor (*)(const OpCtx&, const at::Tensor&);

const std::unordered_map<std::string, Unary>& unaryTable() {
    static const std::unordered_map<std::string, Unary> t = {
        {"Relu", [](const OpCtx&, const at::Tensor& x) { return at::relu(x); }},
        {"LeakyRelu", [](const OpCtx& c, const at::Tensor& x) { return at::leaky_relu(x, c.attrFloat("alpha", 0.01)); }},
        {"ThresholdedRelu",
         [](const OpCtx& c, const at::Tensor& x) { return at::threshold(x, c.attrFloat("alpha", 1.0), 0); }},
        {"Elu", [](const OpCtx& c, const at::Tensor& x) { return at::elu(x, c.attrFloat("alpha", 1.0)); }},
        {"Selu",
         [](const OpCtx& c, const at::Tensor& x) {
             return at::elu(x, c.attrFloat("alpha", 1.67326319217681884765625), c.attrFloat("gamma", 1.05070102214813232421875));
         }},
        {"Celu", [](const OpCtx& c, const at::Tensor& x) { return at::celu(x, c.attrFloat("alpha", 1.0)); }},
        {"Sigmoid", [](const OpCtx&, const at::Tensor& x) { return at::sigmoid(x); }},
        {"HardSigmoid",
         [](const OpCtx& c, const at::Tensor& x) {
             const double alpha = c.attrFloat("alpha", 0.2), beta = c.attrFloat("beta", 0.5);
             if (std::fabs(alpha - 1.0 / 6) < 1e-7 && beta == 0.5) return at::hardsigmoid(x);
             return at::clamp(x * alpha + beta, 0, 1);
         }},
        {"HardSwish", [](const OpCtx&, const at::Tensor& x) { return at::hardswish(x); }},
        {"Tanh", [](const OpCtx&, const at::Tensor& x) { return at::tanh(x); }},
        {"Softplus", [](const OpCtx&, const at::Tensor& x) { return at::softplus(x); }},
        {"Softsign", [](const OpCtx&, const at::Tensor& x) { return x / (at::abs(x) + 1); }},
        {"Mish", [](const OpCtx&, const at::Tensor& x) { return at::mish(x); }},
        {"Gelu",
         [](const OpCtx& c, const at::Tensor& x) {
             std::string approx = c.attrString("approximate", "none");
             if (approx != "none" && approx != "tanh") c.fail("approximate must be \"none\" or \"tanh\"");
             return at::gelu(x, approx);
         }},
        {"Silu", [](const OpCtx&, const at::Tensor& x) { return at::silu(x); }},
        {"Erf", [](const OpCtx&, const at::Tensor& x) { return at::erf(x); }},
        {"Exp", [](const OpCtx&, const at::Tensor& x) { return at::exp(x); }},
        {"Log", [](const OpCtx&, const at::Tensor& x) { return at::log(x); }},
        {"Sqrt", [](const OpCtx&, const at::Tensor& x) { return at::sqrt(x); }},
        {"Reciprocal", [](const OpCtx&, const at::Tensor& x) { return at::reciprocal(x); }},
        {"Neg", [](const OpCtx&, const at::Tensor& x) { return at::neg(x); }},
        {"Abs", [](const OpCtx&, const at::Tensor& x) { return at::abs(x); }},
        {"Sin", [](const OpCtx&, const at::Tensor& x) { return at::sin(x); }},
        {"Cos", [](const OpCtx&, const at::Tensor& x) { return at::cos(x); }},
        {"Tan", [](const OpCtx&, const at::Tensor& x) { return at::tan(x); }},
        {"Asin", [](const OpCtx&, const at::Tensor& x) { return at::asin(x); }},
        {"Acos", [](const OpCtx&, const at::Tensor& x) { return at::acos(x); }},
        {"Atan", [](const OpCtx&, const at::Tensor& x) { return at::atan(x); }},
        {"Sinh", [](const OpCtx&, const at::Tensor& x) { return at::sinh(x); }},
        {"Cosh", [](const OpCtx&, const at::Tensor& x) { return at::cosh(x); }},
        {"Asinh", [](const OpCtx&, const at::Tensor& x) { return at::asinh(x); }},
        {"Acosh", [](const OpCtx&, const at::Tensor& x) { return at::acosh(x); }},
        {"Atanh", [](const OpCtx&, const at::Tensor& x) { return at::atanh(x); }},
        // Floor, Ceil and Round of integers are the integers themselves.
        {"Floor", [](const OpCtx&, const at::Tensor& x) { return x.is_floating_point() ? at::floor(x) : x; }},
        {"Ceil", [](const OpCtx&, const at::Tensor& x) { return x.is_floating_point() ? at::ceil(x) : x; }},
        {"Round", [](const OpCtx&, const at::Tensor& x) { return x.is_floating_point() ? at::round(x) : x; }},
        {"Sign", [](const OpCtx&, const at::Tensor& x) { return at::sign(x); }},
        {"Identity", [](const OpCtx&, const at::Tensor& x) { return x; }},
        // One process runs one tensor-parallel rank: its all-reduces have no one to sum with (the
        // predictor times them over the link).
        {"AllReduce", [](const OpCtx&, const at::Tensor& x) { return x; }},
        // Expert parallelism's exchange: the routes its experts compute stay on this process (runMoe).
        {"AllToAll", [](const OpCtx&, const at::Tensor& x) { return x; }},
        {"Not", [](const OpCtx&, const at::Tensor& x) { return at::logical_not(x); }},
        {"IsNaN", [](const OpCtx&, const at::Tensor& x) { return at::isnan(x); }},
        {"IsInf",
         [](const OpCtx& c, const at::Tensor& x) {
             const bool pos = c.attrInt("detect_positive", 1) != 0, neg = c.attrInt("detect_negative", 1) != 0;
             if (pos && neg) return at::isinf(x);
             if (pos) return at::isposinf(x);
             if (neg) return at::isneginf(x);
             return at::zeros_like(x, x.options().dtype(at::kBool));
         }},
    };
    return t;
}

Outputs runUnary(const OpCtx& c) {
    if (c.numInputs() != 1) c.fail("expects one input, got " + std::to_string(c.numInputs()));
    return {unaryTable().at(c.op.type)(c, c.t(0))};
}

Outputs runPRelu(const OpCtx& c) {
    at::Tensor x = c.t(0), slope = c.t(1);
    // PyTorch's prelu takes one slope per channel (or one in all); other broadcasts use the formula.
    const bool legacyChannel = c.opset() < 7 && slope.dim() == 1 && x.dim() >= 2 && slope.size(0) == x.size(1);
    bool channelShaped = slope.numel() == 1 || legacyChannel;
    if (!channelShaped && x.dim() >= 2 && slope.dim() == x.dim() - 1 && slope.size(0) == x.size(1)) {
        channelShaped = true;
        for (int64_t d = 1; d < slope.dim(); ++d) channelShaped &= slope.size(d) == 1;
    }
    if (channelShaped && x.dim() >= 1) return {at::prelu(x, slope.reshape({-1}))};
    return {at::where(x.lt(0), x * slope, x)};
}

Outputs runClip(const OpCtx& c) {
    at::Tensor x = c.t(0);
    std::optional<at::Scalar> lo, hi;
    if (c.opset() < 11) {
        if (c.hasAttr("min")) lo = c.attrFloat("min", 0);
        if (c.hasAttr("max")) hi = c.attrFloat("max", 0);
    } else {
        auto bound = [&](size_t i) -> std::optional<at::Scalar> {
            if (!c.has(i)) return std::nullopt;
            if (x.is_floating_point()) return c.scalar(i);
            return c.scalarInt(i);
        };
        lo = bound(1);
        hi = bound(2);
    }
    if (!lo && !hi) return {x};
    return {at::clamp(x, lo, hi)};
}

// Softmax, LogSoftmax, Hardmax: before opset 13 over the input coerced to 2-D at `axis`.
Outputs runSoftmax(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const bool legacy = c.opset() < 13;
    const int64_t rank = x.dim();
    if (rank == 0) {
        if (c.op.type == "Softmax") return {at::ones_like(x)};
        if (c.op.type == "LogSoftmax") return {at::zeros_like(x)};
        return {at::ones_like(x)};
    }
    int64_t axis = normalizeAxis(c, c.attrInt("axis", legacy ? 1 : -1), rank);
    at::Tensor v = x;
    if (legacy) {
        int64_t outer = 1;
        for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
        v = x.reshape({outer, -1});
        if (x.numel() == 0) v = x.reshape({outer, x.numel() / std::max<int64_t>(outer, 1)});
        axis = 1;
    }
    at::Tensor y;
    if (c.op.type == "Softmax") {
        y = at::softmax(v, axis);
    } else if (c.op.type == "LogSoftmax") {
        y = at::log_softmax(v, axis);
    } else {
        at::Tensor arg = at::argmax(v, axis, true);
        y = at::zeros_like(v).scatter(axis, arg, 1);
    }
    return {legacy ? y.reshape(x.sizes()) : y};
}

// ---- broadcasting binary and variadic operations ----

at::Tensor binary(const OpCtx& c, const std::string& type, const at::Tensor& a, const at::Tensor& b) {
    const bool integral = !a.is_floating_point() && !a.is_complex();
    if (type == "Add" || type == "Sum") return at::add(a, b);
    if (type == "Sub") return at::sub(a, b);
    if (type == "Mul") return at::mul(a, b);
    if (type == "Div") return integral ? at::div(a, b, "trunc") : at::div(a, b);
    if (type == "Max") return at::maximum(a, b);
    if (type == "Min") return at::minimum(a, b);
    if (type == "Mod") {
        const bool fmod = c.attrInt("fmod", 0) != 0;
        if (!fmod && !integral) c.fail("floating-point Mod needs fmod=1");
        return fmod ? at::fmod(a, b) : at::remainder(a, b);
    }
    if (type == "Equal") return at::eq(a, b);
    if (type == "Less") return at::lt(a, b);
    if (type == "Greater") return at::gt(a, b);
    if (type == "LessOrEqual") return at::le(a, b);
    if (type == "GreaterOrEqual") return at::ge(a, b);
    if (type == "And") return at::logical_and(a, b);
    if (type == "Or") return at::logical_or(a, b);
    if (type == "Xor") return at::logical_xor(a, b);
    if (type == "BitShift") {
        const std::string dir = c.attrString("direction", "");
        if (dir == "LEFT") return at::bitwise_left_shift(a, b);
        if (dir == "RIGHT") return at::bitwise_right_shift(a, b);
        c.fail("direction must be LEFT or RIGHT");
    }
    c.fail("no binary lowering");
}

Outputs runBinary(const OpCtx& c) {
    if (c.numInputs() != 2) c.fail("expects two inputs, got " + std::to_string(c.numInputs()));
    return {binary(c, c.op.type, c.operand(0), c.operand(1))};
}

// Pow keeps the base's type; a known scalar exponent runs as pow(Tensor, Scalar), as `x ** 2` does.
Outputs runPow(const OpCtx& c) {
    at::Tensor base = c.t(0);
    const Value& e = c.inputValue(1);
    at::Tensor y;
    if (e.shape.empty() && c.knownScalar(1) && base.is_floating_point())
        y = at::pow(base, *c.knownScalar(1));
    else
        y = at::pow(base, c.operand(1));
    return {y.scalar_type() == base.scalar_type() ? y : y.to(base.scalar_type())};
}

Outputs runVariadic(const OpCtx& c) {
    std::vector<at::Tensor> xs;
    for (size_t i = 0; i < c.numInputs(); ++i)
        if (c.has(i)) xs.push_back(c.operand(i));
    if (xs.empty()) c.fail("has no inputs");
    at::Tensor acc = xs[0];
    const std::string type = c.op.type == "Mean" ? "Sum" : c.op.type;
    for (size_t i = 1; i < xs.size(); ++i) acc = binary(c, type, acc, xs[i]);
    if (c.op.type == "Mean") acc = acc / static_cast<double>(xs.size());
    return {acc};
}

Outputs runWhere(const OpCtx& c) {
    at::Tensor cond = c.t(0);
    if (cond.scalar_type() != at::kBool) cond = cond.to(at::kBool);
    return {at::where(cond, c.t(1), c.t(2))};
}

}  // namespace

void addElementwiseLowerings(std::vector<LoweringEntry>& t) {
    for (const auto& [type, fn] : unaryTable()) t.push_back({type.c_str(), runUnary});
    t.push_back({"PRelu", runPRelu});
    t.push_back({"Clip", runClip});
    for (const char* type : {"Softmax", "LogSoftmax", "Hardmax"}) t.push_back({type, runSoftmax});
    for (const char* type : {"Add", "Sub", "Mul", "Div", "Mod", "Equal", "Less", "Greater", "LessOrEqual",
                             "GreaterOrEqual", "And", "Or", "Xor", "BitShift"})
        t.push_back({type, runBinary});
    t.push_back({"Pow", runPow});
    for (const char* type : {"Sum", "Mean", "Max", "Min"}) t.push_back({type, runVariadic});
    t.push_back({"Where", runWhere});
}

// ---- dispatch ----

namespace {

const std::unordered_map<std::string, LowerFn>& loweringTable() {
    static const std::unordered_map<std::string, LowerFn> table = [] {
        std::vector<LoweringEntry> entries;
        addElementwiseLowerings(entries);
        addNnLowerings(entries);
        addTransformerLowerings(entries);
        addRecurrentLowerings(entries);
        addResizeLowerings(entries);
        addTensorLowerings(entries);
        std::unordered_map<std::string, LowerFn> m;
        for (const LoweringEntry& e : entries) m.emplace(e.type, e.run);
        return m;
    }();
    return table;
}

std::string whyNotExecutable(const std::string& type) {
    return "the executor has no lowering for operator " + type;
}

// ONNX fixes integer and boolean output types; floating results keep ATen's type (autocast decides
// 16-bit precision) unless float64 is involved.
at::Tensor conformDtype(const at::Tensor& y, DType declared) {
    if (!y.defined() || declared == DType::String || declared == DType::Unknown) return y;
    const at::ScalarType want = scalarTypeOf(declared);
    const at::ScalarType have = y.scalar_type();
    if (have == want) return y;
    const bool wantFloat = isFloating(declared), haveFloat = at::isFloatingType(have);
    if (!wantFloat || !haveFloat || want == at::kDouble || have == at::kDouble) return y.to(want);
    return y;
}

}  // namespace

bool canExecute(const std::string& type) {
    return loweringTable().count(type) != 0;
}

std::vector<at::Tensor> runOperation(const Graph& g, int opIndex, const std::vector<at::Tensor>& inputs,
                                     const LoweringOptions& options) {
    const Operation& op = g.ops.at(static_cast<size_t>(opIndex));
    auto it = loweringTable().find(op.type);
    if (it == loweringTable().end()) throw ExecutionError(op.name + " (" + op.type + "): " + whyNotExecutable(op.type));
    OpCtx c(g, opIndex, inputs, options);
    Outputs out;
    try {
        out = it->second(c);
    } catch (const c10::Error&) {
        throw;  // the executor names the operation
    } catch (const ExecutionError&) {
        throw;
    } catch (const std::exception& e) {
        c.fail(e.what());  // an attribute of the wrong type, an out-of-range argument
    }
    for (size_t k = 0; k < out.size() && k < op.outputs.size(); ++k)
        if (op.outputs[k] >= 0) out[k] = conformDtype(out[k], c.outDtype(k));
    return out;
}

// ---- contents of the values no operation produces (roles from op_lowering_roles.cpp) ----

namespace {

at::Tensor filled(const Rule& r, const std::vector<int64_t>& shape, at::Generator& gen) {
    const at::TensorOptions f = at::TensorOptions().dtype(at::kFloat);
    switch (r.fill) {
        case Fill::Uniform:
            return at::empty(shape, f).uniform_(-r.a, r.a, gen);
        case Fill::Normal:
            return at::empty(shape, f).normal_(0, r.a, gen);
        case Fill::Ones:
            return at::ones(shape, f);
        case Fill::Zeros:
            return at::zeros(shape, f);
        case Fill::Value:
            return at::full(shape, r.a, f);
    }
    return at::zeros(shape, f);
}

// Integer positions 0, 1, 2... wrapped below the consumers' bound (position ids, say).
at::Tensor positions(const std::vector<int64_t>& shape, std::optional<int64_t> bound) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    at::Tensor p = at::arange(count, at::kLong);
    if (bound) p = at::remainder(p, *bound);
    return p.reshape(shape);
}

at::Tensor hostContents(const Graph& g, int valueIndex, int64_t n, int64_t s, at::Generator& gen, bool* stayOnHost) {
    const Value& v = g.values[static_cast<size_t>(valueIndex)];
    const std::vector<int64_t> shape = evalShape(v.shape, n, s);
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    const bool floating = isFloating(v.dtype);
    const bool integral = !floating && v.dtype != DType::Bool && v.dtype != DType::Complex64;
    switch (v.kind) {
        case ValueKind::Parameter: {
            if (!floating) return at::zeros(shape, at::kLong);
            Rule r = roleOf(g, valueIndex, shape, n, s).value_or(uniformFanIn(defaultFanIn(shape)));
            return filled(r, shape, gen);
        }
        case ValueKind::Buffer: {
            Rule r = roleOf(g, valueIndex, shape, n, s).value_or(Rule{Fill::Zeros});
            return filled(r.fill == Fill::Ones ? r : Rule{Fill::Zeros}, shape, gen);
        }
        case ValueKind::Constant: {
            if (v.intData) {
                if (static_cast<int64_t>(v.intData->size()) != count)
                    throw ExecutionError("holds " + std::to_string(v.intData->size()) + " values for " +
                                         std::to_string(count) + " elements");
                std::vector<int64_t> data;
                for (const Dim& d : *v.intData) data.push_back(d.eval(n, s));
                *stayOnHost = !floating && count <= limits::kMaxKnownValueElements;  // shape arguments
                return at::tensor(data, at::kLong).reshape(shape);
            }
            if (v.floatData) {
                if (static_cast<int64_t>(v.floatData->size()) != count)
                    throw ExecutionError("holds " + std::to_string(v.floatData->size()) + " values for " +
                                         std::to_string(count) + " elements");
                return at::tensor(*v.floatData, at::kDouble).reshape(shape);
            }
            if (v.dtype == DType::Bool) return at::ones(shape, at::kBool);
            if (integral) {
                if (auto len = sequenceLength(g, valueIndex, n, s)) return at::full(shape, *len, at::kLong);
                std::optional<int64_t> bound = indexBound(g, valueIndex, n, s);
                if (bound || !needsNonZero(g, valueIndex)) return positions(shape, bound);
                return at::ones(shape, at::kLong);
            }
            return needsNonZero(g, valueIndex) ? at::ones(shape, at::kFloat) : at::zeros(shape, at::kFloat);
        }
        case ValueKind::Input:
        case ValueKind::Activation: {
            if (v.dtype == DType::Bool || nameSuggestsMask(v.name)) return at::ones(shape, at::kFloat);
            if (floating || v.dtype == DType::Complex64) return at::randn(shape, gen, at::kFloat);
            if (auto len = sequenceLength(g, valueIndex, n, s)) return at::full(shape, *len, at::kLong);
            std::optional<int64_t> bound = indexBound(g, valueIndex, n, s);
            const int64_t low = !bound && needsNonZero(g, valueIndex) ? 1 : 0;
            return at::randint(low, bound.value_or(10), shape, gen, at::kLong);
        }
    }
    return at::zeros(shape, at::kFloat);
}

}  // namespace

at::Tensor initialValue(const Graph& g, int valueIndex, int64_t n, int64_t s, const at::Device& device,
                        at::Generator& gen) {
    const Value& v = g.values.at(static_cast<size_t>(valueIndex));
    try {
        const at::ScalarType type = scalarTypeOf(v.dtype);
        bool stayOnHost = false;
        at::Tensor t = hostContents(g, valueIndex, n, s, gen, &stayOnHost).to(type);
        if (!stayOnHost) t = t.to(device);
        if (v.kind == ValueKind::Parameter && t.is_floating_point()) t.requires_grad_(true);
        return t;
    } catch (const ExecutionError& e) {
        throw ExecutionError("value '" + v.name + "': " + e.what());
    }
}

}  // namespace ts::torchexec
