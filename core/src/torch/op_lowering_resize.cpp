// ONNX Resize and Upsample (every coordinate mode and rounding, as gathers and weighted sums, or PyTorch's own
// upsampling kernels where they compute the same) and GridSample as ATen calls.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "op_lowering_internal.h"
#include "op_lowering_math.h"
#include "trainscope/core/errors.h"

namespace ts::torchexec {
namespace {

// ---- Resize / Upsample ----

struct ResizeAxis : ResizeGeometry {
    int64_t axis = 0;
};

// One axis of ONNX Resize as gathers and weighted sums (exact for every coordinate and rounding mode).
at::Tensor resizeAxis(const OpCtx& c, const at::Tensor& x, const ResizeAxis& a, const std::string& mode,
                      const std::string& coordinates) {
    ResizeOptions o;
    o.mode = mode;
    o.coordinates = coordinates;
    o.nearestMode = c.attrString("nearest_mode", c.opset() >= 11 ? "round_prefer_floor" : "floor");
    o.cubicA = c.attrFloat("cubic_coeff_a", -0.75);
    o.excludeOutside = c.attrInt("exclude_outside", 0) != 0;
    const ResizeTaps t = resizeTaps(a, o);
    const size_t taps = t.index.size();
    const auto& index = t.index;
    const auto& weight = t.weight;
    std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
    shape[static_cast<size_t>(a.axis)] = a.out;
    auto onDevice = [&](const at::Tensor& t) { return t.to(x.device()); };
    at::Tensor y;
    for (size_t k = 0; k < taps; ++k) {
        at::Tensor idx = onDevice(at::tensor(index[k], at::kLong));
        at::Tensor picked = at::index_select(x, a.axis, idx);
        if (taps == 1) {
            y = picked;
            break;
        }
        at::Tensor wk = onDevice(at::tensor(weight[k], at::kDouble).to(x.scalar_type()).reshape(shape));
        y = k == 0 ? picked * wk : y + picked * wk;
    }
    if (coordinates == "tf_crop_and_resize") {
        at::Tensor m = onDevice(at::tensor(t.outside, at::kByte).to(at::kBool).reshape(shape));
        y = at::where(m, at::full({}, c.attrFloat("extrapolation_value", 0.0), y.options()), y);
    }
    return y;
}

std::vector<double> floatsOf(const OpCtx& c, size_t i) {
    const at::Tensor& x = c.raw(i);
    if (!x.is_cpu()) {
        const Value& v = c.inputValue(i);
        if (v.floatData && static_cast<int64_t>(v.floatData->size()) == x.numel()) return *v.floatData;
    }
    at::Tensor d = x.to(at::kCPU).to(at::kDouble).contiguous().reshape({-1});
    return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

// PyTorch's own upsampling kernels where they compute exactly ONNX's result.
std::optional<at::Tensor> nativeResize(const at::Tensor& x, std::vector<ResizeAxis> axes, const std::string& mode,
                                       const std::string& coordinates, const OpCtx& c) {
    const int64_t spatial = x.dim() - 2;
    std::sort(axes.begin(), axes.end(), [](const ResizeAxis& a, const ResizeAxis& b) { return a.axis < b.axis; });
    if (spatial < 1 || spatial > 3 || c.attrInt("exclude_outside", 0) != 0) return std::nullopt;
    std::vector<int64_t> out;
    std::vector<double> scales;
    for (const ResizeAxis& a : axes) {
        if (a.axis < 2 && (a.in != a.out || a.scale != 1)) return std::nullopt;
        if (a.axis >= 2) {
            out.push_back(a.out);
            scales.push_back(a.scale);
        }
    }
    if (static_cast<int64_t>(out.size()) != spatial) return std::nullopt;
    auto sc = [&](size_t i) { return std::optional<double>(scales[i]); };
    const std::string nearestMode = c.attrString("nearest_mode", c.opset() >= 11 ? "round_prefer_floor" : "floor");
    if (mode == "nearest" && coordinates == "asymmetric" && nearestMode == "floor") {
        if (spatial == 1) return at::upsample_nearest1d(x, out, sc(0));
        if (spatial == 2) return at::upsample_nearest2d(x, out, sc(0), sc(1));
        return at::upsample_nearest3d(x, out, sc(0), sc(1), sc(2));
    }
    if (mode == "nearest" && coordinates == "half_pixel" && nearestMode == "round_prefer_ceil") {
        if (spatial == 1) return at::_upsample_nearest_exact1d(x, out, sc(0));
        if (spatial == 2) return at::_upsample_nearest_exact2d(x, out, sc(0), sc(1));
        return at::_upsample_nearest_exact3d(x, out, sc(0), sc(1), sc(2));
    }
    bool allLarger = true, wholeScales = true;
    for (int64_t o : out) allLarger &= o > 1;
    for (const ResizeAxis& a : axes) wholeScales &= a.scale * static_cast<double>(a.in) == static_cast<double>(a.out);
    const bool alignCorners = coordinates == "align_corners" && wholeScales;
    const bool halfPixel = coordinates == "half_pixel" || (coordinates == "pytorch_half_pixel" && allLarger);
    if (!alignCorners && !halfPixel) return std::nullopt;
    if (mode == "linear") {
        if (spatial == 1) return at::upsample_linear1d(x, out, alignCorners, sc(0));
        if (spatial == 2) return at::upsample_bilinear2d(x, out, alignCorners, sc(0), sc(1));
        return at::upsample_trilinear3d(x, out, alignCorners, sc(0), sc(1), sc(2));
    }
    if (mode == "cubic" && spatial == 2 && c.attrFloat("cubic_coeff_a", -0.75) == -0.75)
        return at::upsample_bicubic2d(x, out, alignCorners, sc(0), sc(1));
    return std::nullopt;
}

Outputs runResize(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t rank = x.dim();
    const bool legacy = c.op.type == "Upsample" || c.opset() <= 10;  // (X, scales)
    std::string mode = c.attrString("mode", "nearest");
    if (mode == "bilinear" || mode == "trilinear") mode = "linear";
    if (mode == "bicubic") mode = "cubic";
    if (mode != "nearest" && mode != "linear" && mode != "cubic") c.fail("unsupported mode '" + mode + "'");
    if (c.attrInt("antialias", 0) != 0 && mode != "nearest") c.fail("antialiased resizing has no PyTorch kernel");
    const std::string coordinates =
        c.attrString("coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel");
    std::vector<int64_t> axisList = c.attrInts("axes");
    if (axisList.empty())
        for (int64_t i = 0; i < rank; ++i) axisList.push_back(i);
    for (int64_t& a : axisList) a = normalizeAxis(c, a, rank);
    std::vector<ResizeAxis> axes;
    for (int64_t a : axisList) {
        ResizeAxis r;
        r.axis = a;
        r.in = r.out = x.size(a);
        axes.push_back(r);
    }
    const size_t scalesInput = legacy ? 1 : 2;
    const bool hasSizes = !legacy && c.has(3) && c.raw(3).numel() > 0;
    if (hasSizes) {
        std::vector<int64_t> sizes = c.ints(3);
        if (sizes.size() != axes.size()) c.fail("sizes do not match the resized axes");
        const std::string policy = c.attrString("keep_aspect_ratio_policy", "stretch");
        double common = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0;
        for (size_t i = 0; i < axes.size(); ++i) {
            const double ratio = static_cast<double>(sizes[i]) / static_cast<double>(axes[i].in);
            common = policy == "not_larger" ? std::min(common, ratio) : std::max(common, ratio);
        }
        for (size_t i = 0; i < axes.size(); ++i) {
            if (policy == "stretch") {
                axes[i].out = sizes[i];
                axes[i].scale = static_cast<double>(sizes[i]) / static_cast<double>(axes[i].in);
            } else {
                axes[i].scale = common;
                axes[i].out = static_cast<int64_t>(std::round(common * static_cast<double>(axes[i].in)));
            }
        }
    } else {
        std::vector<double> scales =
            c.has(scalesInput) && c.raw(scalesInput).numel() > 0 ? floatsOf(c, scalesInput) : c.attrFloats("scales");
        if (scales.size() != axes.size()) c.fail("needs one scale per resized axis");
        for (size_t i = 0; i < axes.size(); ++i) {
            axes[i].scale = scales[i];
            axes[i].out = static_cast<int64_t>(std::floor(static_cast<double>(axes[i].in) * scales[i]));
        }
    }
    if (coordinates == "tf_crop_and_resize") {
        std::vector<double> roi = c.has(1) ? floatsOf(c, 1) : std::vector<double>{};
        if (roi.size() != 2 * axes.size()) c.fail("tf_crop_and_resize needs a roi of starts and ends");
        for (size_t i = 0; i < axes.size(); ++i) {
            axes[i].roiStart = roi[i];
            axes[i].roiEnd = roi[i + axes.size()];
        }
    } else if (auto native = nativeResize(x, axes, mode, coordinates, c)) {
        return {*native};
    }
    at::Tensor y = x;
    for (const ResizeAxis& a : axes)
        if (a.in != a.out || a.scale != 1 || coordinates == "tf_crop_and_resize")
            y = resizeAxis(c, y, a, mode, coordinates);
    return {y};
}

Outputs runGridSample(const OpCtx& c) {
    at::Tensor x = c.t(0), grid = c.t(1);
    const std::string mode = c.attrString("mode", "bilinear");
    const std::string padding = c.attrString("padding_mode", "zeros");
    int64_t interpolation = 0;
    if (mode == "bilinear" || mode == "linear")
        interpolation = 0;
    else if (mode == "nearest")
        interpolation = 1;
    else if (mode == "bicubic" || mode == "cubic")
        interpolation = 2;
    else
        c.fail("unsupported mode '" + mode + "'");
    int64_t pad = 0;
    if (padding == "zeros")
        pad = 0;
    else if (padding == "border")
        pad = 1;
    else if (padding == "reflection")
        pad = 2;
    else
        c.fail("unsupported padding_mode '" + padding + "'");
    return {at::grid_sampler(x, grid, interpolation, pad, c.attrInt("align_corners", 0) != 0)};
}

}  // namespace

void addResizeLowerings(std::vector<LoweringEntry>& t) {
    for (const char* type : {"Resize", "Upsample"}) t.push_back({type, runResize});
    t.push_back({"GridSample", runGridSample});
}

}  // namespace ts::torchexec
