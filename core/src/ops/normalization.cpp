// Normalizations (ONNX opset 11-17, GroupNormalization from 18/21): BatchNormalization, LayerNormalization,
// InstanceNormalization, GroupNormalization, LRN.
//
// Costs assume training: BatchNormalization computes batch statistics whatever its training_mode attribute says
// (an eval-mode export of a model still trains with batch statistics).
#include "ops/registry.h"

namespace ts::ops {
namespace {

// Forward FLOPs per element of a normalization with statistics: mean (1 add), variance (sub, square-accumulate:
// 3), normalize (sub, mul by the inverse std: 2), affine (mul, add: 2).
constexpr double kNormForwardPerElement = 8;
// Backward per element: recompute x-hat (2), the two reductions sum(dy) and sum(dy*x-hat) (1 + 2).
constexpr double kNormReductionsPerElement = 5;
// ... and the data gradient dx = k * (dy - mean(dy) - x-hat * mean(dy*x-hat)) (sub, sub, mul, mul: 4).
constexpr double kNormDataGradPerElement = 4;

void requireShape(const Operation& op, const Value& v, const char* what, const Shape& expected) {
    if (v.shape != expected)
        throw ShapeError(op.type + " " + what + " " + shapeStr(v.shape) + " must have shape " + shapeStr(expected));
}

// ---- BatchNormalization ----

void inferBatchNorm(InferCtx& c) {
    c.expectInputs(5, 5);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    if (x.shape.size() < 2)
        throw ShapeError("BatchNormalization expects an input of rank 2 or more (N, C, ...), got " + shapeStr(x.shape));
    const Shape channels{x.shape[1]};
    requireShape(op, c.in(1), "scale", channels);
    requireShape(op, c.in(2), "bias", channels);
    requireShape(op, c.in(3), "input_mean", channels);
    requireShape(op, c.in(4), "input_var", channels);
    if (c.numOutputs() > 5) throw ShapeError("BatchNormalization has at most 5 outputs");
    c.setOutput(0, x.dtype, x.shape);
    // Opset 14+: running_mean, running_var; opset 9-13 also saved_mean, saved_var. All per channel.
    for (size_t i = 1; i < c.numOutputs(); ++i) c.setOutput(i, c.in(3).dtype, channels);
}

OpCost costBatchNorm(const CostCtx& c) {
    OpCost cost;
    const double elems = c.inNumel(0);
    cost.forwardFlops = kNormForwardPerElement * elems;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.anyInputNeedsGrad()) {
        cost.backwardFlops = kNormReductionsPerElement * elems;  // also yields d(scale) and d(bias)
        if (c.inNeedsGrad(0)) cost.backwardFlops += kNormDataGradPerElement * elems;
        // native_batch_norm saves the input and the per-channel batch mean and inverse std.
        saveInput(c, cost, 0);
        cost.saved.push_back({-1, 2.0 * c.inNumel(1) * 4});
    }
    return cost;
}

// ---- LayerNormalization ----

void inferLayerNorm(InferCtx& c) {
    c.expectInputs(2, 3);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    if (x.shape.empty()) throw ShapeError("LayerNormalization does not accept a scalar input");
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int64_t axis = normalizeAxis(op.attrInt("axis", -1), rank);
    const Shape normalized(x.shape.begin() + axis, x.shape.end());
    for (size_t i = 1; i < 3; ++i) {
        if (!c.hasInput(i)) continue;
        const Value& p = c.in(i);
        bool ok = p.shape.size() <= normalized.size();
        if (ok) {
            try {
                ok = broadcastShapes(p.shape, normalized) == normalized;
            } catch (const ShapeError&) {
                ok = false;
            }
        }
        if (!ok)
            throw ShapeError(std::string("LayerNormalization ") + (i == 1 ? "scale " : "bias ") + shapeStr(p.shape) +
                             " does not match the normalized dimensions " + shapeStr(normalized) + " of input " +
                             shapeStr(x.shape));
    }
    c.setOutput(0, x.dtype, x.shape);
    Shape stats(x.shape.begin(), x.shape.begin() + axis);
    stats.resize(x.shape.size(), Dim(1));
    const DType statsType = op.attrInt("stash_type", 1) == 1 ? DType::Float32 : x.dtype;
    for (size_t i = 1; i < c.numOutputs() && i < 3; ++i) c.setOutput(i, statsType, stats);
    if (c.numOutputs() > 3) throw ShapeError("LayerNormalization has at most 3 outputs");
}

// Number of normalized groups (rows) of a LayerNormalization at the evaluated sizes.
double layerNormRows(const CostCtx& c) {
    auto x = c.inShape(0);
    const int64_t axis = normalizeAxis(c.op().attrInt("axis", -1), static_cast<int64_t>(x.size()));
    double rows = 1;
    for (int64_t i = 0; i < axis; ++i) rows *= static_cast<double>(x[i]);
    return rows;
}

// Shared by LayerNormalization and GroupNormalization: statistics over `rows` groups, per-element affine.
OpCost rowNormCost(const CostCtx& c, double rows) {
    OpCost cost;
    const double elems = c.inNumel(0);
    cost.forwardFlops = kNormForwardPerElement * elems;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0))  // per-row reductions of the output gradient, then the data gradient
        cost.backwardFlops += (kNormReductionsPerElement + 1 + kNormDataGradPerElement) * elems;  // +1: dy*scale
    if (c.inNeedsGrad(1)) cost.backwardFlops += 2 * elems;  // d(scale) = sum over rows of dy * x-hat
    if (c.inNeedsGrad(2)) cost.backwardFlops += elems;      // d(bias) = sum over rows of dy
    if (c.anyInputNeedsGrad()) {
        // native_layer_norm / native_group_norm save the input plus a float mean and inverse std per group.
        saveInput(c, cost, 0);
        if (c.op().outputs.size() >= 3) {
            saveOutput(c, cost, 1);
            saveOutput(c, cost, 2);
        } else {
            cost.saved.push_back({-1, 2.0 * rows * 4});
        }
    }
    return cost;
}

