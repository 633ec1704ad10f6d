// Neural-network layers as ATen calls: convolutions and pools (ONNX pads and auto_pad mapped onto
// PyTorch's symmetric padding, with an explicit pad where they differ), matrix products,
// normalizations, losses and dropout. Recurrent layers are in op_lowering_recurrent.cpp, Resize and
// GridSample in op_lowering_resize.cpp, the transformer operators in op_lowering_transformer.cpp.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "op_lowering_internal.h"
#include "op_lowering_math.h"
#include "trainscope/core/errors.h"

namespace ts::torchexec {
namespace {

// ---- windows (Conv, ConvTranspose, pools) ----

struct Window {
    std::vector<int64_t> kernel, strides, dilations, padBegin, padEnd;
    int64_t effective(size_t i) const { return dilations[i] * (kernel[i] - 1) + 1; }
};

// Strides, dilations and pads, with auto_pad SAME_* resolved for the input's spatial sizes
// (output ceil(in / stride); SAME_UPPER puts the odd padding at the end).
Window readWindow(const OpCtx& c, std::vector<int64_t> kernel, const at::Tensor& x) {
    const size_t spatial = static_cast<size_t>(x.dim()) - 2;
    Window w;
    w.kernel = std::move(kernel);
    w.strides = c.attrInts("strides", std::vector<int64_t>(spatial, 1));
    w.dilations = c.attrInts("dilations", std::vector<int64_t>(spatial, 1));
    std::vector<int64_t> pads = c.attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
    if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial ||
        pads.size() != 2 * spatial)
        c.fail("kernel, strides, dilations or pads do not match the input's " + std::to_string(spatial) +
               " spatial dimensions");
    w.padBegin.assign(pads.begin(), pads.begin() + static_cast<int64_t>(spatial));
    w.padEnd.assign(pads.begin() + static_cast<int64_t>(spatial), pads.end());
    const std::string autoPad = c.attrString("auto_pad", "NOTSET");
    if (autoPad == "VALID") {
        std::fill(w.padBegin.begin(), w.padBegin.end(), 0);
        std::fill(w.padEnd.begin(), w.padEnd.end(), 0);
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        for (size_t i = 0; i < spatial; ++i) {
            const int64_t in = x.size(static_cast<int64_t>(2 + i));
            const int64_t out = (in + w.strides[i] - 1) / w.strides[i];
            const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + w.effective(i) - in);
            const int64_t small = total / 2, large = total - total / 2;
            w.padBegin[i] = autoPad == "SAME_UPPER" ? small : large;
            w.padEnd[i] = autoPad == "SAME_UPPER" ? large : small;
        }
    } else if (autoPad != "NOTSET") {
        c.fail("unknown auto_pad '" + autoPad + "'");
    }
    return w;
}

bool symmetric(const Window& w) {
    return w.padBegin == w.padEnd;
}

// constant_pad_nd's list runs from the last dimension backwards.
at::Tensor padSpatial(const at::Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                      double value) {
    std::vector<int64_t> pad;
    for (size_t i = begin.size(); i-- > 0;) {
        pad.push_back(begin[i]);
        pad.push_back(end[i]);
    }
    bool any = false;
    for (int64_t p : pad) any |= p != 0;
    return any ? at::constant_pad_nd(x, pad, value) : x;
}

// ONNX's pooled size per spatial dimension (ceil_mode: the last window must start inside the
// input or its left padding).
std::vector<int64_t> pooledSizes(const at::Tensor& x, const Window& w, bool ceilMode) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < w.kernel.size(); ++i) {
        const int64_t in = x.size(static_cast<int64_t>(2 + i));
        const int64_t num = in + w.padBegin[i] + w.padEnd[i] - w.effective(i);
        int64_t o = (ceilMode ? (num + w.strides[i] - 1) / w.strides[i] : num / w.strides[i]) + 1;
        if (ceilMode && (o - 1) * w.strides[i] >= in + w.padBegin[i]) --o;
        out.push_back(o);
    }
    return out;
}

at::Tensor narrowTo(at::Tensor y, const std::vector<int64_t>& sizes) {
    for (size_t i = 0; i < sizes.size(); ++i) {
        const int64_t d = static_cast<int64_t>(2 + i);
        if (y.size(d) > sizes[i]) y = y.narrow(d, 0, sizes[i]);
    }
    return y;
}

