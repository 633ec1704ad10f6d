// torchvision image classifiers: ResNet (v1.5), VGG-16, MobileNet v2. Module and parameter
// names follow torchvision's state_dict ("layer1.0.conv1.weight", "features.0.0.weight").
#include <string>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::zoo {

int imageInput(ModelBuilder& b, int64_t image) {
    return b.input("image", {Dim::batch(), 3, image, image});
}

namespace {

// torchvision BasicBlock (ResNet-18/34): two 3x3 convolutions, stride on the first.
int basicBlock(ModelBuilder& b, int x, int64_t planes, int64_t stride) {
    int64_t inChannels = b.graph().values[x].shape[1].constant();
    int y = b.relu(b.batchNorm("bn1", b.conv2d("conv1", x, planes, 3, stride, 1, 1, false)), "relu");
    y = b.batchNorm("bn2", b.conv2d("conv2", y, planes, 3, 1, 1, 1, false));
    int identity = x;
    if (stride != 1 || inChannels != planes) {
        auto s = b.scope("downsample");
        identity = b.batchNorm("1", b.conv2d("0", x, planes, 1, stride, 0, 1, false));
    }
    return b.relu(b.add(y, identity), "relu");
}

}  // namespace

int torchvisionBottleneck(ModelBuilder& b, int x, int64_t planes, int64_t stride) {
    int64_t inChannels = b.graph().values[x].shape[1].constant();
    int y = b.relu(b.batchNorm("bn1", b.conv2d("conv1", x, planes, 1, 1, 0, 1, false)), "relu");
    y = b.relu(b.batchNorm("bn2", b.conv2d("conv2", y, planes, 3, stride, 1, 1, false)), "relu");
    y = b.batchNorm("bn3", b.conv2d("conv3", y, planes * 4, 1, 1, 0, 1, false));
    int identity = x;
    if (stride != 1 || inChannels != planes * 4) {
        auto s = b.scope("downsample");
        identity = b.batchNorm("1", b.conv2d("0", x, planes * 4, 1, stride, 0, 1, false));
    }
    return b.relu(b.add(y, identity), "relu");
}

Graph buildResNet(const ZooArgs& a, int depth) {
    const int64_t image = a.integer("image", 32, 4096);
    const int64_t classes = a.integer("classes", 1, 1'000'000);
    std::vector<int> blocks;
    bool useBottleneck = depth >= 50;
    switch (depth) {
        case 18:
            blocks = {2, 2, 2, 2};
            break;
        case 50:
            blocks = {3, 4, 6, 3};
            break;
        case 101:
            blocks = {3, 4, 23, 3};
            break;
        default:
            a.fail("unsupported ResNet depth " + std::to_string(depth));
    }
    ModelBuilder b(a.model());
    int x = imageInput(b, image);
    x = b.relu(b.batchNorm("bn1", b.conv2d("conv1", x, 64, 7, 2, 3, 1, false)), "relu");
    x = b.maxPool2d(x, 3, 2, 1, false, "maxpool");
    const int64_t planes[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
        auto layer = b.scope("layer" + std::to_string(stage + 1));
        for (int i = 0; i < blocks[stage]; ++i) {
            auto block = b.scope(std::to_string(i));
            int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
            x = useBottleneck ? torchvisionBottleneck(b, x, planes[stage], stride)
                              : basicBlock(b, x, planes[stage], stride);
        }
    }
    x = b.flatten(b.adaptiveAvgPool2d(x, 1, 1, "avgpool"), 1);
    x = b.linear("fc", x, classes);
    return b.finish({x});
}

Graph buildVgg16(const ZooArgs& a) {
    // The classifier expects a 7x7 feature map after AdaptiveAvgPool2d((7, 7)); smaller images
    // would need upsampling, which the ONNX export of this model does not support either.
    const int64_t image = a.integer("image", 224, 4096);
    const int64_t classes = a.integer("classes", 1, 1'000'000);
    ModelBuilder b(a.model());
    int x = imageInput(b, image);
    // Configuration "D": channel counts, 0 = max pooling. Indices follow nn.Sequential numbering.
    const int64_t config[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
    {
        auto features = b.scope("features");
        int index = 0;
        for (int64_t channels : config) {
            if (channels == 0) {
                x = b.maxPool2d(x, 2, 2, 0, false, std::to_string(index++));
                continue;
            }
            x = b.conv2d(std::to_string(index++), x, channels, 3, 1, 1);
            x = b.relu(x, std::to_string(index++));
        }
    }
    x = b.flatten(b.adaptiveAvgPool2d(x, 7, 7, "avgpool"), 1);
    {
        auto classifier = b.scope("classifier");
        x = b.relu(b.linear("0", x, 4096), "1");
        x = b.dropout("2", x, 0.5);
        x = b.relu(b.linear("3", x, 4096), "4");
        x = b.dropout("5", x, 0.5);
        x = b.linear("6", x, classes);
    }
    return b.finish({x});
}

namespace {

// torchvision Conv2dNormActivation with ReLU6: children "0" (conv), "1" (BN), "2" (ReLU6).
int convBnRelu6(ModelBuilder& b, const std::string& name, int x, int64_t out, int64_t kernel, int64_t stride,
                int64_t groups) {
    auto s = b.scope(name);
    x = b.conv2d("0", x, out, kernel, stride, (kernel - 1) / 2, groups, false);
    return b.relu6(b.batchNorm("1", x), "2");
}

// torchvision InvertedResidual: expand (1x1), depthwise 3x3, project (1x1, linear); the residual
// add belongs to the block itself, the layers to its "conv" Sequential.
int invertedResidual(ModelBuilder& b, int x, int64_t out, int64_t stride, int64_t expandRatio) {
    const int64_t in = b.graph().values[x].shape[1].constant();
    const int64_t hidden = in * expandRatio;
    int y = x;
    {
        auto conv = b.scope("conv");
        int index = 0;
        if (expandRatio != 1) y = convBnRelu6(b, std::to_string(index++), y, hidden, 1, 1, 1);
        y = convBnRelu6(b, std::to_string(index++), y, hidden, 3, stride, hidden);  // depthwise
        y = b.conv2d(std::to_string(index++), y, out, 1, 1, 0, 1, false);
        y = b.batchNorm(std::to_string(index++), y);
    }
    return (stride == 1 && in == out) ? b.add(x, y) : y;
}

}  // namespace

Graph buildMobileNetV2(const ZooArgs& a) {
    const int64_t image = a.integer("image", 32, 4096);
    const int64_t classes = a.integer("classes", 1, 1'000'000);
    ModelBuilder b(a.model());
    int x = imageInput(b, image);
    // (expansion t, channels c, repeats n, first stride s) from the paper; width multiplier 1.0.
    const int64_t settings[][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                   {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    {
        auto features = b.scope("features");
        x = convBnRelu6(b, "0", x, 32, 3, 2, 1);
        int index = 1;
        for (const auto& s : settings)
            for (int64_t i = 0; i < s[2]; ++i) {
                auto block = b.scope(std::to_string(index++));
                x = invertedResidual(b, x, s[1], i == 0 ? s[3] : 1, s[0]);
            }
        x = convBnRelu6(b, std::to_string(index), x, 1280, 1, 1, 1);
    }
    x = b.flatten(b.adaptiveAvgPool2d(x, 1, 1), 1);
    {
        auto classifier = b.scope("classifier");
        x = b.dropout("0", x, 0.2);
        x = b.linear("1", x, classes);
    }
    return b.finish({x});
}

}  // namespace ts::zoo
