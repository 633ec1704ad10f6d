// NVIDIA DeepLearningExamples image classifiers (PyTorch/Classification/ConvNets,
// image_classification/models/resnet.py and common.py): ResNeXt-101 32x4d and SE-ResNeXt-101 32x4d,
// the configurations NVIDIA publishes training throughput for. Names follow that code's
// state_dict: the stages are one nn.Sequential "layers" ("layers.2.22.conv2.weight"), not
// torchvision's layer1..layer4.
//
// ResNeXt-101 32x4d is torchvision's ResNet(Bottleneck, [3, 4, 23, 3], groups=32,
// width_per_group=4) under other names: NVIDIA writes its widths as [128, 256, 512, 1024] with
// expansion 2 and cardinality 32. SE-ResNeXt adds NVIDIA's SqueezeAndExcitation on each
// bottleneck's output, whose hidden width is a fixed 16 channels (se_squeeze=16 is passed as the
// squeeze width, not as a reduction ratio as in Hu et al.), so it has 45.3M parameters rather
// than the 49.0M of the paper's C/16 design.
#include <string>

#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

constexpr int64_t kCardinality = 32;
constexpr int64_t kExpansion = 2;
constexpr int64_t kSqueezeChannels = 16;

// common.py SqueezeAndExcitation: pooling, 1x1 conv "squeeze" (with bias), activation, 1x1 conv
// "expand", sigmoid. Returns the per-channel scale [N, C, 1, 1].
int squeezeAndExcitation(ModelBuilder& b, int x) {
    const int64_t channels = b.graph().values[x].shape[1].constant();
    auto s = b.scope("squeeze");
    int scale = b.adaptiveAvgPool2d(x, 1, 1, "pooling");
    scale = b.relu(b.conv2d("squeeze", scale, kSqueezeChannels, 1), "activation");
    return b.sigmoid(b.conv2d("expand", scale, channels, 1), "sigmoid");
}

// resnet.py Bottleneck: 1x1, grouped 3x3 (carrying the stride), 1x1 to width * expansion; with SE
// the output is residual + out * se(out) (torch.addcmul, fused_se=True).
int bottleneck(ModelBuilder& b, int x, int64_t width, int64_t stride, bool squeezeExcitation) {
    const int64_t inChannels = b.graph().values[x].shape[1].constant();
    const int64_t outChannels = width * kExpansion;
    int y = b.relu(b.batchNorm("bn1", b.conv2d("conv1", x, width, 1, 1, 0, 1, false)), "relu");
    y = b.relu(b.batchNorm("bn2", b.conv2d("conv2", y, width, 3, stride, 1, kCardinality, false)), "relu");
    y = b.batchNorm("bn3", b.conv2d("conv3", y, outChannels, 1, 1, 0, 1, false));
    int residual = x;
    if (stride != 1 || inChannels != outChannels) {
        auto s = b.scope("downsample");
        residual = b.batchNorm("1", b.conv2d("0", x, outChannels, 1, stride, 0, 1, false));
    }
    if (squeezeExcitation) y = b.mul(y, squeezeAndExcitation(b, y));
    return b.relu(b.add(residual, y), "relu");
}

}  // namespace

Graph buildResNeXt101(const ZooArgs& a, bool squeezeExcitation) {
    const int64_t image = a.integer("image", 32, 4096);
    const int64_t classes = a.integer("classes", 1, 1'000'000);
    const int blocks[] = {3, 4, 23, 3};
    const int64_t widths[] = {128, 256, 512, 1024};
    ModelBuilder b(a.model());
    int x = imageInput(b, image);
    x = b.relu(b.batchNorm("bn1", b.conv2d("conv1", x, 64, 7, 2, 3, 1, false)), "relu");
    x = b.maxPool2d(x, 3, 2, 1, false, "maxpool");
    {
        auto layers = b.scope("layers");
        for (int stage = 0; stage < 4; ++stage) {
            auto layer = b.scope(std::to_string(stage));
            for (int i = 0; i < blocks[stage]; ++i) {
                auto block = b.scope(std::to_string(i));
                const int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
                x = bottleneck(b, x, widths[stage], stride, squeezeExcitation);
            }
        }
    }
    x = b.flatten(b.adaptiveAvgPool2d(x, 1, 1, "avgpool"), 1);
    x = b.linear("fc", x, classes);
    return b.finish({x});
}

}  // namespace ts::zoo
