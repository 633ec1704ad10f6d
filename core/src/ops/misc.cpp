// Constants, casts, dropout, random generators, training losses and window functions
// (ONNX opset 11-18 semantics).
//
// Tensor-valued attributes (Constant's and ConstantOfShape's `value`) cannot be stored in an
// Attribute; importers turn a Constant node with a tensor into a graph Constant value directly,
// and pass a one-element tensor attribute as a number plus "<name>_dtype" (ONNX data type code).
// So here Constant handles value_int(s) / value_float(s) / value_string(s) and a scalar `value`.
//
// Dropout is costed as in training (TrainScope models training steps): active whenever its
// ratio is not known to be zero, keeping a one-byte mask per element for backward.
#include <cmath>
#include <limits>

#include "ops/registry.h"

namespace ts::ops {
namespace {

bool isIntegral(DType t) {
    switch (t) {
        case DType::Int64: case DType::Int32: case DType::Int16: case DType::Int8: case DType::UInt8:
        case DType::Bool: return true;
        default: return false;
    }
}

DType dtypeAttr(const Operation& op, const std::string& key, DType def) {
    if (!op.hasAttr(key)) return def;
    DType t = dtypeFromOnnx(static_cast<int>(op.attrInt(key, 1)));
    if (t == DType::Unknown)
        throw ShapeError(op.type + " has an unsupported data type code " + std::to_string(op.attrInt(key, 1)));
    return t;
}

// A numeric attribute that may hold an int64 or a double.
const Attribute* findAttr(const Operation& op, const std::string& key) {
    auto it = op.attrs.find(key);
    return it == op.attrs.end() ? nullptr : &it->second;
}

void inferConstant(InferCtx& c) {
    const Operation& op = c.op();
    if (findAttr(op, "value_int")) {
        c.setOutput(0, DType::Int64, {});
        c.out(0).intData = std::vector<Dim>{Dim(op.attrInt("value_int", 0))};
    } else if (findAttr(op, "value_ints")) {
        std::vector<int64_t> v = op.attrInts("value_ints");
        c.setOutput(0, DType::Int64, {Dim(static_cast<int64_t>(v.size()))});
        if (static_cast<int64_t>(v.size()) <= limits::kMaxKnownValueElements)
            c.out(0).intData = std::vector<Dim>(v.begin(), v.end());
    } else if (findAttr(op, "value_float")) {
        c.setOutput(0, DType::Float32, {});
        c.out(0).floatData = std::vector<double>{op.attrFloat("value_float", 0)};
    } else if (const auto* a = findAttr(op, "value_floats")) {
        const auto* v = std::get_if<std::vector<double>>(a);
        if (!v) throw ShapeError("attribute 'value_floats' of Constant has the wrong type");
        c.setOutput(0, DType::Float32, {Dim(static_cast<int64_t>(v->size()))});
        if (static_cast<int64_t>(v->size()) <= limits::kMaxKnownValueElements) c.out(0).floatData = *v;
    } else if (findAttr(op, "value_string")) {
        c.setOutput(0, DType::String, {});
    } else if (const auto* a = findAttr(op, "value_strings")) {
        const auto* v = std::get_if<std::vector<std::string>>(a);
        c.setOutput(0, DType::String, {Dim(static_cast<int64_t>(v ? v->size() : 0))});
    } else if (const auto* a = findAttr(op, "value")) {
        // A scalar tensor passed as a number (see the file comment).
        bool integral = std::holds_alternative<int64_t>(*a);
        DType dtype = dtypeAttr(op, "value_dtype", integral ? DType::Int64 : DType::Float32);
        c.setOutput(0, dtype, {});
        if (isIntegral(dtype)) c.out(0).intData = std::vector<Dim>{Dim(op.attrInt("value", 0))};
        else c.out(0).floatData = std::vector<double>{op.attrFloat("value", 0)};
    } else {
        throw ShapeError("Constant needs one of value, value_int(s), value_float(s), value_string(s)");
    }
}

void inferConstantOfShape(InferCtx& c) {
    c.expectInputs(1, 1);
    std::vector<Dim> shape = knownInts(c, 0, "shape");
    const Operation& op = c.op();
    const Attribute* value = findAttr(op, "value");
    bool integral = value && std::holds_alternative<int64_t>(*value);
    DType dtype = dtypeAttr(op, "value_dtype", integral ? DType::Int64 : DType::Float32);
    for (const Dim& d : shape)
        if (d.isConstant() && d.constant() < 0) throw ShapeError("ConstantOfShape shape " + shapeStr(shape) + " is negative");
    c.setOutput(0, dtype, shape);
    int64_t count = trackableCount(shape);
    if (count < 0) return;
    if (isIntegral(dtype)) c.out(0).intData = std::vector<Dim>(size_t(count), Dim(op.attrInt("value", 0)));
    else c.out(0).floatData = std::vector<double>(size_t(count), op.attrFloat("value", 0));
}

void castTo(InferCtx& c, DType to) {
    const Value& in = c.in(0);
    auto intData = in.intData;
    auto floatData = in.floatData;
    c.setOutput(0, to, in.shape);
    Value& out = c.out(0);
    if (isIntegral(to)) {
        if (intData) {
            out.intData = std::move(intData);
        } else if (floatData) {
            std::vector<Dim> ints;
            for (double f : *floatData) {
                if (!std::isfinite(f) || std::fabs(f) >= 9.0e18) return;
                ints.push_back(to == DType::Bool ? Dim(f != 0 ? 1 : 0) : Dim(static_cast<int64_t>(f)));  // truncation
            }
            out.intData = std::move(ints);
        }
        if (to == DType::Bool && out.intData)
            for (Dim& d : *out.intData)
                if (d.isConstant()) d = Dim(d.constant() != 0 ? 1 : 0);
    } else if (isFloating(to)) {
        if (floatData) {
            out.floatData = std::move(floatData);
        } else if (intData) {
            std::vector<double> fs;
            for (const Dim& d : *intData) {
                if (!d.isConstant()) return;
                fs.push_back(static_cast<double>(d.constant()));
            }
            out.floatData = std::move(fs);
        }
    }
}

void inferCast(InferCtx& c) {
    c.expectInputs(1, 1);
    if (!c.op().hasAttr("to")) throw ShapeError("Cast needs a 'to' data type");
    castTo(c, dtypeAttr(c.op(), "to", DType::Float32));
}

void inferCastLike(InferCtx& c) {
    c.expectInputs(2, 2);
    castTo(c, c.in(1).dtype);
}

void inferDropout(InferCtx& c) {
    c.expectInputs(1, 3);
    const Value& x = c.in(0);
    c.setOutput(0, x.dtype, x.shape);
    if (c.numOutputs() > 1 && c.op().outputs[1] >= 0) c.setOutput(1, DType::Bool, x.shape);
}

void inferRandom(InferCtx& c) {
    const Operation& op = c.op();
    std::vector<int64_t> dims = op.attrInts("shape");
    if (!op.hasAttr("shape")) throw ShapeError(op.type + " needs a shape");
    Shape shape;
    for (int64_t d : dims) {
        if (d < 0) throw ShapeError(op.type + " has a negative dimension");
        shape.push_back(Dim(d));
    }
    c.setOutput(0, dtypeAttr(op, "dtype", DType::Float32), std::move(shape));
}

void inferRandomLike(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& x = c.in(0);
    c.setOutput(0, dtypeAttr(c.op(), "dtype", x.dtype), x.shape);
}

void inferMultinomial(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& x = c.in(0);
    if (x.shape.size() != 2) throw ShapeError("Multinomial needs a [batch, classes] input, got " + shapeStr(x.shape));
    c.setOutput(0, dtypeAttr(c.op(), "dtype", DType::Int32), {x.shape[0], Dim(c.op().attrInt("sample_size", 1))});
}

void inferQuantize(InferCtx& c) {
    c.expectInputs(2, 3);
    const Value& x = c.in(0);
    DType dtype = c.hasInput(2) ? c.in(2).dtype : DType::UInt8;
    c.setOutput(0, dtype, x.shape);
}

void inferDequantize(InferCtx& c) {
    c.expectInputs(2, 3);
    const Value& x = c.in(0);
    c.setOutput(0, c.in(1).dtype, x.shape);
}

void inferDynamicQuantize(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& x = c.in(0);
    c.setOutput(0, DType::UInt8, x.shape);
    if (c.numOutputs() > 1) c.setOutput(1, DType::Float32, {});
    if (c.numOutputs() > 2) c.setOutput(2, DType::UInt8, {});
}

void inferNonMaxSuppression(InferCtx& c) {
    throw ShapeError(c.op().type + " selects a number of boxes that depends on tensor values (data-dependent shape), "
                     "which static analysis cannot size");
}

// SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss: per-element losses ([N, d1, ...]) or a scalar.
void inferLoss(InferCtx& c) {
    c.expectInputs(2, 3);
    const Value& scores = c.in(0);
    const Value& target = c.in(1);
    if (scores.shape.size() < 2 || target.shape.size() + 1 != scores.shape.size())
        throw ShapeError(c.op().type + " needs scores [N, C, ...] and targets [N, ...], got " + shapeStr(scores.shape) +
                         " and " + shapeStr(target.shape));
    Shape perElement{scores.shape[0]};
    perElement.insert(perElement.end(), scores.shape.begin() + 2, scores.shape.end());
    if (perElement != target.shape)
        throw ShapeError(c.op().type + " targets " + shapeStr(target.shape) + " do not match scores " + shapeStr(scores.shape));
    bool none = c.op().attrString("reduction", "mean") == "none";
    c.setOutput(0, scores.dtype, none ? perElement : Shape{});
    if (c.numOutputs() > 1) c.setOutput(1, scores.dtype, scores.shape);  // log_prob
}

void inferWindow(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& size = c.in(0);
    if (!size.intData || size.intData->size() != 1)
        throw ShapeError(c.op().type + " size is computed at run time (data-dependent shape)");
    const Dim& n = size.intData->front();
    if (n.isConstant() && n.constant() < 0) throw ShapeError(c.op().type + " size is negative");
    c.setOutput(0, dtypeAttr(c.op(), "output_datatype", DType::Float32), {n});
}

// ---- costs ----

// Softmax cross entropy: log-softmax (about 4 FLOPs per score) and a gather; backward is
// softmax minus one-hot (about 3 per score) from the saved log-probabilities. PyTorch's
// cross_entropy is log_softmax then nll_loss, so its backward first writes the log-probabilities'
// gradient (dense, the scores' size) and log_softmax's backward then writes the scores' gradient
// beside it: one scores-sized scratch at the loss's backward, which tops the memory of models with
// a large vocabulary (measured by tests/real_models/check_peak_memory.py).
OpCost softmaxCrossEntropyCost(const CostCtx& c) {
    OpCost cost;
    double scores = c.inNumel(0);
    cost.forwardFlops = 4 * scores + c.inNumel(1);
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = 3 * scores;
        bool logProbIsOutput = c.op().outputs.size() > 1 && c.outputValue(1) >= 0;
        if (c.op().attrInt("fused", 0) != 0) {
            // A fused kernel (flash-attn's, Liger's cross-entropy; attribute fused = 1): it keeps the scores
            // themselves and a log-sum-exp per row, and its backward writes the scores' gradient directly.
            saveInput(c, cost, 0);
            saveInput(c, cost, 1);
            return cost;
        }
        // The log-probabilities, in the scores' dtype (log_softmax's output; the loss follows its input, so
        // the output's dtype is theirs).
        if (logProbIsOutput) saveOutput(c, cost, 1);
        else cost.saved.push_back({-1, c.inBytes(0), true});
        saveInput(c, cost, 1);
        cost.backwardScratch = c.inBytes(0);
    }
    return cost;
}

OpCost nllLossCost(const CostCtx& c) {
    OpCost cost;
    cost.forwardFlops = c.inNumel(1);
    cost.bytesRead = c.inBytes(1) + c.inNumel(1) * (c.inNumel(0) > 0 ? c.inBytes(0) / c.inNumel(0) : 0);
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = c.inNumel(0);  // a gradient the size of the input, mostly zeros
        saveInput(c, cost, 1);
    }
    return cost;
}

