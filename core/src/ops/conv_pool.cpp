// Convolutions and pooling (ONNX opset 11-17): Conv, ConvTranspose, MaxPool, AveragePool, LpPool,
// GlobalAveragePool, GlobalMaxPool, GlobalLpPool.
#include <algorithm>

#include "ops/registry.h"

namespace ts::ops {
namespace {

std::string listStr(const std::vector<int64_t>& v) {
    std::string r = "[";
    for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
    return r + "]";
}

// Window geometry shared by Conv, ConvTranspose and the pools, validated against the spatial rank.
struct Window {
    std::vector<int64_t> kernel, strides, dilations, padBegin, padEnd;
    std::string autoPad;  // NOTSET, SAME_UPPER, SAME_LOWER, VALID
    int64_t volume() const {
        int64_t v = 1;
        for (int64_t k : kernel) v *= k;
        return v;
    }
};

// Reads strides/dilations/pads/auto_pad; `kernel` comes from kernel_shape or the weight.
Window readWindow(const Operation& op, std::vector<int64_t> kernel, size_t spatial) {
    Window w;
    w.kernel = std::move(kernel);
    if (w.kernel.size() != spatial)
        throw ShapeError(op.type + " kernel_shape " + listStr(w.kernel) + " has " + std::to_string(w.kernel.size()) +
                         " dimensions but the input has " + std::to_string(spatial) + " spatial dimensions");
    for (int64_t k : w.kernel)
        if (k <= 0) throw ShapeError(op.type + " kernel size must be positive, got " + listStr(w.kernel));
    w.strides = op.attrInts("strides", std::vector<int64_t>(spatial, 1));
    w.dilations = op.attrInts("dilations", std::vector<int64_t>(spatial, 1));
    if (w.strides.size() != spatial)
        throw ShapeError(op.type + " strides " + listStr(w.strides) + " do not match " + std::to_string(spatial) +
                         " spatial dimensions");
    if (w.dilations.size() != spatial)
        throw ShapeError(op.type + " dilations " + listStr(w.dilations) + " do not match " + std::to_string(spatial) +
                         " spatial dimensions");
    for (int64_t s : w.strides)
        if (s <= 0) throw ShapeError(op.type + " strides must be positive, got " + listStr(w.strides));
    for (int64_t d : w.dilations)
        if (d <= 0) throw ShapeError(op.type + " dilations must be positive, got " + listStr(w.dilations));
    for (size_t i = 0; i < spatial; ++i)
        if (w.kernel[i] > limits::kMaxDimValue || w.dilations[i] > limits::kMaxDimValue / w.kernel[i])
            throw ShapeError(op.type + " kernel or dilation is absurdly large");
    std::vector<int64_t> pads = op.attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial)
        throw ShapeError(op.type + " pads " + listStr(pads) + " must have " + std::to_string(2 * spatial) +
                         " values (begin and end for each spatial dimension)");
    for (int64_t p : pads)
        if (p < 0 || p > limits::kMaxDimValue)
            throw ShapeError(op.type + " pads must be non-negative, got " + listStr(pads));
    w.padBegin.assign(pads.begin(), pads.begin() + spatial);
    w.padEnd.assign(pads.begin() + spatial, pads.end());
    w.autoPad = op.attrString("auto_pad", "NOTSET");
    if (w.autoPad != "NOTSET" && w.autoPad != "SAME_UPPER" && w.autoPad != "SAME_LOWER" && w.autoPad != "VALID")
        throw ShapeError(op.type + " has unknown auto_pad '" + w.autoPad + "'");
    return w;
}

// Output size of one spatial dimension of a sliding window (Conv, pools).
Dim windowOutput(const Operation& op, const Dim& in, const Window& w, size_t i, bool ceilMode) {
    const int64_t stride = w.strides[i];
    const int64_t effKernel = w.dilations[i] * (w.kernel[i] - 1) + 1;
    auto divide = [&](const Dim& num, bool roundUp) -> Dim {
        std::optional<Dim> q = (roundUp ? num + Dim(stride - 1) : num).floorDiv(stride);
        if (!q)
            throw ShapeError(op.type + " cannot compute its output size: spatial size " + in.str() +
                             " depends on the batch size and is not divisible by stride " + std::to_string(stride));
        return *q;
    };
    if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER") return divide(in, true);  // ceil(in / stride)
    Dim span = w.autoPad == "VALID" ? in : in + Dim(w.padBegin[i] + w.padEnd[i]);
    Dim num = span - Dim(effKernel);
    if (num.isConstant() && num.constant() < 0)
        throw ShapeError(op.type + " window of size " + std::to_string(effKernel) +
                         " is larger than the padded input (" + span.str() + ") in spatial dimension " +
                         std::to_string(i));
    Dim out = divide(num, ceilMode) + Dim(1);
    // With ceil_mode the last window must start inside the input or the left padding (PyTorch, onnxruntime).
    if (ceilMode && out.isConstant() && in.isConstant() && w.autoPad == "NOTSET" &&
        (out.constant() - 1) * stride >= in.constant() + w.padBegin[i])
        out = out - Dim(1);
    return out;
}

std::vector<int64_t> constSpatial(const Shape& s, size_t from) {
    std::vector<int64_t> r;
    for (size_t i = from; i < s.size(); ++i) {
        if (!s[i].isConstant()) return {};
        r.push_back(s[i].constant());
    }
    return r;
}

void requireRank(const InferCtx& c, const Value& x, size_t minRank, const char* what) {
    if (x.shape.size() < minRank)
        throw ShapeError(c.op().type + " expects " + what + " of rank " + std::to_string(minRank) +
                         " or more (N, C, spatial...), got " + shapeStr(x.shape));
}

// ---- Conv ----

void inferConv(InferCtx& c) {
    c.expectInputs(2, 3);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    const Value& w = c.in(1);
    requireRank(c, x, 3, "input");
    if (w.shape.size() != x.shape.size())
        throw ShapeError("Conv weight " + shapeStr(w.shape) + " must have the input's rank " +
                         std::to_string(x.shape.size()) + " (input " + shapeStr(x.shape) + ")");
    const size_t spatial = x.shape.size() - 2;
    const int64_t group = op.attrInt("group", 1);
    if (group <= 0) throw ShapeError("Conv group must be positive, got " + std::to_string(group));
    if (w.shape[1] * Dim(group) != x.shape[1])
        throw ShapeError("Conv input has " + x.shape[1].str() + " channels but the weight " + shapeStr(w.shape) +
                         " with group " + std::to_string(group) + " expects " + (w.shape[1] * Dim(group)).str());
    const Dim& cout = w.shape[0];
    if (!cout.divExact(Dim(group)))
        throw ShapeError("Conv output channels " + cout.str() + " are not divisible by group " + std::to_string(group));
    std::vector<int64_t> wKernel = constSpatial(w.shape, 2);
    if (wKernel.size() != spatial) throw ShapeError("Conv weight " + shapeStr(w.shape) + " has a symbolic kernel size");
    std::vector<int64_t> kernel = op.attrInts("kernel_shape", wKernel);
    if (kernel != wKernel)
        throw ShapeError("Conv kernel_shape " + listStr(kernel) + " does not match the weight " + shapeStr(w.shape));
    Window win = readWindow(op, kernel, spatial);
    if (c.hasInput(2)) {
        const Value& b = c.in(2);
        if (b.shape.size() != 1 || b.shape[0] != cout)
            throw ShapeError("Conv bias " + shapeStr(b.shape) + " must have shape [" + cout.str() + "]");
    }
    Shape out{x.shape[0], cout};
    for (size_t i = 0; i < spatial; ++i) out.push_back(windowOutput(op, x.shape[2 + i], win, i, false));
    c.setOutput(0, x.dtype, std::move(out));
}

double kernelVolume(const std::vector<int64_t>& wShape) {
    double v = 1;
    for (size_t i = 2; i < wShape.size(); ++i) v *= static_cast<double>(wShape[i]);
    return v;
}

// Cost of a convolution-like operation (input 0 data, input 1 weight, optional input 2 bias) whose
// multiply-adds amount to `gemmFlops`: each gradient is one more pass of the same size.
OpCost convolutionCost(const CostCtx& c, double gemmFlops) {
    OpCost cost;
    const double outElems = c.outNumel(0);
    cost.forwardFlops = gemmFlops + (c.hasInput(2) ? outElems : 0.0);
    if (c.inNeedsGrad(0)) cost.backwardFlops += gemmFlops;  // data gradient (the transposed operation)
    if (c.inNeedsGrad(1)) cost.backwardFlops += gemmFlops;  // weight gradient: input x output-gradient correlation
    if (c.inNeedsGrad(2)) cost.backwardFlops += outElems;   // bias gradient: sum of the output gradient
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    // Autograd keeps the input for the weight gradient and the weight (a parameter, not counted) for the data gradient.
    if (c.inNeedsGrad(1)) saveInput(c, cost, 0);
    if (c.inNeedsGrad(0)) saveInput(c, cost, 1);
    return cost;
}

OpCost costConv(const CostCtx& c) {
    auto w = c.inShape(1);
    // Each output element is a dot product over (Cin/group) * kernel inputs: W.shape[1] * kernel volume.
    return convolutionCost(c, 2.0 * c.outNumel(0) * static_cast<double>(w[1]) * kernelVolume(w));
}

// ---- ConvTranspose ----

void inferConvTranspose(InferCtx& c) {
    c.expectInputs(2, 3);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    const Value& w = c.in(1);
    requireRank(c, x, 3, "input");
    if (w.shape.size() != x.shape.size())
        throw ShapeError("ConvTranspose weight " + shapeStr(w.shape) + " must have the input's rank " +
                         std::to_string(x.shape.size()));
    const size_t spatial = x.shape.size() - 2;
    const int64_t group = op.attrInt("group", 1);
    if (group <= 0) throw ShapeError("ConvTranspose group must be positive, got " + std::to_string(group));
    if (w.shape[0] != x.shape[1])
        throw ShapeError("ConvTranspose input has " + x.shape[1].str() + " channels but the weight " +
                         shapeStr(w.shape) + " expects " + w.shape[0].str());
    if (!x.shape[1].divExact(Dim(group)))
        throw ShapeError("ConvTranspose input channels " + x.shape[1].str() + " are not divisible by group " +
                         std::to_string(group));
    const Dim cout = w.shape[1] * Dim(group);
    std::vector<int64_t> wKernel = constSpatial(w.shape, 2);
    if (wKernel.size() != spatial)
        throw ShapeError("ConvTranspose weight " + shapeStr(w.shape) + " has a symbolic kernel size");
    std::vector<int64_t> kernel = op.attrInts("kernel_shape", wKernel);
    if (kernel != wKernel)
        throw ShapeError("ConvTranspose kernel_shape " + listStr(kernel) + " does not match the weight " +
                         shapeStr(w.shape));
    Window win = readWindow(op, kernel, spatial);
    std::vector<int64_t> outPad = op.attrInts("output_padding", std::vector<int64_t>(spatial, 0));
    if (outPad.size() != spatial)
        throw ShapeError("ConvTranspose output_padding " + listStr(outPad) + " does not match " +
                         std::to_string(spatial) + " spatial dimensions");
    for (size_t i = 0; i < spatial; ++i)
        if (outPad[i] < 0 || outPad[i] >= std::max(win.strides[i], win.dilations[i]))
            throw ShapeError("ConvTranspose output_padding " + listStr(outPad) +
                             " must be non-negative and smaller than the stride or dilation");
    if (c.hasInput(2)) {
        const Value& b = c.in(2);
        if (b.shape.size() != 1 || b.shape[0] != cout)
            throw ShapeError("ConvTranspose bias " + shapeStr(b.shape) + " must have shape [" + cout.str() + "]");
    }
    Shape out{x.shape[0], cout};
    std::vector<int64_t> outputShape = op.attrInts("output_shape");
    if (!outputShape.empty()) {
        // output_shape may list only the spatial sizes or the full shape.
        if (outputShape.size() == spatial + 2) outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
        if (outputShape.size() != spatial)
            throw ShapeError("ConvTranspose output_shape " + listStr(outputShape) + " does not match " +
                             std::to_string(spatial) + " spatial dimensions");
        for (int64_t v : outputShape) {
            if (v <= 0) throw ShapeError("ConvTranspose output_shape must be positive, got " + listStr(outputShape));
            out.push_back(Dim(v));
        }
    } else {
        for (size_t i = 0; i < spatial; ++i) {
            const Dim& in = x.shape[2 + i];
            Dim o =
                (in - Dim(1)) * Dim(win.strides[i]) + Dim(outPad[i]) + Dim(win.dilations[i] * (win.kernel[i] - 1) + 1);
            if (win.autoPad == "SAME_UPPER" || win.autoPad == "SAME_LOWER")
                o = in * Dim(win.strides[i]);
            else if (win.autoPad == "NOTSET")
                o = o - Dim(win.padBegin[i] + win.padEnd[i]);
            if (o.isConstant() && o.constant() <= 0)
                throw ShapeError("ConvTranspose output size " + o.str() + " in spatial dimension " + std::to_string(i) +
                                 " is not positive (pads too large)");
            out.push_back(o);
        }
    }
    c.setOutput(0, x.dtype, std::move(out));
}

OpCost costConvTranspose(const CostCtx& c) {
    auto w = c.inShape(1);
    // Every input element is scattered into (Cout/group) * kernel outputs: W.shape[1] * kernel volume.
    return convolutionCost(c, 2.0 * c.inNumel(0) * static_cast<double>(w[1]) * kernelVolume(w));
}

// ---- pooling ----

void inferPool(InferCtx& c) {
    c.expectInputs(1, 1);
    const Operation& op = c.op();
    const Value& x = c.in(0);
    requireRank(c, x, 3, "input");
    const size_t spatial = x.shape.size() - 2;
    if (!op.hasAttr("kernel_shape")) throw ShapeError(op.type + " requires the kernel_shape attribute");
    Window win = readWindow(op, op.attrInts("kernel_shape"), spatial);
    const int64_t ceilMode = op.attrInt("ceil_mode", 0);
    if (op.type == "MaxPool" && op.attrInt("storage_order", 0) != 0 && op.attrInt("storage_order", 0) != 1)
        throw ShapeError("MaxPool storage_order must be 0 or 1");
    if (op.type == "LpPool" && op.attrInt("p", 2) <= 0) throw ShapeError("LpPool p must be positive");
    if (op.type != "MaxPool" && c.numOutputs() > 1)
        throw ShapeError(op.type + " has one output, got " + std::to_string(c.numOutputs()));
    Shape out{x.shape[0], x.shape[1]};
    for (size_t i = 0; i < spatial; ++i) out.push_back(windowOutput(op, x.shape[2 + i], win, i, ceilMode != 0));
    c.setOutput(0, x.dtype, out);
    if (c.numOutputs() > 1) c.setOutput(1, DType::Int64, out);  // MaxPool Indices
}

double poolKernelVolume(const CostCtx& c) {
    double v = 1;
    for (int64_t k : c.op().attrInts("kernel_shape")) v *= static_cast<double>(k);
    return v;
}

OpCost costMaxPool(const CostCtx& c) {
    OpCost cost;
    const double outElems = c.outNumel(0);
    cost.forwardFlops = outElems * poolKernelVolume(c);  // one comparison per window element
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = outElems;  // scatter each output gradient to its argmax
        // PyTorch max_pool*_with_indices saves the input and the int64 argmax indices.
        saveInput(c, cost, 0);
        if (c.op().outputs.size() > 1)
            saveOutput(c, cost, 1);
        else
            cost.saved.push_back({-1, outElems * 8.0});
    }
    return cost;
}