std::vector<int64_t> spatialSizes(const at::Tensor& t, int64_t from) {
    return std::vector<int64_t>(t.sizes().begin() + from, t.sizes().end());
}

Outputs runConv(const OpCtx& c) {
    at::Tensor x = c.t(0), w = c.t(1);
    at::Tensor b = c.has(2) ? c.t(2) : at::Tensor();
    if (x.dim() < 3) c.fail("expects an input of rank 3 or more");
    Window win = readWindow(c, c.attrInts("kernel_shape", spatialSizes(w, 2)), x);
    std::vector<int64_t> common(win.kernel.size()), extraBegin(win.kernel.size()), extraEnd(win.kernel.size());
    for (size_t i = 0; i < common.size(); ++i) {
        common[i] = std::min(win.padBegin[i], win.padEnd[i]);
        extraBegin[i] = win.padBegin[i] - common[i];
        extraEnd[i] = win.padEnd[i] - common[i];
    }
    x = padSpatial(x, extraBegin, extraEnd, 0);  // PyTorch pads symmetrically: the rest explicitly
    return {at::convolution(x, w, b, win.strides, common, win.dilations, false, std::vector<int64_t>(common.size(), 0),
                            c.attrInt("group", 1))};
}

Outputs runConvTranspose(const OpCtx& c) {
    at::Tensor x = c.t(0), w = c.t(1);
    at::Tensor b = c.has(2) ? c.t(2) : at::Tensor();
    if (x.dim() < 3) c.fail("expects an input of rank 3 or more");
    const size_t spatial = static_cast<size_t>(x.dim()) - 2;
    const int64_t group = c.attrInt("group", 1);
    std::vector<int64_t> kernel = c.attrInts("kernel_shape", spatialSizes(w, 2));
    std::vector<int64_t> strides = c.attrInts("strides", std::vector<int64_t>(spatial, 1));
    std::vector<int64_t> dilations = c.attrInts("dilations", std::vector<int64_t>(spatial, 1));
    std::vector<int64_t> outPad = c.attrInts("output_padding", std::vector<int64_t>(spatial, 0));
    std::vector<int64_t> pads = c.attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
    std::vector<int64_t> outputShape = c.attrInts("output_shape");
    if (outputShape.size() == spatial + 2) outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
    if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
        outPad.size() != spatial || pads.size() != 2 * spatial ||
        (!outputShape.empty() && outputShape.size() != spatial))
        c.fail("attributes do not match the input's " + std::to_string(spatial) + " spatial dimensions");
    const std::string autoPad = c.attrString("auto_pad", "NOTSET");
    std::vector<int64_t> begin(spatial), end(spatial), full(spatial), out(spatial);
    for (size_t i = 0; i < spatial; ++i) {
        const int64_t in = x.size(static_cast<int64_t>(2 + i));
        full[i] = (in - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1;
        if (!outputShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            const int64_t target = outputShape.empty() ? in * strides[i] : outputShape[i];
            const int64_t total = full[i] + outPad[i] - target;
            // Floor division, as ONNX's reference: a negative total extends the output at one end.
            const int64_t small = total >= 0 ? total / 2 : -((1 - total) / 2), large = total - small;
            const bool upper = autoPad == "SAME_UPPER";
            begin[i] = upper ? small : large;
            end[i] = upper ? large : small;
        } else if (autoPad != "VALID") {
            begin[i] = pads[i];
            end[i] = pads[i + spatial];
        }
        out[i] = full[i] + outPad[i] - begin[i] - end[i];
        if (out[i] <= 0) c.fail("output size " + std::to_string(out[i]) + " is not positive");
    }
    bool native = begin == end;
    for (size_t i = 0; i < spatial; ++i) native &= begin[i] >= 0 && outPad[i] < std::max(strides[i], dilations[i]);
    if (native) return {at::convolution(x, w, b, strides, begin, dilations, true, outPad, group)};
    // Asymmetric or negative padding: the full transposed convolution, cropped (or zero-extended).
    at::Tensor y = at::convolution(x, w, {}, strides, std::vector<int64_t>(spatial, 0), dilations, true,
                                   std::vector<int64_t>(spatial, 0), group);
    std::vector<int64_t> lo(spatial), hi(spatial);
    for (size_t i = 0; i < spatial; ++i) {
        lo[i] = std::max<int64_t>(0, -begin[i]);
        hi[i] = std::max<int64_t>(0, begin[i] + out[i] - full[i]);
    }
    y = padSpatial(y, lo, hi, 0);
    for (size_t i = 0; i < spatial; ++i) y = y.narrow(static_cast<int64_t>(2 + i), begin[i] + lo[i], out[i]);
    if (b.defined()) {
        std::vector<int64_t> shape(static_cast<size_t>(y.dim()), 1);
        shape[1] = -1;
        y = y + b.reshape(shape);
    }
    return {y};
}

