#include <gtest/gtest.h>

#include <numeric>

#include "trainscope/core/builder.h"
#include "trainscope/core/costs.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/ops.h"

namespace {

// Two 3x3 convolutions with ReLU between: the second conv's input needs a gradient, the first's does not.
ts::Graph twoConvs() {
    return ts::importJsonModelText(R"({"trainscope_model": 1, "name": "two",
      "inputs": [{"name": "x", "shape": ["N", 3, 16, 16]}],
      "layers": [
        {"name": "c1", "type": "Conv2d", "out_channels": 8, "kernel_size": 3, "padding": 1, "bias": false},
        {"name": "r1", "type": "ReLU"},
        {"name": "c2", "type": "Conv2d", "out_channels": 8, "kernel_size": 3, "padding": 1, "bias": false}
      ]})", "two.json");
}

const ts::LayerCost& layerOf(const ts::Graph& g, const ts::ModelCosts& c, const std::string& path) {
    for (const auto& l : c.layers)
        if (g.ops[l.op].modulePath == path) return l;
    throw std::runtime_error("no layer " + path);
}

}  // namespace

TEST(Costs, ConvolutionForwardAndBackwardFlops) {
    ts::Graph g = twoConvs();
    ts::ModelCosts c = ts::computeCosts(g, 2);
    const double macs1 = 2.0 * 8 * 16 * 16 * 3 * 9, macs2 = 2.0 * 8 * 16 * 16 * 8 * 9;
    EXPECT_DOUBLE_EQ(layerOf(g, c, "c1").cost.forwardFlops, 2 * macs1);
    EXPECT_DOUBLE_EQ(layerOf(g, c, "c2").cost.forwardFlops, 2 * macs2);
    // c1: only the weight gradient (its input is data); c2: weight and data gradients.
    EXPECT_DOUBLE_EQ(layerOf(g, c, "c1").cost.backwardFlops, 2 * macs1);
    EXPECT_DOUBLE_EQ(layerOf(g, c, "c2").cost.backwardFlops, 4 * macs2);
    EXPECT_EQ(layerOf(g, c, "c1").parameters, 8 * 3 * 9);
    EXPECT_EQ(c.totals.parameters, 8 * 3 * 9 + 8 * 8 * 9);
}

TEST(Costs, LinearInBatchAndSharedSavedTensorsCountedOnce) {
    ts::Graph g = twoConvs();
    ts::ModelCosts c2 = ts::computeCosts(g, 2), c4 = ts::computeCosts(g, 4);
    EXPECT_DOUBLE_EQ(c4.totals.forwardFlops, 2 * c2.totals.forwardFlops);
    EXPECT_DOUBLE_EQ(c4.totals.activationBytes, 2 * c2.totals.activationBytes);
    // The ReLU output is saved by the ReLU and by c2 (its input): counted once in totals.
    double sumOfLayers = 0;
    for (const auto& l : c2.layers) sumOfLayers += l.activationBytes;
    const double reluOut = 2.0 * 8 * 16 * 16 * 4;
    EXPECT_DOUBLE_EQ(layerOf(g, c2, "r1").activationBytes, reluOut);
    EXPECT_DOUBLE_EQ(layerOf(g, c2, "c2").activationBytes, reluOut);
    EXPECT_DOUBLE_EQ(c2.totals.activationBytes, sumOfLayers - reluOut);
    EXPECT_DOUBLE_EQ(c2.modules[0].activationBytes, c2.totals.activationBytes);
}

TEST(Costs, ModuleTreeSumsItsLayers) {
    ts::Graph g = ts::loadModel("zoo:resnet50");
    ts::ModelCosts c = ts::computeCosts(g, 1);
    ASSERT_GT(c.modules.size(), 10u);
    EXPECT_EQ(c.modules[0].parameters, c.totals.parameters);
    EXPECT_DOUBLE_EQ(c.modules[0].forwardFlops, c.totals.forwardFlops);
    for (size_t m = 1; m < c.modules.size(); ++m) {
        const auto& mod = c.modules[m];
        double childFlops = 0, ownFlops = 0;
        for (int ch : mod.children) childFlops += c.modules[ch].forwardFlops;
        for (int l : mod.layers) ownFlops += c.layers[l].cost.forwardFlops;
        EXPECT_NEAR(mod.forwardFlops, childFlops + ownFlops, 1e-6 * mod.forwardFlops + 1e-9) << mod.path;
    }
    // ResNet-50's forward is about 4.1 GMACs per 224x224 image (He et al.): 8.2 GFLOPs and a little more.
    EXPECT_GT(c.totals.forwardFlops, 8.0e9);
    EXPECT_LT(c.totals.forwardFlops, 8.5e9);
}

// A parameter read twice by one operation (an exporter that merged two equal weights into one tensor)
// is one parameter: counted once in its layer and in the totals, as Graph::parameterCount counts it.
TEST(Costs, ParameterInTwoSlotsOfOneOperationCountsOnce) {
    ts::Graph g;
    ts::Value x;
    x.name = "x";
    x.kind = ts::ValueKind::Input;
    x.shape = {ts::Dim::batch(), ts::Dim(3)};
    g.inputs.push_back(g.addValue(x));
    ts::Value w;
    w.name = "w";
    w.kind = ts::ValueKind::Parameter;
    w.shape = {ts::Dim(3)};
    int wi = g.addValue(w);
    ts::Operation op;
    op.type = "LayerNormalization";
    op.name = "norm";
    op.inputs = {g.inputs[0], wi, wi};
    ts::Value y;
    y.name = "y";
    op.outputs = {g.addValue(y)};
    ts::inferShapes(g, g.addOperation(op));
    g.outputs.push_back(op.outputs[0]);
    ts::ModelCosts c = ts::computeCosts(g, 2);
    EXPECT_EQ(g.parameterCount(), 3);
    EXPECT_EQ(c.layers.at(0).parameters, 3);
    EXPECT_EQ(c.totals.parameters, 3);
}

