// torchvision Inception v3 (transform_input=False, as built without pretrained weights), with
// the auxiliary classifier that torchvision's constructor enables by default.
#include <string>
#include <vector>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

// BasicConv2d: conv (no bias), BatchNorm(eps=0.001), functional ReLU in the module itself.
int basicConv(ModelBuilder& b, const std::string& name, int x, int64_t out, std::vector<int64_t> kernel,
              std::vector<int64_t> stride = {1, 1}, std::vector<int64_t> padding = {0, 0}) {
    auto s = b.scope(name);
    x = b.conv2d("conv", x, out, std::move(kernel), std::move(stride), std::move(padding), 1, false);
    return b.relu(b.batchNorm("bn", x, 0.001));
}
int basicConv(ModelBuilder& b, const std::string& name, int x, int64_t out, int64_t kernel, int64_t stride = 1,
              int64_t padding = 0) {
    return basicConv(b, name, x, out, {kernel, kernel}, {stride, stride}, {padding, padding});
}

// F.avg_pool2d(x, kernel_size=3, stride=1, padding=1) followed by the branch_pool convolution.
int poolBranch(ModelBuilder& b, int x, int64_t out) {
    return basicConv(b, "branch_pool", b.avgPool2d(x, 3, 1, 1), out, 1);
}

int inceptionA(ModelBuilder& b, int x, int64_t poolFeatures) {
    int b1 = basicConv(b, "branch1x1", x, 64, 1);
    int b5 = basicConv(b, "branch5x5_2", basicConv(b, "branch5x5_1", x, 48, 1), 64, 5, 1, 2);
    int b3 = basicConv(b, "branch3x3dbl_1", x, 64, 1);
    b3 = basicConv(b, "branch3x3dbl_2", b3, 96, 3, 1, 1);
    b3 = basicConv(b, "branch3x3dbl_3", b3, 96, 3, 1, 1);
    return b.concat({b1, b5, b3, poolBranch(b, x, poolFeatures)}, 1);
}

int inceptionB(ModelBuilder& b, int x) {
    int b3 = basicConv(b, "branch3x3", x, 384, 3, 2);
    int d = basicConv(b, "branch3x3dbl_1", x, 64, 1);
    d = basicConv(b, "branch3x3dbl_2", d, 96, 3, 1, 1);
    d = basicConv(b, "branch3x3dbl_3", d, 96, 3, 2);
    return b.concat({b3, d, b.maxPool2d(x, 3, 2)}, 1);
}

int inceptionC(ModelBuilder& b, int x, int64_t c7) {
    const std::vector<int64_t> k1x7{1, 7}, k7x1{7, 1}, p1x7{0, 3}, p7x1{3, 0}, s1{1, 1};
    int b1 = basicConv(b, "branch1x1", x, 192, 1);
    int b7 = basicConv(b, "branch7x7_1", x, c7, 1);
    b7 = basicConv(b, "branch7x7_2", b7, c7, k1x7, s1, p1x7);
    b7 = basicConv(b, "branch7x7_3", b7, 192, k7x1, s1, p7x1);
    int d = basicConv(b, "branch7x7dbl_1", x, c7, 1);
    d = basicConv(b, "branch7x7dbl_2", d, c7, k7x1, s1, p7x1);
    d = basicConv(b, "branch7x7dbl_3", d, c7, k1x7, s1, p1x7);
    d = basicConv(b, "branch7x7dbl_4", d, c7, k7x1, s1, p7x1);
    d = basicConv(b, "branch7x7dbl_5", d, 192, k1x7, s1, p1x7);
    return b.concat({b1, b7, d, poolBranch(b, x, 192)}, 1);
}

int inceptionD(ModelBuilder& b, int x) {
    int b3 = basicConv(b, "branch3x3_2", basicConv(b, "branch3x3_1", x, 192, 1), 320, 3, 2);
    int b7 = basicConv(b, "branch7x7x3_1", x, 192, 1);
    b7 = basicConv(b, "branch7x7x3_2", b7, 192, {1, 7}, {1, 1}, {0, 3});
    b7 = basicConv(b, "branch7x7x3_3", b7, 192, {7, 1}, {1, 1}, {3, 0});
    b7 = basicConv(b, "branch7x7x3_4", b7, 192, 3, 2);
    return b.concat({b3, b7, b.maxPool2d(x, 3, 2)}, 1);
}