OpCost costAveragePool(const CostCtx& c) {
    OpCost cost;
    const double outElems = c.outNumel(0);
    const double k = poolKernelVolume(c);
    cost.forwardFlops = outElems * (k + 1);  // window sum and one division
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = outElems * (k + 1);  // spread each scaled gradient over its window
        // avg_pool*d_backward takes `self` (aten derivatives.yaml), so autograd keeps the input.
        saveInput(c, cost, 0);
    }
    return cost;
}

OpCost costLpPool(const CostCtx& c) {
    OpCost cost;
    const double outElems = c.outNumel(0);
    const double k = poolKernelVolume(c);
    cost.forwardFlops = outElems * (3 * k + 1);  // |x|^p, accumulate per element; one root per output
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = outElems * 4 * k;
        saveInput(c, cost, 0);  // the gradient needs x and the pooled norm
        saveOutput(c, cost, 0);
    }
    return cost;
}

void inferGlobalPool(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& x = c.in(0);
    requireRank(c, x, 3, "input");
    Shape out{x.shape[0], x.shape[1]};
    out.resize(x.shape.size(), Dim(1));
    c.setOutput(0, x.dtype, std::move(out));
}

OpCost costGlobalAveragePool(const CostCtx& c) {
    OpCost cost;
    const double inElems = c.inNumel(0);
    cost.forwardFlops = inElems + c.outNumel(0);  // sum every element, one division per output
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    // PyTorch runs a 1x1 adaptive average pool as mean(), whose backward needs only the shape.
    if (c.inNeedsGrad(0)) cost.backwardFlops = inElems;
    return cost;
}

