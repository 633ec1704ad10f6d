// nnU-Net as NVIDIA DeepLearningExamples benchmarks it (PyTorch/Segmentation/nnUNet at 4da7bf28:
// nnunet/nn_unet.py builds MONAI's DynUNet, scripts/benchmark.py trains it on BraTS, MSD Task01):
//
//   4 MRI modalities in, 4 label classes out; patch 192 x 160 slices (2D) or 128^3 (3D), spacing 1;
//   six levels, 3x3(x3) kernels, stride 1 then 2 (get_unet_params at min_fmap 4, depth 5);
//   filters min(2^(5+i), 512 in 2D, 320 in 3D): [32, 64, 128, 256, 512|320, 512|320];
//   input_block, downsamples.0-3, bottleneck: UnetBasicBlock (conv1 with the level's stride, no bias,
//     InstanceNorm affine, LeakyReLU 0.01, conv2, InstanceNorm, LeakyReLU);
//   upsamples.0-4: UnetUpBlock (transp_conv kernel = stride = 2 with a bias, cat(up, skip), then a
//     UnetBasicBlock of 2c -> c); output_block: 1x1(x1) conv with a bias; no deep supervision (the
//     benchmark does not pass --deep_supervision);
//   loss: MONAI DiceCELoss(softmax, to_onehot_y, include_background=False, batch=True): the
//     cross entropy over every voxel plus the soft Dice of the softmax against the one-hot labels.
//
// Reference counts (MONAI 1.0.0's DynUNet, the version DLE's Dockerfile pins, built with DLE's
// arguments; tests/unit/test_zoo.cpp): 2D 20,613,092, 3D 31,192,868.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

constexpr int64_t kModalities = 4, kClasses = 4, kLevels = 6;
constexpr double kSlope = 0.01;

struct UNetShape {
    int dims;                    // 2 or 3 spatial dimensions
    std::vector<int64_t> patch;  // configs.py: "01_2d" [192, 160], "01_3d" [128, 128, 128]
    std::vector<int64_t> filters;
    bool nvfuserNorm = false;  // --norm instance_nvfuser: apex's InstanceNorm3dNVFuser
};

std::vector<int64_t> repeated(const UNetShape& u, int64_t v) {
    return std::vector<int64_t>(size_t(u.dims), v);
}

// MONAI's get_conv_layer: Conv{2,3}d, padding (k - s + 1) / 2, without a bias unless asked.
int conv(ModelBuilder& b, const UNetShape& u, const std::string& module, int x, int64_t out, int64_t kernel,
         int64_t stride, bool bias) {
    const int64_t in = b.graph().values.at(size_t(x)).shape[1].constant();
    Shape w{out, in};
    for (int d = 0; d < u.dims; ++d) w.push_back(Dim(kernel));
    std::vector<int> ins{x, b.parameter(module, "weight", w)};
    if (bias) ins.push_back(b.parameter(module, "bias", {out}));
    const int64_t pad = (kernel - stride + 1) / 2;
    return b.op1("Conv", ins,
                 {{"kernel_shape", repeated(u, kernel)},
                  {"strides", repeated(u, stride)},
                  {"pads", std::vector<int64_t>(size_t(2 * u.dims), pad)},
                  {"dilations", repeated(u, 1)},
                  {"group", int64_t{1}}},
                 module);
}

// nn.InstanceNorm (affine), or apex's InstanceNorm3dNVFuser, whose kernels read channels-last tensors as
// they are ("keeps_layout": 1; PyTorch's copies them to channels-first and back).
int instanceNorm(ModelBuilder& b, const UNetShape& u, const std::string& module, int x) {
    const int64_t channels = b.graph().values.at(size_t(x)).shape[1].constant();
    std::map<std::string, Attribute> attrs{{"epsilon", 1e-5}};
    if (u.nvfuserNorm) attrs["keeps_layout"] = int64_t{1};
    return b.op1("InstanceNormalization",
                 {x, b.parameter(module, "weight", {channels}), b.parameter(module, "bias", {channels})}, attrs,
                 module);
}

// UnetBasicBlock: conv1 (the level's stride), norm1, lrelu, conv2, norm2, lrelu.
int basicBlock(ModelBuilder& b, const UNetShape& u, const std::string& module, int x, int64_t out, int64_t stride) {
    auto s = b.scope(module);
    x = b.leakyRelu(instanceNorm(b, u, "norm1", conv(b, u, "conv1.conv", x, out, 3, stride, false)), kSlope, "lrelu");
    return b.leakyRelu(instanceNorm(b, u, "norm2", conv(b, u, "conv2.conv", x, out, 3, 1, false)), kSlope, "lrelu");
}

