#pragma once
// Builds a Graph the way a PyTorch model definition reads: nested modules, layers
// that create their own parameters, shapes inferred as each operation is added.
// The built-in zoo and the hand-written JSON format both go through it.
#include <string>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts {

class ModelBuilder {
public:
    explicit ModelBuilder(std::string name, SymbolDefaults defaults = {});

    // Enters a child module for the lifetime of the returned guard:
    //   { auto s = b.scope("layer1"); { auto t = b.scope("0"); ... } }  -> "layer1.0"
    class ScopeGuard {
    public:
        explicit ScopeGuard(ModelBuilder& b) : b_(&b) {}
        ScopeGuard(ScopeGuard&& o) noexcept : b_(o.b_) { o.b_ = nullptr; }
        ScopeGuard(const ScopeGuard&) = delete;
        ScopeGuard& operator=(const ScopeGuard&) = delete;
        ~ScopeGuard();

    private:
        ModelBuilder* b_;
    };
    [[nodiscard]] ScopeGuard scope(const std::string& child);
    const std::string& currentPath() const { return path_; }
    // Path of a child of the current module ("" child gives the current path).
    std::string childPath(const std::string& child) const;

    int input(const std::string& name, Shape shape, DType dtype = DType::Float32);
    // A trainable parameter named "<module>.<leaf>", e.g. "layer1.0.conv1.weight".
    int parameter(const std::string& module, const std::string& leaf, Shape shape);
    int buffer(const std::string& module, const std::string& leaf, Shape shape);
    int constantInts(const std::vector<int64_t>& data, Shape shape = {});
    int constantFloat(double value);

    // Any registry operator; module is a child of the current path ("" = current module).
    std::vector<int> op(const std::string& type, const std::vector<int>& inputs,
                        std::map<std::string, Attribute> attrs = {}, int numOutputs = 1,
                        const std::string& module = "");
    int op1(const std::string& type, const std::vector<int>& inputs, std::map<std::string, Attribute> attrs = {},
            const std::string& module = "") {
        return op(type, inputs, std::move(attrs), 1, module)[0];
    }

    // ---- PyTorch layers (each creates its parameters under `module`) ----
    int conv2d(const std::string& module, int x, int64_t outChannels, int64_t kernel, int64_t stride = 1,
               int64_t padding = 0, int64_t groups = 1, bool bias = true, int64_t dilation = 1);
    // Non-square kernels/strides/paddings: {kh, kw}, {sh, sw}, {ph, pw}.
    int conv2d(const std::string& module, int x, int64_t outChannels, std::vector<int64_t> kernel,
               std::vector<int64_t> stride, std::vector<int64_t> padding, int64_t groups = 1, bool bias = true);
    int convTranspose2d(const std::string& module, int x, int64_t outChannels, int64_t kernel, int64_t stride = 1,
                        int64_t padding = 0, int64_t outputPadding = 0, bool bias = true);
    // nn.Linear on the last dimension (Gemm for rank 2, MatMul + Add otherwise).
    int linear(const std::string& module, int x, int64_t outFeatures, bool bias = true);
    int batchNorm(const std::string& module, int x, double eps = 1e-5);  // 1d/2d: channels at dim 1
    int layerNorm(const std::string& module, int x, double eps = 1e-5);  // over the last dimension
    int embedding(const std::string& module, int ids, int64_t numEmbeddings, int64_t dim);
    // Uses an existing weight [num, dim] (tied embeddings).
    int embeddingWithWeight(const std::string& module, int ids, int weight);
    int dropout(const std::string& module, int x, double p);
    // nn.LSTM / nn.GRU, input [seq, batch, features] (batch_first=False). Returns the output
    // [seq, batch, dirs*hidden]. One ONNX LSTM/GRU per layer, parameters named as PyTorch does.
    int lstm(const std::string& module, int x, int64_t hidden, int64_t layers = 1, bool bidirectional = false);
    int gru(const std::string& module, int x, int64_t hidden, int64_t layers = 1, bool bidirectional = false);

    // ---- functional operations (in the current module, or `module` if given) ----
    int relu(int x, const std::string& module = "");
    int gelu(int x, const std::string& module = "");
    int tanh(int x, const std::string& module = "");
    int sigmoid(int x, const std::string& module = "");
    int silu(int x, const std::string& module = "");  // nn.SiLU: one kernel, saves its input
    int leakyRelu(int x, double slope, const std::string& module = "");
    int relu6(int x, const std::string& module = "");  // Clip(0, 6)
    int softmax(int x, int64_t axis = -1, const std::string& module = "");
    int maxPool2d(int x, int64_t kernel, int64_t stride, int64_t padding = 0, bool ceilMode = false,
                  const std::string& module = "");
    int avgPool2d(int x, int64_t kernel, int64_t stride, int64_t padding = 0, bool ceilMode = false,
                  bool countIncludePad = true, const std::string& module = "");
    int adaptiveAvgPool2d(int x, int64_t outH, int64_t outW, const std::string& module = "");
    int flatten(int x, int64_t axis = 1, const std::string& module = "");
    int add(int a, int b, const std::string& module = "");
    int mul(int a, int b, const std::string& module = "");
    int matmul(int a, int b, const std::string& module = "");
    int transpose(int x, std::vector<int64_t> perm, const std::string& module = "");
    int reshape(int x, const Shape& target, const std::string& module = "");  // target may hold -1
    int concat(const std::vector<int>& xs, int64_t axis, const std::string& module = "");
    int scale(int x, double factor, const std::string& module = "");  // x * constant

    const Graph& graph() const { return g_; }
    Graph& graph() { return g_; }
    // Marks outputs, validates and returns the graph.
    Graph finish(const std::vector<int>& outputs);

private:
    friend class ScopeGuard;
    std::string uniqueOpName(const std::string& module, const std::string& type);
    int recurrent(const std::string& kind, const std::string& module, int x, int64_t hidden, int64_t layers,
                  bool bidirectional);

    Graph g_;
    std::string path_;
    std::vector<size_t> pathStack_;
    std::map<std::string, int> opNameCounts_;
};

}  // namespace ts
