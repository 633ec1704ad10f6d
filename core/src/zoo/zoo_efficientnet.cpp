// torchvision EfficientNet-B0 and B4 (models/efficientnet.py): MBConv blocks with
// squeeze-and-excitation and SiLU, channels and depths scaled from B0's table. Names follow
// torchvision's state_dict ("features.3.1.block.2.fc1.weight"). SiLU is nn.SiLU, one operator that
// saves its input, as torchvision and NVIDIA's LayerBuilder run it (not x * sigmoid(x)).
//
// Each block's StochasticDepth is left out: in training it multiplies the residual branch by a
// per-sample [N, 1, 1, 1] mask, next to nothing against the convolutions around it.
#include <algorithm>
#include <cmath>
#include <string>

#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

// torchvision's _make_divisible(v, 8): round to the nearest multiple of 8, never more than 10% down.
int64_t makeDivisible(double channels) {
    int64_t rounded = std::max<int64_t>(8, static_cast<int64_t>(channels + 4) / 8 * 8);
    if (rounded < 0.9 * channels) rounded += 8;
    return rounded;
}

// Conv2dNormActivation: "0" convolution without bias (padding keeps the size), "1" BatchNorm,
// "2" SiLU when `activation`.
int convBnSilu(ModelBuilder& b, const std::string& name, int x, int64_t out, int64_t kernel, int64_t stride,
               int64_t groups, bool activation = true) {
    auto s = b.scope(name);
    x = b.batchNorm("1", b.conv2d("0", x, out, kernel, stride, (kernel - 1) / 2, groups, false));
    return activation ? b.silu(x, "2") : x;
}

// ops.misc.SqueezeExcitation with SiLU: avgpool, fc1 (1x1 conv), SiLU, fc2, sigmoid, scale x.
int squeezeExcitation(ModelBuilder& b, const std::string& name, int x, int64_t squeezeChannels) {
    const int64_t channels = b.graph().values[x].shape[1].constant();
    auto s = b.scope(name);
    int scale = b.adaptiveAvgPool2d(x, 1, 1, "avgpool");
    scale = b.silu(b.conv2d("fc1", scale, squeezeChannels, 1), "activation");
    scale = b.sigmoid(b.conv2d("fc2", scale, channels, 1), "scale_activation");
    return b.mul(scale, x);
}

// MBConv: optional 1x1 expansion, depthwise k x k (carrying the stride), SE squeezing to a quarter
// of the block's input channels (of its expanded ones when `wideSqueeze`: NVIDIA's widese_mbconv,
// squeeze_hidden=True), linear 1x1 projection; residual when the shape is unchanged.
int mbConv(ModelBuilder& b, int x, int64_t expandRatio, int64_t kernel, int64_t stride, int64_t out, bool wideSqueeze) {
    const int64_t in = b.graph().values[x].shape[1].constant();
    const int64_t expanded = makeDivisible(static_cast<double>(in * expandRatio));
    int y = x;
    {
        auto block = b.scope("block");
        int index = 0;
        if (expanded != in) y = convBnSilu(b, std::to_string(index++), y, expanded, 1, 1, 1);
        y = convBnSilu(b, std::to_string(index++), y, expanded, kernel, stride, expanded);
        y = squeezeExcitation(b, std::to_string(index++), y, std::max<int64_t>(1, (wideSqueeze ? expanded : in) / 4));
        y = convBnSilu(b, std::to_string(index++), y, out, 1, 1, 1, false);
    }
    return (stride == 1 && in == out) ? b.add(y, x) : y;
}

struct Variant {
    double widthMultiplier;
    double depthMultiplier;
    double dropout;
};

}  // namespace

Graph buildEfficientNet(const ZooArgs& a, int variant) {
    Variant v{};
    switch (variant) {
        case 0:
            v = {1.0, 1.0, 0.2};
            break;
        case 4:
            v = {1.4, 1.8, 0.4};
            break;
        default:
            a.fail("unsupported EfficientNet variant B" + std::to_string(variant));
    }
    const int64_t image = a.integer("image", 32, 4096);
    const int64_t classes = a.integer("classes", 1, 1'000'000);
    const bool wideSqueeze = a.choice("se", {"base", "wide"}) == "wide";
    auto channels = [&](int64_t base) { return makeDivisible(static_cast<double>(base) * v.widthMultiplier); };
    auto depth = [&](int64_t base) {
        return static_cast<int64_t>(std::ceil(static_cast<double>(base) * v.depthMultiplier));
    };
    // B0's stages (expand ratio, kernel, first stride, output channels, repeats), paper Table 1.
    const int64_t stages[][5] = {{1, 3, 1, 16, 1},  {6, 3, 2, 24, 2},  {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
                                 {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
    ModelBuilder b(a.model());
    int x = imageInput(b, image);
    {
        auto features = b.scope("features");
        x = convBnSilu(b, "0", x, channels(32), 3, 2, 1);
        int index = 1;
        for (const auto& stage : stages) {
            auto stageScope = b.scope(std::to_string(index++));
            for (int64_t i = 0; i < depth(stage[4]); ++i) {
                auto block = b.scope(std::to_string(i));
                x = mbConv(b, x, stage[0], stage[1], i == 0 ? stage[2] : 1, channels(stage[3]), wideSqueeze);
            }
        }
        x = convBnSilu(b, std::to_string(index), x, 4 * channels(320), 1, 1, 1);
    }
    x = b.flatten(b.adaptiveAvgPool2d(x, 1, 1, "avgpool"), 1);
    {
        auto classifier = b.scope("classifier");
        x = b.dropout("0", x, v.dropout);
        x = b.linear("1", x, classes);
    }
    return b.finish({x});
}

}  // namespace ts::zoo