OpCost costGlobalMaxPool(const CostCtx& c) {
    OpCost cost;
    const double inElems = c.inNumel(0);
    cost.forwardFlops = inElems;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = inElems;  // amax backward compares x with the result to route the gradient
        saveInput(c, cost, 0);
        saveOutput(c, cost, 0);
    }
    return cost;
}

OpCost costGlobalLpPool(const CostCtx& c) {
    OpCost cost;
    const double inElems = c.inNumel(0);
    cost.forwardFlops = 3 * inElems;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = 4 * inElems;
        saveInput(c, cost, 0);
        saveOutput(c, cost, 0);
    }
    return cost;
}

}  // namespace

void registerConvPoolOps(std::vector<OpDef>& t) {
    t.push_back({"Conv", inferConv, costConv});
    t.push_back({"ConvTranspose", inferConvTranspose, costConvTranspose});
    t.push_back({"MaxPool", inferPool, costMaxPool});
    t.push_back({"AveragePool", inferPool, costAveragePool});
    t.push_back({"LpPool", inferPool, costLpPool});
    t.push_back({"GlobalAveragePool", inferGlobalPool, costGlobalAveragePool});
    t.push_back({"GlobalMaxPool", inferGlobalPool, costGlobalMaxPool});
    t.push_back({"GlobalLpPool", inferGlobalPool, costGlobalLpPool});
}

}  // namespace ts::ops
