#pragma once
// Internal: ONNX index arithmetic that needs no tensors (no LibTorch here): Resize's sampling taps,
// Pad's source positions, and non-maximum suppression's greedy selection.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ts::torchexec {

// One resized axis: sizes, ONNX's scale (the given one, or out / in when sizes are given) and, for
// tf_crop_and_resize, the region of interest in normalized coordinates.
struct ResizeGeometry {
    int64_t in = 0, out = 0;
    double scale = 1;
    double roiStart = 0, roiEnd = 1;
};

struct ResizeOptions {
    std::string mode = "nearest";            // nearest, linear, cubic
    std::string coordinates = "half_pixel";  // coordinate_transformation_mode
    std::string nearestMode = "round_prefer_floor";
    double cubicA = -0.75;
    bool excludeOutside = false;
};

// For each output position, the source indices (clamped into the input, as ONNX's edge padding)
// and weights of its 1 (nearest), 2 (linear) or 4 (cubic) taps, index[tap][position]; `outside`
// marks positions tf_crop_and_resize fills with the extrapolation value.
struct ResizeTaps {
    std::vector<std::vector<int64_t>> index;
    std::vector<std::vector<double>> weight;
    std::vector<uint8_t> outside;
};
ResizeTaps resizeTaps(const ResizeGeometry& axis, const ResizeOptions& options);

// Source positions of an axis of size n padded by `before` and `after` in reflect, edge or wrap mode.
std::vector<int64_t> padSourceIndices(const std::string& mode, int64_t n, int64_t before, int64_t after);

struct NmsOptions {
    int64_t maxPerClass = 0;
    double iouThreshold = 0;
    std::optional<double> scoreThreshold;
    bool centerPointBox = false;  // boxes as [x_center, y_center, width, height], else two corners [y1, x1, y2, x2]
};
// Greedy non-maximum suppression of boxes [batches, count, 4] by scores [batches, classes, count]:
// the selected (batch, class, box) triplets, flattened, per batch and class in selection order.
std::vector<int64_t> nonMaxSuppression(const float* boxes, const float* scores, int64_t batches, int64_t classes,
                                       int64_t count, const NmsOptions& options);

}  // namespace ts::torchexec
