// ONNX index arithmetic without tensors (see op_lowering_math.h).
#include "op_lowering_math.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace ts::torchexec {
namespace {

double sourceCoordinate(const std::string& mode, const ResizeGeometry& a, int64_t j) {
    const double x = static_cast<double>(j), in = static_cast<double>(a.in), out = static_cast<double>(a.out);
    if (mode == "half_pixel") return (x + 0.5) / a.scale - 0.5;
    if (mode == "half_pixel_symmetric") {
        const double adjustment = out / (a.scale * in);
        return in / 2 * (1 - adjustment) + (x + 0.5) / a.scale - 0.5;
    }
    if (mode == "pytorch_half_pixel") return a.out > 1 ? (x + 0.5) / a.scale - 0.5 : 0;
    // ONNX's reference takes the resized length as scale * in, which need not be a whole number.
    if (mode == "align_corners") {
        const double resized = a.scale * in;
        return resized == 1 ? 0 : x * (in - 1) / (resized - 1);
    }
    if (mode == "asymmetric") return x / a.scale;
    if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / a.scale;
    // tf_crop_and_resize
    if (a.out > 1) return a.roiStart * (in - 1) + x * (a.roiEnd - a.roiStart) * (in - 1) / (out - 1);
    return 0.5 * (a.roiStart + a.roiEnd) * (in - 1);
}

int64_t nearestIndex(const std::string& mode, double x) {
    const double f = std::floor(x);
    if (mode == "floor") return static_cast<int64_t>(f);
    if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
    if (x == f + 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
    return static_cast<int64_t>(std::round(x));
}

std::vector<double> cubicCoefficients(double ratio, double a) {
    const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a, ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * q - (a + 3)) * q * q + 1, ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a};
}

}  // namespace

ResizeTaps resizeTaps(const ResizeGeometry& a, const ResizeOptions& o) {
    const size_t taps = o.mode == "nearest" ? 1 : o.mode == "linear" ? 2 : 4;
    const size_t out = static_cast<size_t>(a.out);
    ResizeTaps t;
    t.index.assign(taps, std::vector<int64_t>(out));
    t.weight.assign(taps, std::vector<double>(out));
    t.outside.assign(out, 0);
    auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i, 0, a.in - 1); };
    for (size_t j = 0; j < out; ++j) {
        const double xo = sourceCoordinate(o.coordinates, a, static_cast<int64_t>(j));
        t.outside[j] = o.coordinates == "tf_crop_and_resize" && (xo < 0 || xo > static_cast<double>(a.in - 1));
        if (taps == 1) {
            t.index[0][j] = clampIndex(nearestIndex(o.nearestMode, xo));
            t.weight[0][j] = 1;
            continue;
        }
        // The base tap is the pixel left of x (x itself counts as the right neighbour): ratio in (0, 1].
        const int64_t base = static_cast<int64_t>(std::ceil(xo)) - 1;
        const double ratio = xo - static_cast<double>(base);
        std::vector<double> w = taps == 2 ? std::vector<double>{1 - ratio, ratio} : cubicCoefficients(ratio, o.cubicA);
        const int64_t first = taps == 2 ? base : base - 1;
        double sum = 0;
        for (size_t k = 0; k < taps; ++k) {
            const int64_t i = first + static_cast<int64_t>(k);
            if (o.excludeOutside && (i < 0 || i >= a.in)) w[k] = 0;
            sum += w[k];
        }
        for (size_t k = 0; k < taps; ++k) {
            t.index[k][j] = clampIndex(first + static_cast<int64_t>(k));
            t.weight[k][j] = o.excludeOutside && sum != 0 ? w[k] / sum : w[k];
        }
    }
    return t;
}

std::vector<int64_t> padSourceIndices(const std::string& mode, int64_t n, int64_t before, int64_t after) {
    std::vector<int64_t> idx;
    for (int64_t j = 0; j < n + before + after; ++j) {
        int64_t s = j - before;
        if (mode == "edge") {
            s = std::clamp<int64_t>(s, 0, n - 1);
        } else if (mode == "wrap") {
            s = ((s % n) + n) % n;
        } else if (n == 1) {
            s = 0;
        } else {
            const int64_t period = 2 * (n - 1);
            s = ((s % period) + period) % period;
            if (s >= n) s = period - s;
        }
        idx.push_back(s);
    }
    return idx;
}

std::vector<int64_t> nonMaxSuppression(const float* boxes, const float* scores, int64_t batches, int64_t classes,
                                       int64_t count, const NmsOptions& o) {
    auto corners = [&](int64_t b, int64_t i) {
        const float* p = boxes + (b * count + i) * 4;
        if (o.centerPointBox)
            return std::array<float, 4>{p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
        return std::array<float, 4>{std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]),
                                    std::max(p[1], p[3])};
    };
    auto iou = [](const std::array<float, 4>& a, const std::array<float, 4>& b) {
        const float h = std::min(a[2], b[2]) - std::max(a[0], b[0]), w = std::min(a[3], b[3]) - std::max(a[1], b[1]);
        if (h <= 0 || w <= 0) return 0.0f;
        const float inter = h * w, areaA = (a[2] - a[0]) * (a[3] - a[1]), areaB = (b[2] - b[0]) * (b[3] - b[1]);
        const float uni = areaA + areaB - inter;
        return uni > 0 ? inter / uni : 0.0f;
    };
    std::vector<int64_t> selected;
    for (int64_t b = 0; b < batches; ++b)
        for (int64_t k = 0; k < classes; ++k) {
            const float* sc = scores + (b * classes + k) * count;
            std::vector<int64_t> order;
            for (int64_t i = 0; i < count; ++i)
                if (!o.scoreThreshold || sc[i] > *o.scoreThreshold) order.push_back(i);
            // Highest score first; equal scores keep the lower box index first.
            std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return sc[x] > sc[y]; });
            std::vector<int64_t> kept;
            for (int64_t i : order) {
                if (static_cast<int64_t>(kept.size()) >= o.maxPerClass) break;
                bool suppressed = false;
                for (int64_t j : kept) suppressed |= iou(corners(b, i), corners(b, j)) > o.iouThreshold;
                if (suppressed) continue;
                kept.push_back(i);
                selected.insert(selected.end(), {b, k, i});
            }
        }
    return selected;
}

}  // namespace ts::torchexec