// ---- pools ----

Window poolWindow(const OpCtx& c, const at::Tensor& x) {
    if (x.dim() < 3 || x.dim() > 5) c.fail("supports inputs of rank 3 to 5 (1 to 3 spatial dimensions)");
    if (!c.hasAttr("kernel_shape")) c.fail("requires the kernel_shape attribute");
    return readWindow(c, c.attrInts("kernel_shape"), x);
}

// PyTorch's pools take symmetric padding of at most half the (effective) window.
bool nativePadding(const Window& w) {
    if (!symmetric(w)) return false;
    for (size_t i = 0; i < w.kernel.size(); ++i)
        if (w.padBegin[i] > w.effective(i) / 2 || w.padBegin[i] > w.kernel[i] / 2) return false;
    return true;
}

// ONNX MaxPool indices count over the whole tensor ((n*C + c)*H*W + h*W + w, or column-major
// within the plane with storage_order=1); PyTorch's count within the (possibly pre-padded) plane.
at::Tensor onnxPoolIndices(const at::Tensor& idx, const std::vector<int64_t>& paddedSizes,
                           const std::vector<int64_t>& padBegin, const std::vector<int64_t>& sizes, bool columnMajor) {
    at::Tensor rem = idx;
    std::vector<at::Tensor> coord(sizes.size());
    for (size_t i = sizes.size(); i-- > 0;) {
        coord[i] = at::remainder(rem, paddedSizes[i]) - padBegin[i];
        rem = at::div(rem, paddedSizes[i], "floor");
    }
    at::Tensor flat = at::zeros_like(idx);
    if (!columnMajor) {
        for (size_t i = 0; i < sizes.size(); ++i) flat = flat * sizes[i] + coord[i];
    } else {
        for (size_t i = sizes.size(); i-- > 0;) flat = flat * sizes[i] + coord[i];
    }
    int64_t plane = 1;
    for (int64_t s : sizes) plane *= s;
    const int64_t planes = idx.size(0) * idx.size(1);
    std::vector<int64_t> shape(static_cast<size_t>(idx.dim()), 1);
    shape[0] = idx.size(0);
    shape[1] = idx.size(1);
    at::Tensor offset = at::arange(planes, idx.options()).reshape(shape) * plane;
    return flat + offset;
}

Outputs runMaxPool(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const at::ScalarType type = x.scalar_type();
    if (!x.is_floating_point()) x = x.to(at::kFloat);  // integer pools compare exactly in float
    Window w = poolWindow(c, x);
    const bool ceilMode = c.attrInt("ceil_mode", 0) != 0;
    const std::vector<int64_t> expected = pooledSizes(x, w, ceilMode);
    const std::vector<int64_t> inSizes = spatialSizes(x, 2);
    std::vector<int64_t> pad = w.padBegin, prePadBegin(w.kernel.size(), 0);
    if (!nativePadding(w)) {
        x = padSpatial(x, w.padBegin, w.padEnd, -std::numeric_limits<double>::infinity());
        prePadBegin = w.padBegin;
        std::fill(pad.begin(), pad.end(), 0);
    }
    const bool wantIndices = c.wantsOutput(1);
    const int64_t spatial = x.dim() - 2;
    at::Tensor y, idx;
    if (spatial == 1) {
        at::Tensor x2 = x.unsqueeze(2);
        auto r = at::max_pool2d_with_indices(x2, {1, w.kernel[0]}, {1, w.strides[0]}, {0, pad[0]}, {1, w.dilations[0]},
                                             ceilMode);
        y = std::get<0>(r).squeeze(2);
        idx = std::get<1>(r).squeeze(2);
    } else if (!wantIndices) {
        y = spatial == 2 ? at::max_pool2d(x, w.kernel, w.strides, pad, w.dilations, ceilMode)
                         : at::max_pool3d(x, w.kernel, w.strides, pad, w.dilations, ceilMode);
    } else {
        auto r = spatial == 2 ? at::max_pool2d_with_indices(x, w.kernel, w.strides, pad, w.dilations, ceilMode)
                              : at::max_pool3d_with_indices(x, w.kernel, w.strides, pad, w.dilations, ceilMode);
        y = std::get<0>(r);
        idx = std::get<1>(r);
    }
    y = narrowTo(y, expected);
    if (y.scalar_type() != type) y = y.to(type);
    if (!wantIndices) return {y};
    idx = narrowTo(idx, expected);
    return {y, onnxPoolIndices(idx, spatialSizes(x, 2), prePadBegin, inSizes, c.attrInt("storage_order", 0) == 1)};
}