int inceptionE(ModelBuilder& b, int x) {
    const std::vector<int64_t> k1x3{1, 3}, k3x1{3, 1}, p1x3{0, 1}, p3x1{1, 0}, s1{1, 1};
    int b1 = basicConv(b, "branch1x1", x, 320, 1);
    int b3 = basicConv(b, "branch3x3_1", x, 384, 1);
    b3 = b.concat(
        {basicConv(b, "branch3x3_2a", b3, 384, k1x3, s1, p1x3), basicConv(b, "branch3x3_2b", b3, 384, k3x1, s1, p3x1)},
        1);
    int d = basicConv(b, "branch3x3dbl_1", x, 448, 1);
    d = basicConv(b, "branch3x3dbl_2", d, 384, 3, 1, 1);
    d = b.concat({basicConv(b, "branch3x3dbl_3a", d, 384, k1x3, s1, p1x3),
                  basicConv(b, "branch3x3dbl_3b", d, 384, k3x1, s1, p3x1)},
                 1);
    return b.concat({b1, b3, d, poolBranch(b, x, 192)}, 1);
}

// InceptionAux on the 17x17 Mixed_6e output: pool 5/3, 1x1 conv, 5x5 conv, global pool, fc.
int inceptionAux(ModelBuilder& b, int x, int64_t classes) {
    x = b.avgPool2d(x, 5, 3);
    x = basicConv(b, "conv0", x, 128, 1);
    x = basicConv(b, "conv1", x, 768, 5);
    x = b.flatten(b.adaptiveAvgPool2d(x, 1, 1), 1);
    return b.linear("fc", x, classes);
}

}  // namespace

Graph buildInceptionV3(const ZooArgs& a) {
    // torchvision documents 75x75 as the smallest input; with the auxiliary classifier the
    // 5x5 convolution needs a larger 17x17 stage, which the shape check reports.
    const int64_t image = a.integer("image", 75, 4096);
    const int64_t classes = a.integer("classes", 1, 1'000'000);
    const bool aux = a.integer("aux", 0, 1) == 1;
    ModelBuilder b(a.model());
    int x = b.input("image", {Dim::batch(), 3, image, image});
    x = basicConv(b, "Conv2d_1a_3x3", x, 32, 3, 2);
    x = basicConv(b, "Conv2d_2a_3x3", x, 32, 3);
    x = basicConv(b, "Conv2d_2b_3x3", x, 64, 3, 1, 1);
    x = b.maxPool2d(x, 3, 2, 0, false, "maxpool1");
    x = basicConv(b, "Conv2d_3b_1x1", x, 80, 1);
    x = basicConv(b, "Conv2d_4a_3x3", x, 192, 3);
    x = b.maxPool2d(x, 3, 2, 0, false, "maxpool2");
    const std::pair<const char*, int64_t> mixedA[] = {{"Mixed_5b", 32}, {"Mixed_5c", 64}, {"Mixed_5d", 64}};
    for (const auto& [name, poolFeatures] : mixedA) {
        auto s = b.scope(name);
        x = inceptionA(b, x, poolFeatures);
    }
    {
        auto s = b.scope("Mixed_6a");
        x = inceptionB(b, x);
    }
    const std::pair<const char*, int64_t> mixedC[] = {
        {"Mixed_6b", 128}, {"Mixed_6c", 160}, {"Mixed_6d", 160}, {"Mixed_6e", 192}};
    for (const auto& [name, c7] : mixedC) {
        auto s = b.scope(name);
        x = inceptionC(b, x, c7);
    }
    std::vector<int> outputs;
    int auxLogits = -1;
    if (aux) {
        auto s = b.scope("AuxLogits");
        auxLogits = inceptionAux(b, x, classes);
    }
    {
        auto s = b.scope("Mixed_7a");
        x = inceptionD(b, x);
    }
    for (const char* name : {"Mixed_7b", "Mixed_7c"}) {
        auto s = b.scope(name);
        x = inceptionE(b, x);
    }
    x = b.adaptiveAvgPool2d(x, 1, 1, "avgpool");
    x = b.flatten(b.dropout("dropout", x, 0.5), 1);
    x = b.linear("fc", x, classes);
    outputs.push_back(x);
    if (aux) outputs.push_back(auxLogits);
    return b.finish(outputs);
}

}  // namespace ts::zoo