OpCost castCost(const CostCtx& c) { return elementwiseCost(c, 1, 1); }

// The dropout ratio when known: input 1 (opset 12+) or the attribute (older opsets).
std::optional<double> dropoutRatio(const CostCtx& c) {
    if (c.hasInput(1)) {
        const Value& r = c.g.values[c.inputValue(1)];
        if (r.floatData && r.floatData->size() == 1) return (*r.floatData)[0];
        return std::nullopt;
    }
    return c.op().attrFloat("ratio", 0.5);
}

OpCost dropoutCost(const CostCtx& c) {
    std::optional<double> ratio = dropoutRatio(c);
    if (ratio && *ratio <= 0) return {};  // identity
    OpCost cost;
    double elems = c.inNumel(0);
    cost.forwardFlops = 2 * elems;  // random draw + masked scale
    cost.bytesRead = c.inBytes(0);
    cost.bytesWritten = c.allOutputBytes();
    if (c.anyInputNeedsGrad()) {
        cost.backwardFlops = elems;
        bool maskIsOutput = c.op().outputs.size() > 1 && c.outputValue(1) >= 0;
        if (maskIsOutput) saveOutput(c, cost, 1);
        else cost.saved.push_back({-1, elems * 1.0});  // bool mask, one byte per element
    }
    return cost;
}