at::Tensor avgPool(const at::Tensor& x, const Window& w, const std::vector<int64_t>& pad, bool ceilMode,
                   bool countIncludePad) {
    switch (x.dim()) {
        case 3:
            return at::avg_pool1d(x, w.kernel, w.strides, pad, ceilMode, countIncludePad);
        case 4:
            return at::avg_pool2d(x, w.kernel, w.strides, pad, ceilMode, countIncludePad);
        default:
            return at::avg_pool3d(x, w.kernel, w.strides, pad, ceilMode, countIncludePad);
    }
}

Outputs runAveragePool(const OpCtx& c) {
    at::Tensor x = c.t(0);
    Window w = poolWindow(c, x);
    for (int64_t d : w.dilations)
        if (d != 1) c.fail("dilated average pooling has no PyTorch kernel");
    const bool ceilMode = c.attrInt("ceil_mode", 0) != 0;
    const bool countPad = c.attrInt("count_include_pad", 0) != 0;
    const std::vector<int64_t> expected = pooledSizes(x, w, ceilMode);
    if (nativePadding(w)) return {narrowTo(avgPool(x, w, w.padBegin, ceilMode, countPad), expected)};
    const std::vector<int64_t> zero(w.kernel.size(), 0);
    at::Tensor sum = avgPool(padSpatial(x, w.padBegin, w.padEnd, 0), w, zero, ceilMode, true);
    if (countPad) return {narrowTo(sum, expected)};
    // Divide by the number of real (unpadded) elements in each window.
    std::vector<int64_t> maskShape{1, 1};
    for (int64_t s : spatialSizes(x, 2)) maskShape.push_back(s);
    at::Tensor mask = padSpatial(at::ones(maskShape, x.options()), w.padBegin, w.padEnd, 0);
    return {narrowTo(sum / avgPool(mask, w, zero, ceilMode, true), expected)};
}

Outputs runLpPool(const OpCtx& c) {
    at::Tensor x = c.t(0);
    Window w = poolWindow(c, x);
    for (int64_t d : w.dilations)
        if (d != 1) c.fail("dilated Lp pooling has no PyTorch kernel");
    const double p = static_cast<double>(c.attrInt("p", 2));
    const bool ceilMode = c.attrInt("ceil_mode", 0) != 0;
    double volume = 1;
    for (int64_t k : w.kernel) volume *= static_cast<double>(k);
    at::Tensor powered = padSpatial(at::pow(at::abs(x), p), w.padBegin, w.padEnd, 0);
    at::Tensor sum = avgPool(powered, w, std::vector<int64_t>(w.kernel.size(), 0), ceilMode, true) * volume;
    return {narrowTo(at::pow(sum, 1.0 / p), pooledSizes(x, w, ceilMode))};
}

std::vector<int64_t> spatialDims(const at::Tensor& x) {
    std::vector<int64_t> d;
    for (int64_t i = 2; i < x.dim(); ++i) d.push_back(i);
    return d;
}

Outputs runGlobalPool(const OpCtx& c) {
    at::Tensor x = c.t(0);
    if (x.dim() < 3) c.fail("expects an input of rank 3 or more");
    if (c.op.type == "GlobalAveragePool") return {x.mean(spatialDims(x), true)};
    if (c.op.type == "GlobalMaxPool") return {at::amax(x, spatialDims(x), true)};
    const double p = static_cast<double>(c.attrInt("p", 2));
    return {at::linalg_vector_norm(x, p, spatialDims(x), true)};
}