// F.normalize(x) = x / norm(x).clamp_min(eps).expand_as(x): PyTorch's expand is a view with stride 0,
// so the division keeps the norm's storage, one element a row, not a tensor of x's size.
TEST(Costs, ExpandedTensorIsSavedAsWhatItExpands) {
    ts::ModelBuilder b("normalize");
    int x = b.input("x", {ts::Dim::batch(), ts::Dim(4), ts::Dim(8)});
    int h = b.linear("proj", x, 8, false);  // so that the division's inputs need gradients
    int norm = b.op1("ReduceL2", {h, b.constantInts({-1}, {ts::Dim(1)})}, {{"keepdims", int64_t(1)}});
    int denom = b.op1("Clip", {norm, b.constantFloat(1e-12)});
    int wide = b.op1("Expand", {denom, b.constantInts({1, 4, 8}, {ts::Dim(3)})});
    int y = b.op1("Div", {h, wide});
    ts::Graph g = b.finish({y});
    ASSERT_EQ(ts::shapeStr(g.values[size_t(wide)].shape), "[N, 4, 8]");
    ts::ModelCosts c = ts::computeCosts(g, 2);
    const double row = 2 * 4 * 8 * 4, perRow = 2 * 4 * 1 * 4;
    // x (the linear's input), h (the norm's and the division's), the norm (its own output, the clamp's
    // input) and the clamped norm (the division's denominator, at its own size).
    EXPECT_DOUBLE_EQ(c.totals.activationBytes, row + row + perRow + perRow);
}

// The flash and memory-efficient kernels write their output in the query's memory layout. A query that is
// its own projection viewed as heads and transposed ([N, T, heads, d] in memory) makes the output's
// transpose back and merge for the output projection a view: one tensor, kept once, as autograd keeps it
// (transformers' Llama and BERT on the CPU). A query sliced from a fused q, k, v projection is no dense
// tensor, and the output projection's input is a copy (GPT-2, Phi-3).
TEST(Costs, AttentionOutputReadThroughAViewIsKeptOnce) {
    const int64_t heads = 2, dim = 4, width = heads * dim;
    auto build = [&](bool fused) {
        ts::ModelBuilder b("attention");
        int x = b.input("x", {ts::Dim::batch(), ts::Dim(3), ts::Dim(width)});
        int q, k, v;
        if (fused) {
            int qkv = b.linear("qkv", x, 3 * width, false);
            std::vector<int> parts =
                b.op("Split", {qkv, b.constantInts({width, width, width}, {ts::Dim(3)})}, {{"axis", int64_t{-1}}}, 3);
            q = parts[0], k = parts[1], v = parts[2];
        } else {
            q = b.linear("q", x, width, false), k = b.linear("k", x, width, false), v = b.linear("v", x, width, false);
        }
        auto toHeads = [&](int t) { return b.transpose(b.reshape(t, {0, 0, heads, dim}), {0, 2, 1, 3}); };
        int o = b.op1("ScaledDotProductAttention", {toHeads(q), toHeads(k), toHeads(v)},
                      {{"backend", std::string("flash")}, {"causal", int64_t{1}}});
        int merged = b.reshape(b.transpose(o, {0, 2, 1, 3}), {0, 0, width});
        return b.finish({b.linear("o", merged, width, false)});
    };
    const double tensor = 2 * 3 * width * 4, lse = 2 * heads * 3 * 4;  // at batch 2, fp32
    // x, then q, k, v, the output (the o projection's input) and the logsumexp.
    EXPECT_DOUBLE_EQ(ts::computeCosts(build(false), 2).totals.activationBytes, tensor + 4 * tensor + lse);
    // The o projection's input copied: one tensor more.
    EXPECT_DOUBLE_EQ(ts::computeCosts(build(true), 2).totals.activationBytes, tensor + 5 * tensor + lse);
}

// ShuffleNet's unit: x1, x2 = x.chunk(2, dim=1), a convolution on x2. A convolution saves its input as given,
// a view that keeps the whole x alive (autograd on the CPU: torchvision's shufflenet_v2 was 6.4% under).
TEST(Costs, ConvolutionOnAChunkKeepsTheWholeTensor) {
    ts::ModelBuilder b("shuffle");
    int x = b.input("x", {ts::Dim::batch(), ts::Dim(3), ts::Dim(8), ts::Dim(8)});
    int h = b.conv2d("stem", x, 8, 1, 1, 0, 1, false);  // [N, 8, 8, 8], which needs a gradient
    std::vector<int> halves = b.op("Split", {h, b.constantInts({4, 4}, {ts::Dim(2)})}, {{"axis", int64_t{1}}}, 2);
    int branch = b.conv2d("branch", halves[1], 4, 1, 1, 0, 1, false);
    ts::Graph g = b.finish({halves[0], branch});
    const double whole = 2 * 8 * 8 * 8 * 4, image = 2 * 3 * 8 * 8 * 4;  // at batch 2, fp32
    // The stem saves the image; the branch saves its half of h: all of h.
    EXPECT_DOUBLE_EQ(ts::computeCosts(g, 2).totals.activationBytes, image + whole);
}