// UnetUpBlock: transp_conv (kernel = stride = 2, with a bias), cat((up, skip), dim=1), conv_block.
int upBlock(ModelBuilder& b, const UNetShape& u, const std::string& module, int x, int skip, int64_t out) {
    auto s = b.scope(module);
    const int64_t in = b.graph().values.at(size_t(x)).shape[1].constant();
    Shape w{in, out};  // [in, out, k...], as PyTorch and ONNX store a transposed convolution's weight
    for (int d = 0; d < u.dims; ++d) w.push_back(Dim(2));
    int up = b.op1("ConvTranspose",
                   {x, b.parameter("transp_conv.conv", "weight", w), b.parameter("transp_conv.conv", "bias", {out})},
                   {{"kernel_shape", repeated(u, 2)},
                    {"strides", repeated(u, 2)},
                    {"pads", std::vector<int64_t>(size_t(2 * u.dims), 0)},
                    {"output_padding", repeated(u, 0)},
                    {"group", int64_t{1}}},
                   "transp_conv.conv");
    return basicBlock(b, u, "conv_block", b.concat({up, skip}, 1), out, 1);
}

// DiceCELoss on logits [N, C, spatial...] and labels [N, spatial...]: nn.CrossEntropyLoss over every
// voxel, plus 1 - the soft Dice of softmax(logits) against the one-hot labels, summed over the batch and
// the voxels (batch=True) per class, the background dropped (a slice of the classes), averaged.
int diceCeLoss(ModelBuilder& b, const UNetShape& u, int logits, int labels, int oneHot) {
    auto s = b.scope("loss");
    int ce = b.op1("SoftmaxCrossEntropyLoss", {logits, labels}, {{"reduction", std::string("mean")}}, "ce");
    int probs = sliceAxis(b, b.softmax(logits, 1, "dice"), 1, 1, kClasses, "dice");
    int target = sliceAxis(b, oneHot, 1, 1, kClasses, "dice");
    std::vector<int64_t> axes{0};
    for (int d = 0; d < u.dims; ++d) axes.push_back(2 + d);
    const std::map<std::string, Attribute> sum{{"axes", axes}, {"keepdims", int64_t{0}}};
    int intersection = b.op1("ReduceSum", {b.mul(probs, target, "dice")}, sum, "dice");
    int predicted = b.op1("ReduceSum", {probs}, sum, "dice");
    int ground = b.op1("ReduceSum", {target}, sum, "dice");
    // 1 - (2 I + smooth) / (P + G + smooth), averaged over the classes: a few ops on [C - 1] values (the
    // constant 1 and the smoothing left out: the same kernels and gradients).
    int dice = b.op1("Div", {b.scale(intersection, 2.0, "dice"), b.add(predicted, ground, "dice")}, {}, "dice");
    int diceLoss = b.op1("ReduceMean", {dice}, {{"keepdims", int64_t{0}}}, "dice");
    return b.op1("Sub", {ce, diceLoss});
}

}  // namespace

Graph buildNnUNet(const ZooArgs& a) {
    const int dims = a.choice("dim", {"2", "3"}) == "2" ? 2 : 3;
    UNetShape u{dims, dims == 2 ? std::vector<int64_t>{192, 160} : std::vector<int64_t>{128, 128, 128}, {}};
    // Another patch: every side the same, halved five times to a bottleneck of more than one voxel a
    // side (InstanceNorm in training needs more than one spatial element).
    if (const int64_t side = a.integer("patch", 0, 4096); side != 0) {
        if (side < 64 || side % 32 != 0)
            a.fail("patch must be 0 or a multiple of 32 from 64, got " + std::to_string(side));
        u.patch.assign(size_t(dims), side);
    }
    // DLE's 3D AMP benchmark passes --norm instance_nvfuser with --layout NDHWC (scripts/benchmark.py).
    u.nvfuserNorm = a.choice("norm", {"instance", "instance_nvfuser"}) == "instance_nvfuser";
    if (u.nvfuserNorm && dims != 3) a.fail("norm=instance_nvfuser is apex's InstanceNorm3dNVFuser: 3D only");
    for (int64_t i = 0; i < kLevels; ++i)
        u.filters.push_back(std::min<int64_t>(int64_t(32) << i, dims == 2 ? 512 : 320));

    ModelBuilder b(a.model());
    Shape image{Dim::batch(), kModalities}, voxels{Dim::batch()}, classes{Dim::batch(), kClasses};
    for (int64_t p : u.patch) image.push_back(Dim(p)), voxels.push_back(Dim(p)), classes.push_back(Dim(p));
    int x = b.input("image", image);
    int labels = b.input("label", voxels, DType::Int64);
    int oneHot = b.input("label_one_hot", classes);  // to_onehot_y: built from the labels, no gradient

    std::vector<int> skips;
    x = basicBlock(b, u, "input_block", x, u.filters[0], 1);
    skips.push_back(x);
    for (int64_t i = 1; i < kLevels - 1; ++i) {
        x = basicBlock(b, u, "downsamples." + std::to_string(i - 1), x, u.filters[size_t(i)], 2);
        skips.push_back(x);
    }
    x = basicBlock(b, u, "bottleneck", x, u.filters[kLevels - 1], 2);
    for (int64_t i = 0; i < kLevels - 1; ++i)
        x = upBlock(b, u, "upsamples." + std::to_string(i), x, skips[skips.size() - 1 - size_t(i)],
                    u.filters[size_t(kLevels - 2 - i)]);
    int logits;
    {
        auto s = b.scope("output_block");
        logits = conv(b, u, "conv.conv", x, kClasses, 1, 1, true);
    }
    return b.finish({diceCeLoss(b, u, logits, labels, oneHot), logits});
}

}  // namespace ts::zoo