// ---- matrix products ----

Outputs runMatMul(const OpCtx& c) {
    return {at::matmul(c.t(0), c.t(1))};
}

Outputs runGemm(const OpCtx& c) {
    at::Tensor a = c.t(0), b = c.t(1);
    const double alpha = c.attrFloat("alpha", 1.0), beta = c.attrFloat("beta", 1.0);
    const bool transA = c.attrInt("transA", 0) != 0, transB = c.attrInt("transB", 0) != 0;
    at::Tensor bias = c.has(2) ? c.t(2) : at::Tensor();
    // nn.Linear's form runs as at::linear, exactly as PyTorch.
    if (!transA && transB && alpha == 1 && beta == 1 &&
        (!bias.defined() || (bias.dim() == 1 && bias.size(0) == b.size(0))))
        return {at::linear(a, b, bias)};
    if (transA) a = a.t();
    if (transB) b = b.t();
    if (bias.defined() && beta != 0) return {at::addmm(bias, a, b, beta, alpha)};
    at::Tensor y = at::mm(a, b);
    return {alpha == 1 ? y : y * alpha};
}

Outputs runEinsum(const OpCtx& c) {
    std::vector<at::Tensor> xs;
    for (size_t i = 0; i < c.numInputs(); ++i) xs.push_back(c.t(i));
    return {at::einsum(c.attrString("equation", ""), xs)};
}

// ---- normalizations ----

Outputs runBatchNorm(const OpCtx& c) {
    at::Tensor x = c.t(0), scale = c.t(1), bias = c.t(2), mean = c.t(3), var = c.t(4);
    const double eps = c.attrFloat("epsilon", 1e-5), momentum = c.attrFloat("momentum", 0.9);
    const bool training = c.options.training || c.attrInt("training_mode", 0) != 0;
    Outputs out(1);
    if (c.numOutputs() > 1) {
        if (training) {
            // ONNX's running statistics (population variance, momentum on the old value).
            std::vector<int64_t> dims{0};
            for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
            at::Tensor batchMean = x.mean(dims), batchVar = x.var(dims, /*unbiased=*/false);
            out.push_back(mean * momentum + batchMean * (1 - momentum));
            out.push_back(var * momentum + batchVar * (1 - momentum));
            out.push_back(batchMean);
            out.push_back(batchVar);
        } else {
            out.push_back(mean);
            out.push_back(var);
        }
    }
    // PyTorch's momentum weighs the new batch; the running buffers are updated in place.
    out[0] = at::batch_norm(x, scale, bias, mean, var, training, 1 - momentum, eps, true);
    return out;
}

Outputs runLayerNorm(const OpCtx& c) {
    at::Tensor x = c.t(0);
    if (x.dim() == 0) c.fail("does not accept a scalar input");
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", -1), x.dim());
    const std::vector<int64_t> normalized(x.sizes().begin() + axis, x.sizes().end());
    at::Tensor scale = c.t(1);
    at::Tensor bias = c.has(2) ? c.t(2) : at::Tensor();
    if (sizesOf(scale) != normalized) scale = scale.expand(normalized);
    if (bias.defined() && sizesOf(bias) != normalized) bias = bias.expand(normalized);
    const double eps = c.attrFloat("epsilon", 1e-5);
    if (!c.wantsOutput(1) && !c.wantsOutput(2)) return {at::layer_norm(x, normalized, scale, bias, eps)};
    auto [y, mean, rstd] = at::native_layer_norm(x, normalized, scale, bias, eps);
    std::vector<int64_t> stats(x.sizes().begin(), x.sizes().begin() + axis);
    stats.resize(static_cast<size_t>(x.dim()), 1);
    return {y, mean.reshape(stats), rstd.reshape(stats)};
}

Outputs runInstanceNorm(const OpCtx& c) {
    at::Tensor x = c.t(0);
    return {at::instance_norm(x, c.t(1), c.t(2), {}, {}, true, 0.1, c.attrFloat("epsilon", 1e-5), true)};
}