OpCost costLayerNorm(const CostCtx& c) {
    return rowNormCost(c, layerNormRows(c));
}

// ---- InstanceNormalization, GroupNormalization ----

void inferInstanceNorm(InferCtx& c) {
    c.expectInputs(3, 3);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    if (x.shape.size() < 3)
        throw ShapeError("InstanceNormalization expects an input of rank 3 or more (N, C, spatial...), got " +
                         shapeStr(x.shape));
    requireShape(op, c.in(1), "scale", {x.shape[1]});
    requireShape(op, c.in(2), "bias", {x.shape[1]});
    c.setOutput(0, x.dtype, x.shape);
}

OpCost costInstanceNorm(const CostCtx& c) {
    OpCost cost;
    const double elems = c.inNumel(0);
    auto x = c.inShape(0);
    cost.forwardFlops = kNormForwardPerElement * elems;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.anyInputNeedsGrad()) {
        cost.backwardFlops = kNormReductionsPerElement * elems;
        if (c.inNeedsGrad(0)) cost.backwardFlops += kNormDataGradPerElement * elems;
        // PyTorch runs instance norm as batch norm over [1, N*C, ...]: input plus N*C means and inverse stds.
        saveInput(c, cost, 0);
        cost.saved.push_back({-1, 2.0 * static_cast<double>(x[0]) * static_cast<double>(x[1]) * 4});
    }
    return cost;
}

void inferGroupNorm(InferCtx& c) {
    c.expectInputs(3, 3);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    if (x.shape.size() < 3)
        throw ShapeError("GroupNormalization expects an input of rank 3 or more (N, C, spatial...), got " +
                         shapeStr(x.shape));
    if (!op.hasAttr("num_groups")) throw ShapeError("GroupNormalization requires the num_groups attribute");
    const int64_t groups = op.attrInt("num_groups", 1);
    if (groups <= 0) throw ShapeError("GroupNormalization num_groups must be positive, got " + std::to_string(groups));
    if (!x.shape[1].divExact(Dim(groups)))
        throw ShapeError("GroupNormalization channels " + x.shape[1].str() + " are not divisible by num_groups " +
                         std::to_string(groups));
    // Opset 18 has one scale per group, opset 21 one per channel.
    for (size_t i = 1; i < 3; ++i) {
        const Shape& s = c.in(i).shape;
        if (s != Shape{Dim(groups)} && s != Shape{x.shape[1]})
            throw ShapeError(std::string("GroupNormalization ") + (i == 1 ? "scale " : "bias ") + shapeStr(s) +
                             " must have shape [" + std::to_string(groups) + "] or [" + x.shape[1].str() + "]");
    }
    c.setOutput(0, x.dtype, x.shape);
}

OpCost costGroupNorm(const CostCtx& c) {
    auto x = c.inShape(0);
    return rowNormCost(c, static_cast<double>(x[0]) * static_cast<double>(c.op().attrInt("num_groups", 1)));
}

// ---- LRN ----

void inferLrn(InferCtx& c) {
    c.expectInputs(1, 1);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    if (x.shape.size() < 3)
        throw ShapeError("LRN expects an input of rank 3 or more (N, C, spatial...), got " + shapeStr(x.shape));
    if (!op.hasAttr("size")) throw ShapeError("LRN requires the size attribute");
    if (op.attrInt("size", 1) <= 0) throw ShapeError("LRN size must be positive");
    c.setOutput(0, x.dtype, x.shape);
}

OpCost costLrn(const CostCtx& c) {
    OpCost cost;
    const double elems = c.inNumel(0);
    const double size = static_cast<double>(c.op().attrInt("size", 1));
    // Square-accumulate over `size` channels, then bias + alpha/size * sum, pow and a division.
    cost.forwardFlops = (2 * size + 4) * elems;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = (2 * size + 6) * elems;
        saveInput(c, cost, 0);  // the gradient needs x, the output and the window sums (recomputed)
        saveOutput(c, cost, 0);
    }
    return cost;
}

}  // namespace

void registerNormalizationOps(std::vector<OpDef>& t) {
    t.push_back({"BatchNormalization", inferBatchNorm, costBatchNorm});
    t.push_back({"LayerNormalization", inferLayerNorm, costLayerNorm});
    t.push_back({"InstanceNormalization", inferInstanceNorm, costInstanceNorm});
    t.push_back({"GroupNormalization", inferGroupNorm, costGroupNorm});
    t.push_back({"LRN", inferLrn, costLrn});
}

}  // namespace ts::ops
