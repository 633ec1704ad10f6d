// ModelBuilder: PyTorch-style layers expressed as ONNX operators, shapes inferred as they are added.
#include "trainscope/core/builder.h"

#include <cmath>

#include "trainscope/core/errors.h"
#include "trainscope/core/ops.h"

namespace ts {
namespace {

// Concrete size of dimension `axis` of a value, for layers whose parameter shapes depend on it.
int64_t concreteDim(const Graph& g, int value, int64_t axis, const char* layer) {
    const Shape& s = g.values.at(value).shape;
    int64_t rank = static_cast<int64_t>(s.size());
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
        throw ShapeError(std::string(layer) + " needs an input of rank > " +
                         std::to_string(axis < 0 ? -axis - 1 : axis) + ", got " + shapeStr(s));
    if (!s[a].isConstant())
        throw ShapeError(std::string(layer) + " needs a fixed size at dimension " + std::to_string(a) +
                         " of its input " + shapeStr(s));
    return s[a].constant();
}

void expectRank(const Graph& g, int value, size_t rank, const char* layer) {
    const Shape& s = g.values.at(value).shape;
    if (s.size() != rank)
        throw ShapeError(std::string(layer) + " expects a rank-" + std::to_string(rank) + " input, got " + shapeStr(s));
}

void expectPositive(int64_t v, const char* what) {
    if (v <= 0 || v > limits::kMaxDimValue)
        throw ShapeError(std::string(what) + " must be a positive size, got " + std::to_string(v));
}

}  // namespace

ModelBuilder::ModelBuilder(std::string name, SymbolDefaults defaults) {
    g_.name = std::move(name);
    g_.defaults = defaults;
}

ModelBuilder::ScopeGuard::~ScopeGuard() {
    if (!b_) return;
    b_->path_.resize(b_->pathStack_.back());
    b_->pathStack_.pop_back();
}

ModelBuilder::ScopeGuard ModelBuilder::scope(const std::string& child) {
    if (pathStack_.size() >= static_cast<size_t>(limits::kMaxNesting))
        throw ShapeError("modules are nested too deeply");
    pathStack_.push_back(path_.size());
    path_ = childPath(child);
    return ScopeGuard(*this);
}

std::string ModelBuilder::childPath(const std::string& child) const {
    if (child.empty()) return path_;
    if (path_.empty()) return child;
    return path_ + "." + child;
}

int ModelBuilder::input(const std::string& name, Shape shape, DType dtype) {
    Value v;
    v.name = name;
    v.dtype = dtype;
    v.shape = std::move(shape);
    v.kind = ValueKind::Input;
    int idx = g_.addValue(std::move(v));
    g_.inputs.push_back(idx);
    return idx;
}

// Calling a layer whose parameter already exists reuses it, exactly like calling the same
// nn.Module twice (a GAN's discriminator on real and fake images).
int ModelBuilder::parameter(const std::string& module, const std::string& leaf, Shape shape) {
    std::string name = childPath(module);
    name = name.empty() ? leaf : name + "." + leaf;
    if (int existing = g_.findValue(name); existing >= 0) {
        const Value& v = g_.values[existing];
        if (v.kind != ValueKind::Parameter || v.shape != shape)
            throw ShapeError("parameter '" + name + "' already exists with shape " + shapeStr(v.shape) + ", not " +
                             shapeStr(shape));
        return existing;
    }
    for (const Dim& d : shape)
        if (!d.isConstant() || d.constant() <= 0 || d.constant() > limits::kMaxDimValue)
            throw ShapeError("parameter '" + name + "' has an invalid shape " + shapeStr(shape));
    if (numel(shape).eval(1, 1) > limits::kMaxTensorElements)
        throw ShapeError("parameter '" + name + "' of shape " + shapeStr(shape) + " is absurdly large");
    Value v;
    v.name = name;
    v.shape = std::move(shape);
    v.kind = ValueKind::Parameter;
    return g_.addValue(std::move(v));
}

int ModelBuilder::buffer(const std::string& module, const std::string& leaf, Shape shape) {
    std::string name = childPath(module);
    name = name.empty() ? leaf : name + "." + leaf;
    if (int existing = g_.findValue(name); existing >= 0) {
        const Value& v = g_.values[existing];
        if (v.kind != ValueKind::Buffer || v.shape != shape)
            throw ShapeError("buffer '" + name + "' already exists with another shape or kind");
        return existing;
    }
    Value v;
    v.name = name;
    v.shape = std::move(shape);
    v.kind = ValueKind::Buffer;
    return g_.addValue(std::move(v));
}

// An empty shape means: a scalar for one element, a 1-D tensor otherwise.
int ModelBuilder::constantInts(const std::vector<int64_t>& data, Shape shape) {
    if (shape.empty() && data.size() != 1) shape = {Dim(static_cast<int64_t>(data.size()))};
    if (numel(shape) != Dim(static_cast<int64_t>(data.size())))
        throw ShapeError("constant of shape " + shapeStr(shape) + " cannot hold " + std::to_string(data.size()) +
                         " values");
    Value v;
    v.name = "constant:" + std::to_string(g_.values.size());
    v.dtype = DType::Int64;
    v.shape = std::move(shape);
    v.kind = ValueKind::Constant;
    v.intData = std::vector<Dim>(data.begin(), data.end());
    return g_.addValue(std::move(v));
}

int ModelBuilder::constantFloat(double value) {
    Value v;
    v.name = "constant:" + std::to_string(g_.values.size());
    v.dtype = DType::Float32;
    v.kind = ValueKind::Constant;
    v.floatData = std::vector<double>{value};
    return g_.addValue(std::move(v));
}

std::string ModelBuilder::uniqueOpName(const std::string& module, const std::string& type) {
    const std::string base = module.empty() ? type : module + "/" + type;
    std::string name = base;
    // Repeats get _1, _2...; a suffixed name is reserved too, so that a module whose own name
    // ends in "_1" cannot collide with it.
    for (int count = opNameCounts_[base]++; count > 0; count = opNameCounts_[base]++) {
        name = base + "_" + std::to_string(count);
        if (!opNameCounts_.count(name)) break;
    }
    if (name != base) opNameCounts_[name] = 1;
    return name;
}

std::vector<int> ModelBuilder::op(const std::string& type, const std::vector<int>& inputs,
                                  std::map<std::string, Attribute> attrs, int numOutputs, const std::string& module) {
    if (numOutputs < 1 || numOutputs > 64) throw ShapeError(type + ": bad number of outputs");
    for (int in : inputs)
        if (in < -1 || in >= static_cast<int>(g_.values.size())) throw ShapeError(type + ": input refers to no value");
    Operation o;
    o.type = type;
    o.modulePath = childPath(module);
    o.name = uniqueOpName(o.modulePath, type);
    o.inputs = inputs;
    o.attrs = std::move(attrs);
    for (int i = 0; i < numOutputs; ++i) {
        Value v;
        v.name = o.name + ":out" + std::to_string(i);
        o.outputs.push_back(g_.addValue(std::move(v)));
    }
    std::vector<int> outs = o.outputs;
    int idx = g_.addOperation(std::move(o));
    inferShapes(g_, idx);
    return outs;
}

// ---- layers ----

int ModelBuilder::conv2d(const std::string& module, int x, int64_t outChannels, int64_t kernel, int64_t stride,
                         int64_t padding, int64_t groups, bool bias, int64_t dilation) {
    expectRank(g_, x, 4, "Conv2d");
    expectPositive(outChannels, "Conv2d out_channels");
    expectPositive(kernel, "Conv2d kernel_size");
    expectPositive(groups, "Conv2d groups");
    int64_t inChannels = concreteDim(g_, x, 1, "Conv2d");
    if (inChannels % groups != 0 || outChannels % groups != 0)
        throw ShapeError("Conv2d channels " + std::to_string(inChannels) + " -> " + std::to_string(outChannels) +
                         " are not divisible by groups=" + std::to_string(groups));
    std::vector<int> ins{x, parameter(module, "weight", {outChannels, inChannels / groups, kernel, kernel})};
    if (bias) ins.push_back(parameter(module, "bias", {outChannels}));
    return op1("Conv", ins,
               {{"kernel_shape", std::vector<int64_t>{kernel, kernel}},
                {"strides", std::vector<int64_t>{stride, stride}},
                {"pads", std::vector<int64_t>{padding, padding, padding, padding}},
                {"dilations", std::vector<int64_t>{dilation, dilation}},
                {"group", groups}},
               module);
}

int ModelBuilder::conv2d(const std::string& module, int x, int64_t outChannels, std::vector<int64_t> kernel,
                         std::vector<int64_t> stride, std::vector<int64_t> padding, int64_t groups, bool bias) {
    if (kernel.size() != 2 || stride.size() != 2 || padding.size() != 2)
        throw ShapeError("Conv2d kernel_size, stride and padding need two values each");
    expectRank(g_, x, 4, "Conv2d");
    expectPositive(outChannels, "Conv2d out_channels");
    expectPositive(kernel[0], "Conv2d kernel_size");
    expectPositive(kernel[1], "Conv2d kernel_size");
    expectPositive(groups, "Conv2d groups");
    int64_t inChannels = concreteDim(g_, x, 1, "Conv2d");
    if (inChannels % groups != 0 || outChannels % groups != 0)
        throw ShapeError("Conv2d channels " + std::to_string(inChannels) + " -> " + std::to_string(outChannels) +
                         " are not divisible by groups=" + std::to_string(groups));
    std::vector<int> ins{x, parameter(module, "weight", {outChannels, inChannels / groups, kernel[0], kernel[1]})};
    if (bias) ins.push_back(parameter(module, "bias", {outChannels}));
    return op1("Conv", ins,
               {{"kernel_shape", kernel},
                {"strides", stride},
                {"pads", std::vector<int64_t>{padding[0], padding[1], padding[0], padding[1]}},
                {"dilations", std::vector<int64_t>{1, 1}},
                {"group", groups}},
               module);
}

int ModelBuilder::convTranspose2d(const std::string& module, int x, int64_t outChannels, int64_t kernel, int64_t stride,
                                  int64_t padding, int64_t outputPadding, bool bias) {
    expectRank(g_, x, 4, "ConvTranspose2d");
    expectPositive(outChannels, "ConvTranspose2d out_channels");
    expectPositive(kernel, "ConvTranspose2d kernel_size");
    int64_t inChannels = concreteDim(g_, x, 1, "ConvTranspose2d");
    // PyTorch stores a transposed convolution's weight as [in, out/groups, kh, kw], as ONNX does.
    std::vector<int> ins{x, parameter(module, "weight", {inChannels, outChannels, kernel, kernel})};
    if (bias) ins.push_back(parameter(module, "bias", {outChannels}));
    return op1("ConvTranspose", ins,
               {{"kernel_shape", std::vector<int64_t>{kernel, kernel}},
                {"strides", std::vector<int64_t>{stride, stride}},
                {"pads", std::vector<int64_t>{padding, padding, padding, padding}},
                {"output_padding", std::vector<int64_t>{outputPadding, outputPadding}},
                {"group", int64_t{1}}},
               module);
}

int ModelBuilder::linear(const std::string& module, int x, int64_t outFeatures, bool bias) {
    expectPositive(outFeatures, "Linear out_features");
    const size_t rank = g_.values.at(x).shape.size();
    int64_t inFeatures = concreteDim(g_, x, -1, "Linear");
    if (rank == 2) {
        // Gemm with the PyTorch layout [out, in] (transB), as the ONNX exporter writes nn.Linear.
        std::vector<int> ins{x, parameter(module, "weight", {outFeatures, inFeatures})};
        if (bias) ins.push_back(parameter(module, "bias", {outFeatures}));
        return op1("Gemm", ins, {{"transB", int64_t{1}}}, module);
    }
    // Higher ranks: MatMul with the weight stored [in, out] (same element count), then Add of the bias.
    int y = matmul(x, parameter(module, "weight", {inFeatures, outFeatures}), module);
    if (bias) y = add(y, parameter(module, "bias", {outFeatures}), module);
    return y;
}

int ModelBuilder::batchNorm(const std::string& module, int x, double eps) {
    int64_t channels = concreteDim(g_, x, 1, "BatchNorm");
    int scale = parameter(module, "weight", {channels});
    int shift = parameter(module, "bias", {channels});
    int mean = buffer(module, "running_mean", {channels});
    int var = buffer(module, "running_var", {channels});
    // ONNX momentum weighs the old running value: 1 - PyTorch's 0.1.
    return op1("BatchNormalization", {x, scale, shift, mean, var},
               {{"epsilon", eps}, {"momentum", 0.9}, {"training_mode", int64_t{1}}}, module);
}

int ModelBuilder::layerNorm(const std::string& module, int x, double eps) {
    int64_t features = concreteDim(g_, x, -1, "LayerNorm");
    int scale = parameter(module, "weight", {features});
    int shift = parameter(module, "bias", {features});
    return op1("LayerNormalization", {x, scale, shift}, {{"axis", int64_t{-1}}, {"epsilon", eps}}, module);
}

int ModelBuilder::embedding(const std::string& module, int ids, int64_t numEmbeddings, int64_t dim) {
    expectPositive(numEmbeddings, "Embedding num_embeddings");
    expectPositive(dim, "Embedding embedding_dim");
    return embeddingWithWeight(module, ids, parameter(module, "weight", {numEmbeddings, dim}));
}

int ModelBuilder::embeddingWithWeight(const std::string& module, int ids, int weight) {
    DType t = g_.values.at(ids).dtype;
    if (t != DType::Int64 && t != DType::Int32)
        throw ShapeError("Embedding needs integer token ids, got " + std::string(dtypeName(t)));
    return op1("Gather", {weight, ids}, {{"axis", int64_t{0}}}, module);
}

int ModelBuilder::dropout(const std::string& module, int x, double p) {
    if (!(p >= 0 && p < 1)) throw ShapeError("Dropout probability must be in [0, 1), got " + std::to_string(p));
    return op1("Dropout", {x}, {{"ratio", p}, {"training_mode", int64_t{1}}}, module);
}

int ModelBuilder::lstm(const std::string& module, int x, int64_t hidden, int64_t layers, bool bidirectional) {
    return recurrent("LSTM", module, x, hidden, layers, bidirectional);
}

int ModelBuilder::gru(const std::string& module, int x, int64_t hidden, int64_t layers, bool bidirectional) {
    return recurrent("GRU", module, x, hidden, layers, bidirectional);
}

// One ONNX LSTM/GRU per layer, as the PyTorch exporter writes a multi-layer nn.LSTM. ONNX packs
// both directions and both biases into W [dirs, gates*H, I], R [dirs, gates*H, H], B [dirs, 2*gates*H];
// these carry PyTorch's names of the forward tensors of that layer ("weight_ih_l0" covers
// weight_ih_l0 and weight_ih_l0_reverse, "bias_l0" covers bias_ih_l0 and bias_hh_l0 of both
// directions), so element counts equal nn.LSTM's exactly.
int ModelBuilder::recurrent(const std::string& kind, const std::string& module, int x, int64_t hidden, int64_t layers,
                            bool bidirectional) {
    expectRank(g_, x, 3, kind.c_str());
    expectPositive(hidden, (kind + " hidden_size").c_str());
    if (layers < 1 || layers > 1024) throw ShapeError(kind + " num_layers must be between 1 and 1024");
    const int64_t gates = kind == "LSTM" ? 4 : 3;
    const int64_t dirs = bidirectional ? 2 : 1;
    int y = x;
    for (int64_t l = 0; l < layers; ++l) {
        const std::string suffix = "_l" + std::to_string(l);
        int64_t inFeatures = concreteDim(g_, y, 2, kind.c_str());
        int w = parameter(module, "weight_ih" + suffix, {dirs, gates * hidden, inFeatures});
        int r = parameter(module, "weight_hh" + suffix, {dirs, gates * hidden, hidden});
        int b = parameter(module, "bias" + suffix, {dirs, 2 * gates * hidden});
        std::map<std::string, Attribute> attrs{{"hidden_size", hidden},
                                               {"direction", std::string(bidirectional ? "bidirectional" : "forward")}};
        if (kind == "GRU") attrs["linear_before_reset"] = int64_t{1};  // PyTorch's GRU formulation
        int seqOut = op1(kind, {y, w, r, b}, attrs, module);           // [seq, dirs, batch, H]
        int perm = transpose(seqOut, {0, 2, 1, 3}, module);            // [seq, batch, dirs, H]
        y = reshape(perm, {0, 0, dirs * hidden}, module);              // [seq, batch, dirs*H]
    }
    return y;
}

// ---- functional operations ----

int ModelBuilder::relu(int x, const std::string& module) {
    return op1("Relu", {x}, {}, module);
}
int ModelBuilder::gelu(int x, const std::string& module) {
    return op1("Gelu", {x}, {{"approximate", std::string("none")}}, module);
}
int ModelBuilder::tanh(int x, const std::string& module) {
    return op1("Tanh", {x}, {}, module);
}
int ModelBuilder::sigmoid(int x, const std::string& module) {
    return op1("Sigmoid", {x}, {}, module);
}
int ModelBuilder::silu(int x, const std::string& module) {
    return op1("Silu", {x}, {}, module);
}
int ModelBuilder::leakyRelu(int x, double slope, const std::string& module) {
    return op1("LeakyRelu", {x}, {{"alpha", slope}}, module);
}
int ModelBuilder::relu6(int x, const std::string& module) {
    return op1("Clip", {x, constantFloat(0.0), constantFloat(6.0)}, {}, module);
}
int ModelBuilder::softmax(int x, int64_t axis, const std::string& module) {
    return op1("Softmax", {x}, {{"axis", axis}}, module);
}

int ModelBuilder::maxPool2d(int x, int64_t kernel, int64_t stride, int64_t padding, bool ceilMode,
                            const std::string& module) {
    return op1("MaxPool", {x},
               {{"kernel_shape", std::vector<int64_t>{kernel, kernel}},
                {"strides", std::vector<int64_t>{stride, stride}},
                {"pads", std::vector<int64_t>{padding, padding, padding, padding}},
                {"ceil_mode", int64_t{ceilMode ? 1 : 0}}},
               module);
}

int ModelBuilder::avgPool2d(int x, int64_t kernel, int64_t stride, int64_t padding, bool ceilMode, bool countIncludePad,
                            const std::string& module) {
    return op1("AveragePool", {x},
               {{"kernel_shape", std::vector<int64_t>{kernel, kernel}},
                {"strides", std::vector<int64_t>{stride, stride}},
                {"pads", std::vector<int64_t>{padding, padding, padding, padding}},
                {"ceil_mode", int64_t{ceilMode ? 1 : 0}},
                {"count_include_pad", int64_t{countIncludePad ? 1 : 0}}},
               module);
}

// Adaptive pooling to 1x1 is GlobalAveragePool. Otherwise a fixed window: exact when the input
// divides evenly (what the ONNX exporter requires); for uneven sizes the window that yields
// the requested output, whose cost matches PyTorch's variable windows closely.
int ModelBuilder::adaptiveAvgPool2d(int x, int64_t outH, int64_t outW, const std::string& module) {
    expectRank(g_, x, 4, "AdaptiveAvgPool2d");
    expectPositive(outH, "AdaptiveAvgPool2d output height");
    expectPositive(outW, "AdaptiveAvgPool2d output width");
    if (outH == 1 && outW == 1) return op1("GlobalAveragePool", {x}, {}, module);
    int64_t inH = concreteDim(g_, x, 2, "AdaptiveAvgPool2d"), inW = concreteDim(g_, x, 3, "AdaptiveAvgPool2d");
    if (inH < outH || inW < outW)
        throw ShapeError("AdaptiveAvgPool2d to " + std::to_string(outH) + "x" + std::to_string(outW) +
                         " needs an input at least that large, got " + shapeStr(g_.values[x].shape));
    int64_t strideH = inH / outH, strideW = inW / outW;
    int64_t kernelH = inH - (outH - 1) * strideH, kernelW = inW - (outW - 1) * strideW;
    return op1("AveragePool", {x},
               {{"kernel_shape", std::vector<int64_t>{kernelH, kernelW}},
                {"strides", std::vector<int64_t>{strideH, strideW}},
                {"pads", std::vector<int64_t>{0, 0, 0, 0}}},
               module);
}

int ModelBuilder::flatten(int x, int64_t axis, const std::string& module) {
    return op1("Flatten", {x}, {{"axis", axis}}, module);
}
int ModelBuilder::add(int a, int b, const std::string& module) {
    return op1("Add", {a, b}, {}, module);
}
int ModelBuilder::mul(int a, int b, const std::string& module) {
    return op1("Mul", {a, b}, {}, module);
}
int ModelBuilder::matmul(int a, int b, const std::string& module) {
    return op1("MatMul", {a, b}, {}, module);
}
int ModelBuilder::transpose(int x, std::vector<int64_t> perm, const std::string& module) {
    return op1("Transpose", {x}, {{"perm", std::move(perm)}}, module);
}

int ModelBuilder::reshape(int x, const Shape& target, const std::string& module) {
    if (target.size() > static_cast<size_t>(limits::kMaxRank))
        throw ShapeError("reshape target has too many dimensions");
    Value v;
    v.name = "constant:" + std::to_string(g_.values.size());
    v.dtype = DType::Int64;
    v.shape = {Dim(static_cast<int64_t>(target.size()))};
    v.kind = ValueKind::Constant;
    v.intData = target;  // may be symbolic (N, S) or hold ONNX's 0 (copy) and -1 (infer)
    int shape = g_.addValue(std::move(v));
    return op1("Reshape", {x, shape}, {}, module);
}

int ModelBuilder::concat(const std::vector<int>& xs, int64_t axis, const std::string& module) {
    if (xs.empty()) throw ShapeError("Concat needs at least one input");
    return op1("Concat", xs, {{"axis", axis}}, module);
}

int ModelBuilder::scale(int x, double factor, const std::string& module) {
    return op1("Mul", {x, constantFloat(factor)}, {}, module);
}

Graph ModelBuilder::finish(const std::vector<int>& outputs) {
    for (int o : outputs)
        if (o < 0 || o >= static_cast<int>(g_.values.size())) throw ShapeError("model output refers to no value");
    g_.outputs = outputs;
    g_.validate();
    return std::move(g_);
}

}  // namespace ts