Outputs runGroupNorm(const OpCtx& c) {
    at::Tensor x = c.t(0), scale = c.t(1), bias = c.t(2);
    const int64_t groups = c.attrInt("num_groups", 0);
    if (groups <= 0 || x.dim() < 2 || x.size(1) % groups != 0) c.fail("num_groups must divide the channels");
    const int64_t channels = x.size(1);
    // Opset 18 has one scale per group: PyTorch's group_norm takes one per channel.
    if (scale.numel() == groups && groups != channels) scale = scale.repeat_interleave(channels / groups);
    if (bias.numel() == groups && groups != channels) bias = bias.repeat_interleave(channels / groups);
    return {at::group_norm(x, groups, scale, bias, c.attrFloat("epsilon", 1e-5), true)};
}

// y = x / (bias + alpha/size * sum of squares over `size` neighbouring channels)^beta.
Outputs runLrn(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t size = c.attrInt("size", 0);
    if (size <= 0 || x.dim() < 3) c.fail("needs a positive size and an input of rank 3 or more");
    const double alpha = c.attrFloat("alpha", 1e-4), beta = c.attrFloat("beta", 0.75), bias = c.attrFloat("bias", 1.0);
    const int64_t n = x.size(0), channels = x.size(1);
    at::Tensor sq = (x * x).reshape({n, 1, channels, -1});
    sq = at::constant_pad_nd(sq, {0, 0, (size - 1) / 2, size / 2}, 0);
    at::Tensor avg = at::avg_pool2d(sq, {size, 1}, {1, 1}).reshape(x.sizes());
    return {x / at::pow(avg * alpha + bias, beta)};
}

// ---- losses and dropout ----

int64_t reductionOf(const OpCtx& c) {
    const std::string reduction = c.attrString("reduction", "mean");
    if (reduction == "none") return at::Reduction::None;
    if (reduction == "sum") return at::Reduction::Sum;
    if (reduction == "mean") return at::Reduction::Mean;
    c.fail("reduction must be none, sum or mean");
}

Outputs runLoss(const OpCtx& c) {
    at::Tensor scores = c.t(0);
    at::Tensor labels = c.t(1).to(at::kLong);
    std::optional<at::Tensor> weight;
    if (c.has(2)) weight = c.t(2);
    const int64_t ignore = c.attrInt("ignore_index", -100);
    if (c.op.type == "NegativeLogLikelihoodLoss")
        return {at::nll_loss_nd(scores, labels, weight, reductionOf(c), ignore)};
    at::Tensor logProb = at::log_softmax(scores, 1);  // what F.cross_entropy runs
    return {at::nll_loss_nd(logProb, labels, weight, reductionOf(c), ignore), logProb};
}

Outputs runDropout(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const double ratio = c.has(1) ? c.scalar(1) : c.attrFloat("ratio", 0.5);
    const bool training = c.options.training || (c.has(2) && c.scalar(2) != 0);
    if (ratio < 0 || ratio >= 1) c.fail("ratio must be in [0, 1)");
    if (!training || ratio == 0) {
        if (!c.wantsOutput(1)) return {x};
        return {x, at::ones_like(x, x.options().dtype(at::kBool))};
    }
    if (!c.wantsOutput(1)) return {at::dropout(x, ratio, true)};
    auto [y, mask] = at::native_dropout(x, ratio, true);
    return {y, mask};
}

}  // namespace

void addNnLowerings(std::vector<LoweringEntry>& t) {
    t.push_back({"Conv", runConv});
    t.push_back({"ConvTranspose", runConvTranspose});
    t.push_back({"MaxPool", runMaxPool});
    t.push_back({"AveragePool", runAveragePool});
    t.push_back({"LpPool", runLpPool});
    for (const char* type : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) t.push_back({type, runGlobalPool});
    t.push_back({"MatMul", runMatMul});
    t.push_back({"Gemm", runGemm});
    t.push_back({"Einsum", runEinsum});
    t.push_back({"BatchNormalization", runBatchNorm});
    t.push_back({"LayerNormalization", runLayerNorm});
    t.push_back({"InstanceNormalization", runInstanceNorm});
    t.push_back({"GroupNormalization", runGroupNorm});
    t.push_back({"LRN", runLrn});
    for (const char* type : {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}) t.push_back({type, runLoss});
    t.push_back({"Dropout", runDropout});
}

}  // namespace ts::torchexec