OpCost generatorCost(const CostCtx& c) {
    OpCost cost;
    cost.forwardFlops = c.outNumel(0);
    cost.bytesWritten = c.allOutputBytes();
    return cost;
}

OpCost quantizeCost(const CostCtx& c) { return elementwiseCost(c, 2, 0); }

}  // namespace

void registerMiscOps(std::vector<OpDef>& t) {
    t.push_back({"Constant", inferConstant, zeroCost});
    t.push_back({"ConstantOfShape", inferConstantOfShape, generatorCost});
    t.push_back({"Cast", inferCast, castCost});
    t.push_back({"CastLike", inferCastLike, castCost});
    t.push_back({"Dropout", inferDropout, dropoutCost});
    t.push_back({"RandomNormal", inferRandom, generatorCost});
    t.push_back({"RandomUniform", inferRandom, generatorCost});
    t.push_back({"RandomNormalLike", inferRandomLike, generatorCost});
    t.push_back({"RandomUniformLike", inferRandomLike, generatorCost});
    t.push_back({"Bernoulli", inferRandomLike, generatorCost});
    t.push_back({"Multinomial", inferMultinomial, generatorCost});
    t.push_back({"QuantizeLinear", inferQuantize, quantizeCost});
    t.push_back({"DequantizeLinear", inferDequantize, quantizeCost});
    t.push_back({"DynamicQuantizeLinear", inferDynamicQuantize, quantizeCost});
    t.push_back({"NonMaxSuppression", inferNonMaxSuppression, zeroCost});
    t.push_back({"SoftmaxCrossEntropyLoss", inferLoss, softmaxCrossEntropyCost});
    t.push_back({"NegativeLogLikelihoodLoss", inferLoss, nllLossCost});
    t.push_back({"HannWindow", inferWindow, generatorCost});
    t.push_back({"HammingWindow", inferWindow, generatorCost});
    t.push_back({"BlackmanWindow", inferWindow, generatorCost});
}

}  // namespace ts::ops
