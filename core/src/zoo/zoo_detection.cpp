// NVIDIA DeepLearningExamples SSD300 v1.1 (PyTorch/Detection/SSD, ssd/model.py), the detector NVIDIA
// publishes training throughput for: torchvision ResNet-50 up to layer3 with layer3's first block at
// stride 1 (conv4_x: 1024 x 38 x 38 at 300 x 300), five additional feature blocks, and 3x3 location
// and confidence heads on all six feature maps (8732 default boxes at 300 x 300). Names follow its
// state_dict: "feature_extractor.feature_extractor.6.0.conv1.weight", "additional_blocks.0.3.weight",
// "conf.5.bias".
//
// The outputs are the heads' (locations [N, 4, boxes], scores [N, classes, boxes]). The training
// loss (smooth L1 on the matched boxes plus cross-entropy with hard negative mining, a sort over the
// 8732 boxes) is left out: it is small next to the network and its work depends on the labels.
#include <string>
#include <vector>

#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

// SSD300.feature_extractor.feature_extractor: nn.Sequential(*list(resnet50.children())[:7]), i.e.
// conv1, bn1, relu, maxpool, layer1, layer2, layer3, with layer3.0 (conv1, conv2, downsample) at
// stride 1. torchvision v1.5 already puts no stride on conv1, so only conv2 and downsample change.
int resnet50Conv4(ModelBuilder& b, int x) {
    auto outer = b.scope("feature_extractor");
    auto inner = b.scope("feature_extractor");
    x = b.relu(b.batchNorm("1", b.conv2d("0", x, 64, 7, 2, 3, 1, false)), "2");
    x = b.maxPool2d(x, 3, 2, 1, false, "3");
    const int blocks[] = {3, 4, 6};
    const int64_t planes[] = {64, 128, 256};
    const int64_t firstStride[] = {1, 2, 1};
    for (int stage = 0; stage < 3; ++stage) {
        auto layer = b.scope(std::to_string(4 + stage));
        for (int i = 0; i < blocks[stage]; ++i) {
            auto block = b.scope(std::to_string(i));
            x = torchvisionBottleneck(b, x, planes[stage], i == 0 ? firstStride[stage] : 1);
        }
    }
    return x;
}

// _build_additional_features: 1x1 conv to `hidden`, then a 3x3 conv to `out` (stride 2, padding 1
// for the first three blocks, unpadded for the last two), each with BatchNorm and ReLU.
int additionalBlock(ModelBuilder& b, int index, int x, int64_t hidden, int64_t out) {
    auto s = b.scope(std::to_string(index));
    x = b.relu(b.batchNorm("1", b.conv2d("0", x, hidden, 1, 1, 0, 1, false)), "2");
    const bool halves = index < 3;
    x = b.conv2d("3", x, out, 3, halves ? 2 : 1, halves ? 1 : 0, 1, false);
    return b.relu(b.batchNorm("4", x), "5");
}

}  // namespace

Graph buildSsd300(const ZooArgs& a) {
    // Below 257 pixels the last unpadded 3x3 convolution gets a 2x2 map.
    const int64_t image = a.integer("image", 257, 4096);
    const int64_t classes = a.integer("classes", 1, 100'000);
    const int64_t hidden[] = {256, 256, 128, 128, 128};
    const int64_t featureChannels[] = {1024, 512, 512, 256, 256, 256};
    const int64_t defaultBoxes[] = {4, 6, 6, 6, 4, 4};
    ModelBuilder b(a.model());
    int x = imageInput(b, image);
    std::vector<int> features{resnet50Conv4(b, x)};
    {
        auto blocks = b.scope("additional_blocks");
        for (int i = 0; i < 5; ++i)
            features.push_back(additionalBlock(b, i, features.back(), hidden[i], featureChannels[i + 1]));
    }
    // bbox_view: each head's output as [N, 4 or classes, boxes], concatenated over the feature maps.
    std::vector<int> locations, scores;
    for (size_t i = 0; i < features.size(); ++i) {
        const std::string index = std::to_string(i);
        int loc = b.conv2d("loc." + index, features[i], defaultBoxes[i] * 4, 3, 1, 1);
        locations.push_back(b.reshape(loc, {0, 4, -1}));
        int conf = b.conv2d("conf." + index, features[i], defaultBoxes[i] * classes, 3, 1, 1);
        scores.push_back(b.reshape(conf, {0, classes, -1}));
    }
    return b.finish({b.concat(locations, 2), b.concat(scores, 2)});
}

}  // namespace ts::zoo
