#pragma once
// Internal to the built-in zoo: option parsing and the per-family model builders.
// Every builder mirrors a reference implementation module by module (torchvision,
// Hugging Face transformers, the PyTorch examples, NVIDIA's GNMT), so that parameter
// names, counts and module paths match what a user sees in PyTorch.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trainscope/core/builder.h"
#include "trainscope/core/model_loader.h"

namespace ts::zoo {

// The options of one zoo model, checked against its ZooEntry.
class ZooArgs {
public:
    ZooArgs(const ZooEntry& entry, const std::map<std::string, std::string>& params);

    // Integer option `key` (default from the entry) within [min, max]; throws ModelError otherwise.
    int64_t integer(const std::string& key, int64_t min, int64_t max) const;
    // Option `key` (default from the entry), one of `allowed`; throws ModelError otherwise.
    std::string choice(const std::string& key, const std::vector<std::string>& allowed) const;
    const std::string& model() const { return entry_.name; }
    std::string source() const { return "zoo:" + entry_.name; }
    [[noreturn]] void fail(const std::string& problem) const;

private:
    const ZooEntry& entry_;
    std::map<std::string, std::string> params_;
};

// ---- shared pieces ----
// A tensor the reference builds inside forward() (position ids, causal masks): its shape
// matters, its values do not. Symbolic dims allowed.
int forwardConstant(ModelBuilder& b, const std::string& name, Shape shape, DType dtype);
// Splits the last axis into equal parts (ONNX Split with the sizes as an input, opset 13).
std::vector<int> splitLastAxis(ModelBuilder& b, int x, int64_t parts, int64_t partSize, const std::string& module = "");
// x[..., start:end] on `axis` (ONNX Slice).
int sliceAxis(ModelBuilder& b, int x, int64_t axis, int64_t start, int64_t end, const std::string& module = "");
// Multi-head scaled dot-product attention on projected q, k, v of shape [N, T, heads*headDim]:
// reshape into heads, softmax(q k^T / sqrt(d) + mask) v, dropout on the probabilities, merge
// heads. `mask` (additive, broadcastable to [N, heads, T, S]) may be -1. Ops go into the
// current module; `dropoutModule` names the attention dropout's module.
int scaledDotProductAttention(ModelBuilder& b, int q, int k, int v, int64_t heads, int mask, double dropout,
                              const std::string& dropoutModule);
// The attention of Hugging Face's models as transformers runs it by default (attn_implementation
// "sdpa"): one ScaledDotProductAttention operator with PyTorch's `backend` ("flash": no mask, so
// `mask` is dropped and `causal` kept; "efficient": the additive `mask`, or `causal`), or "math",
// transformers' "eager" attention: scaledDotProductAttention above, with `mask` (which then
// must hold the causal mask itself). Same shapes in and out as scaledDotProductAttention.
int attentionOf(ModelBuilder& b, const std::string& backend, int q, int k, int v, int64_t heads, int mask, bool causal,
                double dropout, const std::string& dropoutModule);
// The `attention` option of the transformers that take it; `def` is transformers' default backend.
ZooParam attentionParam(const char* def);
inline const std::vector<std::string> kAttentionBackends{"flash", "efficient", "math"};

// The input image [N, 3, image, image] of the vision models.
int imageInput(ModelBuilder& b, int64_t image);  // zoo_vision.cpp
// torchvision Bottleneck (v1.5: the stride sits on the 3x3 convolution), expansion 4, in the
// current module: ResNet-50/101 and the SSD300 backbone.
int torchvisionBottleneck(ModelBuilder& b, int x, int64_t planes, int64_t stride);  // zoo_vision.cpp

// ---- families ----
Graph buildResNet(const ZooArgs& a, int depth);                   // zoo_vision.cpp
Graph buildVgg16(const ZooArgs& a);                               // zoo_vision.cpp
Graph buildMobileNetV2(const ZooArgs& a);                         // zoo_vision.cpp
Graph buildInceptionV3(const ZooArgs& a);                         // zoo_inception.cpp
Graph buildResNeXt101(const ZooArgs& a, bool squeezeExcitation);  // zoo_convnets.cpp
Graph buildEfficientNet(const ZooArgs& a, int variant);           // zoo_efficientnet.cpp, B0 or B4
Graph buildSsd300(const ZooArgs& a);                              // zoo_detection.cpp
Graph buildBert(const ZooArgs& a, bool large);                    // zoo_transformers.cpp
Graph buildGpt2(const ZooArgs& a, bool large);                    // zoo_transformers.cpp
Graph buildTransformerBig(const ZooArgs& a);                      // zoo_seq2seq.cpp
Graph buildGnmt(const ZooArgs& a);                                // zoo_seq2seq.cpp
Graph buildBartLarge(const ZooArgs& a);                           // zoo_seq2seq.cpp
Graph buildDcgan(const ZooArgs& a);                               // zoo_gan.cpp

// NVIDIA DeepLearningExamples language and recommendation models.
Graph buildTransformerXl(const ZooArgs& a, bool large);  // zoo_transformer_xl.cpp
Graph buildNcf(const ZooArgs& a);                        // zoo_ncf.cpp
Graph buildNnUNet(const ZooArgs& a);                     // zoo_unet.cpp, MONAI DynUNet

}  // namespace ts::zoo
