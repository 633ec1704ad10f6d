// Shape inference and analytic costs of the neural-network operator families (conv/pool, matmul,
// normalization, activations, elementwise with known-content propagation, reductions, recurrent),
// checked on small graphs built directly against hand-computed figures.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "trainscope/core/errors.h"
#include "trainscope/core/ops.h"

namespace {

using ts::Dim;
using ts::DType;
using ts::Shape;
using ts::ValueKind;

const Dim N = Dim::batch();
const Dim S = Dim::seq();

// A tiny graph builder: values by kind, operations whose outputs get inferred on add.
struct TestGraph {
    ts::Graph g;
    int counter = 0;

    int value(Shape shape, ValueKind kind, DType dtype = DType::Float32) {
        ts::Value v;
        v.name = "v" + std::to_string(counter++);
        v.shape = std::move(shape);
        v.kind = kind;
        v.dtype = dtype;
        return g.addValue(std::move(v));
    }
    int input(Shape shape, DType dtype = DType::Float32) { return value(std::move(shape), ValueKind::Input, dtype); }
    int param(Shape shape) { return value(std::move(shape), ValueKind::Parameter); }
    int ints(std::vector<Dim> data) {
        int v = value({Dim(static_cast<int64_t>(data.size()))}, ValueKind::Constant, DType::Int64);
        g.values[v].intData = std::move(data);
        return v;
    }
    int scalarFloat(double x) {
        int v = value({}, ValueKind::Constant);
        g.values[v].floatData = std::vector<double>{x};
        return v;
    }
    // An activation that needs a gradient: input + parameter of the same shape.
    int trainable(const Shape& shape) { return op1("Add", {input(shape), param(shape)}); }

    // Adds an operation with `outputs` fresh values, infers shapes; returns the output value indices.
    std::vector<int> op(const std::string& type, std::vector<int> inputs,
                        std::map<std::string, ts::Attribute> attrs = {}, int outputs = 1) {
        ts::Operation o;
        o.type = type;
        o.name = type + std::to_string(g.ops.size());
        o.inputs = std::move(inputs);
        o.attrs = std::move(attrs);
        for (int i = 0; i < outputs; ++i) o.outputs.push_back(value({}, ValueKind::Activation));
        std::vector<int> outs = o.outputs;
        int index = g.addOperation(std::move(o));
        ts::inferShapes(g, index);
        return outs;
    }
    int op1(const std::string& type, std::vector<int> inputs, std::map<std::string, ts::Attribute> attrs = {}) {
        return op(type, std::move(inputs), std::move(attrs))[0];
    }
    const Shape& shape(int v) const { return g.values[v].shape; }
    ts::OpCost cost(int value, int64_t n, int64_t s = 1) const {
        return ts::operationCost(g, g.values[value].producer, n, s, ts::requiresGrad(g));
    }
};

using Ints = std::vector<int64_t>;

// Known contents as text, so that failures print readably.
std::vector<std::string> contents(const TestGraph& t, int v) {
    std::vector<std::string> r;
    if (!t.g.values[v].intData) return {"<unknown>"};
    for (const Dim& d : *t.g.values[v].intData) r.push_back(d.str());
    return r;
}
using Strs = std::vector<std::string>;

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const ts::ShapeError& e) {
        return e.what();
    }
    return "";
}

// ---- Conv ----

TEST(OpsNnConv, StridedConvShapeAndCosts) {
    TestGraph t;
    int x = t.input({N, 3, 224, 224});
    int w = t.param({64, 3, 3, 3});
    int b = t.param({64});
    int y = t.op1("Conv", {x, w, b}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
    EXPECT_EQ(t.shape(y), (Shape{N, 64, 112, 112}));
    ts::OpCost c = t.cost(y, 2);
    const double outElems = 2.0 * 64 * 112 * 112;
    const double gemm = 2.0 * outElems * 3 * 9;
    EXPECT_DOUBLE_EQ(c.forwardFlops, gemm + outElems);
    // The input is data: only the weight gradient (one GEMM) and the bias gradient.
    EXPECT_DOUBLE_EQ(c.backwardFlops, gemm + outElems);
    ASSERT_EQ(c.saved.size(), 1u);
    EXPECT_EQ(c.saved[0].value, x);
    EXPECT_DOUBLE_EQ(c.saved[0].bytes, 2.0 * 3 * 224 * 224 * 4);
    EXPECT_DOUBLE_EQ(c.bytesWritten, outElems * 4);
    EXPECT_DOUBLE_EQ(c.bytesRead, (2.0 * 3 * 224 * 224 + 64 * 27 + 64) * 4);
}

TEST(OpsNnConv, DepthwiseAndGroupedConvolutions) {
    TestGraph t;
    int x = t.trainable({N, 32, 56, 56});
    int dw = t.op1("Conv", {x, t.param({32, 1, 3, 3})}, {{"group", int64_t(32)}, {"pads", Ints{1, 1, 1, 1}}});
    EXPECT_EQ(t.shape(dw), (Shape{N, 32, 56, 56}));
    const double dwGemm = 2.0 * 4 * 32 * 56 * 56 * 1 * 9;
    ts::OpCost c = t.cost(dw, 4);
    EXPECT_DOUBLE_EQ(c.forwardFlops, dwGemm);
    EXPECT_DOUBLE_EQ(c.backwardFlops, 2 * dwGemm);  // data and weight gradients

    int g = t.op1("Conv", {x, t.param({64, 8, 1, 1})}, {{"group", int64_t(4)}});
    EXPECT_EQ(t.shape(g), (Shape{N, 64, 56, 56}));
    EXPECT_DOUBLE_EQ(t.cost(g, 1).forwardFlops, 2.0 * 64 * 56 * 56 * 8);
}

TEST(OpsNnConv, OneAndThreeDimensionalAndAutoPad) {
    TestGraph t;
    int x1 = t.input({N, 4, 100});
    int y1 = t.op1("Conv", {x1, t.param({8, 4, 5})}, {{"dilations", Ints{2}}});
    EXPECT_EQ(t.shape(y1), (Shape{N, 8, 92}));  // 100 - 2*4 = 92
    int x3 = t.input({N, 2, 8, 16, 16});
    int y3 = t.op1("Conv", {x3, t.param({4, 2, 3, 3, 3})}, {{"strides", Ints{1, 2, 2}}});
    EXPECT_EQ(t.shape(y3), (Shape{N, 4, 6, 7, 7}));
    int x = t.input({N, 3, 7, 7});
    int same =
        t.op1("Conv", {x, t.param({6, 3, 3, 3})}, {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}});
    EXPECT_EQ(t.shape(same), (Shape{N, 6, 4, 4}));
    int valid =
        t.op1("Conv", {x, t.param({6, 3, 3, 3})}, {{"strides", Ints{2, 2}}, {"auto_pad", std::string("VALID")}});
    EXPECT_EQ(t.shape(valid), (Shape{N, 6, 3, 3}));
}

TEST(OpsNnConv, SymbolicSpatialSizes) {
    TestGraph t;
    // A 1-D conv over a sequence: stride 1 keeps the symbol, stride 2 on an odd symbolic span cannot be divided.
    int x = t.input({N, 16, S});
    int y = t.op1("Conv", {x, t.param({16, 16, 3})}, {{"pads", Ints{1, 1}}});
    EXPECT_EQ(t.shape(y), (Shape{N, 16, S}));
    std::string err = errorOf([&] { t.op1("Conv", {x, t.param({16, 16, 3})}, {{"strides", Ints{2}}}); });
    EXPECT_NE(err.find("not divisible by stride 2"), std::string::npos) << err;
}

TEST(OpsNnConv, InvalidConvolutionsAreRejected) {
    TestGraph t;
    int x = t.input({N, 32, 28, 28});
    std::string err = errorOf([&] { t.op1("Conv", {x, t.param({64, 8, 3, 3})}, {{"group", int64_t(2)}}); });
    EXPECT_EQ(err, "Conv input has 32 channels but the weight [64, 8, 3, 3] with group 2 expects 16");
    err = errorOf([&] { t.op1("Conv", {x, t.param({64, 32, 3, 3})}, {{"strides", Ints{0, 1}}}); });
    EXPECT_NE(err.find("strides must be positive"), std::string::npos) << err;
    err = errorOf([&] { t.op1("Conv", {x, t.param({64, 32, 3})}); });
    EXPECT_NE(err.find("must have the input's rank"), std::string::npos) << err;
    err = errorOf([&] { t.op1("Conv", {x, t.param({64, 32, 31, 31})}); });
    EXPECT_NE(err.find("larger than the padded input"), std::string::npos) << err;
    err = errorOf([&] { t.op1("Conv", {x, t.param({64, 32, 3, 3}), t.param({32})}); });
    EXPECT_NE(err.find("bias [32] must have shape [64]"), std::string::npos) << err;
}

TEST(OpsNnConv, ConvTransposeOutputSizes) {
    TestGraph t;
    int x = t.input({N, 16, 14, 14});
    int a = t.op1("ConvTranspose", {x, t.param({16, 8, 4, 4})}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
    EXPECT_EQ(t.shape(a), (Shape{N, 8, 28, 28}));
    int b = t.op1(
        "ConvTranspose", {x, t.param({16, 4, 3, 3})},
        {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}, {"group", int64_t(2)}});
    EXPECT_EQ(t.shape(b), (Shape{N, 8, 28, 28}));
    int c =
        t.op1("ConvTranspose", {x, t.param({16, 8, 3, 3})}, {{"strides", Ints{2, 2}}, {"output_shape", Ints{30, 29}}});
    EXPECT_EQ(t.shape(c), (Shape{N, 8, 30, 29}));
    // Each input element is scattered into Cout/group * kernel outputs.
    EXPECT_DOUBLE_EQ(t.cost(b, 1).forwardFlops, 2.0 * 16 * 14 * 14 * 4 * 9);
}

// ---- pooling ----

TEST(OpsNnPool, MaxPoolCeilModeAndIndices) {
    TestGraph t;
    int x = t.trainable({N, 1, 6, 6});
    int floorPool = t.op1("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
    EXPECT_EQ(t.shape(floorPool), (Shape{N, 1, 2, 2}));
    auto ceilPool =
        t.op("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t(1)}}, 2);
    EXPECT_EQ(t.shape(ceilPool[0]), (Shape{N, 1, 3, 3}));
    EXPECT_EQ(t.shape(ceilPool[1]), (Shape{N, 1, 3, 3}));
    EXPECT_EQ(t.g.values[ceilPool[1]].dtype, DType::Int64);
    // PyTorch rule: the last window may not start in the right padding (5 + pad 1, k2 s2 -> 3, not 4).
    int y = t.input({N, 1, 5, 5});
    int dropped = t.op1(
        "MaxPool", {y},
        {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"ceil_mode", int64_t(1)}});
    EXPECT_EQ(t.shape(dropped), (Shape{N, 1, 3, 3}));

    ts::OpCost c = t.cost(floorPool, 2);
    EXPECT_DOUBLE_EQ(c.forwardFlops, 2.0 * 4 * 9);
    // Saves the input and the int64 argmax indices.
    ASSERT_EQ(c.saved.size(), 2u);
    EXPECT_DOUBLE_EQ(c.saved[0].bytes, 2.0 * 36 * 4);
    EXPECT_EQ(c.saved[1].value, -1);
    EXPECT_DOUBLE_EQ(c.saved[1].bytes, 2.0 * 4 * 8);
}

TEST(OpsNnPool, AverageAndGlobalPools) {
    TestGraph t;
    int x = t.input({N, 2048, 7, 7});
    int gap = t.op1("GlobalAveragePool", {x});
    EXPECT_EQ(t.shape(gap), (Shape{N, 2048, 1, 1}));
    EXPECT_DOUBLE_EQ(t.cost(gap, 1).forwardFlops, 2048.0 * 49 + 2048);
    int avg = t.op1("AveragePool", {x},
                    {{"kernel_shape", Ints{3, 3}},
                     {"strides", Ints{2, 2}},
                     {"pads", Ints{1, 1, 1, 1}},
                     {"ceil_mode", int64_t(1)},
                     {"count_include_pad", int64_t(0)}});
    EXPECT_EQ(t.shape(avg), (Shape{N, 2048, 4, 4}));
    EXPECT_NE(errorOf([&] { t.op1("MaxPool", {x}); }).find("kernel_shape"), std::string::npos);
}

// ---- MatMul, Gemm ----

TEST(OpsNnMatMul, GemmTransBWithBias) {
    TestGraph t;
    int a = t.input({N, 512});
    int y = t.op1("Gemm", {a, t.param({1000, 512}), t.param({1000})}, {{"transB", int64_t(1)}});
    EXPECT_EQ(t.shape(y), (Shape{N, 1000}));
    ts::OpCost c = t.cost(y, 8);
    const double gemm = 2.0 * 8 * 512 * 1000;
    EXPECT_DOUBLE_EQ(c.forwardFlops, gemm + 8 * 1000);
    EXPECT_DOUBLE_EQ(c.backwardFlops, gemm + 8 * 1000);  // weight and bias gradients only
    std::string err = errorOf([&] { t.op1("Gemm", {a, t.param({1000, 512})}); });
    EXPECT_NE(err.find("inner dimensions differ"), std::string::npos) << err;
}

TEST(OpsNnMatMul, BatchedAttentionScores) {
    TestGraph t;
    int q = t.trainable({N, 12, S, 64});
    int k = t.trainable({N, 12, 64, S});
    int scores = t.op1("MatMul", {q, k});
    EXPECT_EQ(t.shape(scores), (Shape{N, 12, S, S}));
    ts::OpCost c = t.cost(scores, 2, 128);
    const double gemm = 2.0 * 2 * 12 * 128 * 128 * 64;
    EXPECT_DOUBLE_EQ(c.forwardFlops, gemm);
    EXPECT_DOUBLE_EQ(c.backwardFlops, 2 * gemm);
    EXPECT_EQ(c.saved.size(), 2u);
    EXPECT_DOUBLE_EQ(c.savedBytes(), 2 * (2.0 * 12 * 128 * 64 * 4));
}

TEST(OpsNnMatMul, VectorsAndBroadcasting) {
    TestGraph t;
    EXPECT_EQ(t.shape(t.op1("MatMul", {t.input({64}), t.input({64, 10})})), (Shape{10}));
    EXPECT_EQ(t.shape(t.op1("MatMul", {t.input({N, 5, 64}), t.input({64})})), (Shape{N, 5}));
    EXPECT_EQ(t.shape(t.op1("MatMul", {t.input({N, S, 768}), t.param({768, 3072})})), (Shape{N, S, 3072}));
    EXPECT_EQ(t.shape(t.op1("MatMul", {t.input({4, 1, 3, 5}), t.input({7, 5, 2})})), (Shape{4, 7, 3, 2}));
    std::string err = errorOf([&] { t.op1("MatMul", {t.input({N, 3, 5}), t.input({6, 2})}); });
    EXPECT_NE(err.find("inner dimensions differ"), std::string::npos) << err;
}

TEST(OpsNnMatMul, EinsumContraction) {
    TestGraph t;
    int y = t.op1("Einsum", {t.input({N, 4, 8}), t.input({N, 8, 6})}, {{"equation", std::string("bij,bjk->bik")}});
    EXPECT_EQ(t.shape(y), (Shape{N, 4, 6}));
    EXPECT_DOUBLE_EQ(t.cost(y, 3).forwardFlops, 2.0 * 3 * 4 * 8 * 6);
}

// ---- normalization ----

TEST(OpsNnNorm, LayerNormShapesAndSavedStatistics) {
    TestGraph t;
    int x = t.trainable({N, S, 768});
    auto outs = t.op("LayerNormalization", {x, t.param({768}), t.param({768})}, {{"epsilon", 1e-5}}, 1);
    EXPECT_EQ(t.shape(outs[0]), (Shape{N, S, 768}));
    ts::OpCost c = t.cost(outs[0], 2, 10);
    const double elems = 2.0 * 10 * 768;
    EXPECT_DOUBLE_EQ(c.forwardFlops, 8 * elems);
    // Input plus a float mean and inverse std per row (20 rows).
    EXPECT_DOUBLE_EQ(c.savedBytes(), elems * 4 + 2.0 * 20 * 4);
    auto three = t.op("LayerNormalization", {x, t.param({768})}, {{"axis", int64_t(1)}}, 3);
    EXPECT_EQ(t.shape(three[2]), (Shape{N, 1, 1}));
    std::string err = errorOf([&] { t.op1("LayerNormalization", {x, t.param({512})}); });
    EXPECT_NE(err.find("scale [512] does not match"), std::string::npos) << err;
}

TEST(OpsNnNorm, BatchNormTrainingOutputs) {
    TestGraph t;
    int x = t.input({N, 64, 56, 56});
    int sc = t.param({64}), bi = t.param({64});
    int rm = t.value({64}, ValueKind::Buffer), rv = t.value({64}, ValueKind::Buffer);
    auto outs = t.op("BatchNormalization", {x, sc, bi, rm, rv}, {{"training_mode", int64_t(1)}}, 3);
    EXPECT_EQ(t.shape(outs[0]), (Shape{N, 64, 56, 56}));
    EXPECT_EQ(t.shape(outs[1]), (Shape{64}));
    EXPECT_EQ(t.shape(outs[2]), (Shape{64}));
    ts::OpCost c = t.cost(outs[0], 1);
    EXPECT_DOUBLE_EQ(c.forwardFlops, 8.0 * 64 * 56 * 56);
    // Only scale and bias need gradients: the shared reductions, no data gradient.
    EXPECT_DOUBLE_EQ(c.backwardFlops, 5.0 * 64 * 56 * 56);
    std::string err = errorOf([&] { t.op1("BatchNormalization", {x, t.param({32}), bi, rm, rv}); });
    EXPECT_NE(err.find("scale [32] must have shape [64]"), std::string::npos) << err;
}

TEST(OpsNnNorm, InstanceAndGroupNormalization) {
    TestGraph t;
    int x = t.trainable({N, 32, 8, 8});
    int in = t.op1("InstanceNormalization", {x, t.param({32}), t.param({32})});
    EXPECT_EQ(t.shape(in), (Shape{N, 32, 8, 8}));
    // Input plus a mean and inverse std per (sample, channel).
    EXPECT_DOUBLE_EQ(t.cost(in, 2).savedBytes(), 2.0 * 32 * 64 * 4 + 2.0 * 2 * 32 * 4);
    int gn = t.op1("GroupNormalization", {x, t.param({32}), t.param({32})}, {{"num_groups", int64_t(8)}});
    EXPECT_EQ(t.shape(gn), (Shape{N, 32, 8, 8}));
    EXPECT_DOUBLE_EQ(t.cost(gn, 2).savedBytes(), 2.0 * 32 * 64 * 4 + 2.0 * 2 * 8 * 4);
    std::string err = errorOf([&] {
        t.op1("GroupNormalization", {x, t.param({32}), t.param({32})}, {{"num_groups", int64_t(5)}});
    });
    EXPECT_NE(err.find("not divisible by num_groups 5"), std::string::npos) << err;
}

// ---- activations ----

TEST(OpsNnActivation, SavedTensorsFollowAutograd) {
    TestGraph t;
    int x = t.trainable({N, 100});
    int relu = t.op1("Relu", {x});
    int gelu = t.op1("Gelu", {x}, {{"approximate", std::string("tanh")}});
    int sig = t.op1("Sigmoid", {x});
    EXPECT_EQ(t.shape(gelu), (Shape{N, 100}));
    EXPECT_EQ(t.cost(relu, 1).saved.at(0).value, relu);  // ReLU keeps its output
    EXPECT_EQ(t.cost(gelu, 1).saved.at(0).value, x);     // GELU keeps its input
    EXPECT_EQ(t.cost(sig, 1).saved.at(0).value, sig);
    int fromData = t.op1("Relu", {t.input({N, 100})});
    EXPECT_TRUE(t.cost(fromData, 1).saved.empty());  // no gradient, nothing kept
    EXPECT_DOUBLE_EQ(t.cost(fromData, 1).backwardFlops, 0);
    EXPECT_NE(errorOf([&] {
                  t.op1("Gelu", {x}, {{"approximate", std::string("fast")}});
              }).find("approximate"),
              std::string::npos);
}

TEST(OpsNnActivation, SoftmaxAxisAndClipBounds) {
    TestGraph t;
    int x = t.trainable({N, 12, S, S});
    int sm = t.op1("Softmax", {x});
    EXPECT_EQ(t.shape(sm), (Shape{N, 12, S, S}));
    EXPECT_EQ(t.cost(sm, 1, 4).saved.at(0).value, sm);
    EXPECT_NE(errorOf([&] { t.op1("Softmax", {x}, {{"axis", int64_t(4)}}); }).find("out of range"), std::string::npos);
    EXPECT_NO_THROW(t.op1("LogSoftmax", {x}, {{"_opset", int64_t(11)}}));

    ts::OpCost sc = t.cost(sm, 2, 4);
    EXPECT_DOUBLE_EQ(sc.forwardFlops, 5.0 * 2 * 12 * 4 * 4);
    EXPECT_DOUBLE_EQ(sc.savedBytes(), 2.0 * 12 * 4 * 4 * 4);

    int scalar = t.scalarFloat(7.5);
    int clipped = t.op1("Clip", {scalar, t.scalarFloat(0), t.scalarFloat(6)});
    ASSERT_TRUE(t.g.values[clipped].floatData.has_value());
    EXPECT_DOUBLE_EQ(t.g.values[clipped].floatData->at(0), 6.0);
    int relu6 = t.op1("Clip", {x, t.scalarFloat(0), t.scalarFloat(6)});
    EXPECT_EQ(t.shape(relu6), (Shape{N, 12, S, S}));
    EXPECT_EQ(t.g.values[t.op1("IsNaN", {x})].dtype, DType::Bool);
    int prelu = t.op1("PRelu", {x, t.param({12, 1, 1})});
    EXPECT_EQ(t.shape(prelu), (Shape{N, 12, S, S}));
}

// ---- elementwise with known contents ----

TEST(OpsNnElementwise, BroadcastingAndDtypes) {
    TestGraph t;
    int a = t.input({N, 1, 64});
    int b = t.input({7, 1});
    EXPECT_EQ(t.shape(t.op1("Add", {a, b})), (Shape{N, 7, 64}));
    int eq = t.op1("Equal", {a, b});
    EXPECT_EQ(t.g.values[eq].dtype, DType::Bool);
    int w = t.op1("Where", {eq, a, t.input({64})});
    EXPECT_EQ(t.shape(w), (Shape{N, 7, 64}));
    std::string err = errorOf([&] { t.op1("Mul", {t.input({N, 3}), t.input({4})}); });
    EXPECT_EQ(err, "Mul inputs [N, 3] and [4] do not broadcast");
}

TEST(OpsNnElementwise, KnownIntegerContentsFollowShapeMath) {
    TestGraph t;
    int shape = t.ints({N, 128});
    int doubled = t.op1("Mul", {shape, t.ints({2})});
    EXPECT_EQ(contents(t, doubled), (Strs{"2*N", "256"}));
    int back = t.op1("Div", {doubled, t.ints({2})});
    EXPECT_EQ(contents(t, back), (Strs{"N", "128"}));
    int sum = t.op1("Add", {shape, t.ints({N, 1})});
    EXPECT_EQ(contents(t, sum), (Strs{"2*N", "129"}));
    // Exporters' Where(Equal(shape, -1), ones, shape): N is never -1.
    int isMinusOne = t.op1("Equal", {shape, t.ints({-1})});
    EXPECT_EQ(contents(t, isMinusOne), (Strs{"0", "0"}));
    int chosen = t.op1("Where", {isMinusOne, t.ints({1, 1}), shape});
    EXPECT_EQ(contents(t, chosen), (Strs{"N", "128"}));
    // N / 3 is not exact: the result's contents are unknown, but its shape is.
    int third = t.op1("Div", {shape, t.ints({3})});
    EXPECT_FALSE(t.g.values[third].intData.has_value());
    EXPECT_EQ(t.shape(third), (Shape{2}));
    // Max with a constant only when provable: max(N, 1) = N for every N >= 1.
    int mx = t.op1("Max", {shape, t.ints({1})});
    EXPECT_EQ(contents(t, mx), (Strs{"N", "128"}));
    int ge = t.op1("GreaterOrEqual", {shape, t.ints({1})});
    EXPECT_EQ(contents(t, ge), (Strs{"1", "1"}));
    int eqOne = t.op1("Equal", {shape, t.ints({1, 128})});
    EXPECT_EQ(contents(t, eqOne), (Strs{"<unknown>"}));  // N == 1 depends on N
    int lt = t.op1("Less", {shape, t.ints({64})});
    EXPECT_FALSE(t.g.values[lt].intData.has_value());  // N < 64 depends on N
    int pw = t.op1("Pow", {t.scalarFloat(2), t.scalarFloat(0.5)});
    EXPECT_NEAR(t.g.values[pw].floatData->at(0), 1.41421356, 1e-6);
}

// BLOOM's ALiBi slopes, tiled to [batch x heads, 1, 1] by repeats read from the ids' size: the output
// follows the batch; a negative repeat is refused; constant repeats still give known contents.
TEST(OpsNnShape, TileRepeatsMayFollowTheBatch) {
    TestGraph t;
    int slopes = t.input({Dim(4), Dim(1), Dim(1)});
    int tiled = t.op1("Tile", {slopes, t.ints({N, 1, 1})});
    EXPECT_EQ(t.shape(tiled), (Shape{N * Dim(4), Dim(1), Dim(1)}));
    EXPECT_NE(errorOf([&] { t.op1("Tile", {slopes, t.ints({-1, 1, 1})}); }).find("negative"), std::string::npos);
    EXPECT_NE(errorOf([&] {
                  t.op1("Tile", {slopes, t.ints({Dim(1) - N, 1, 1})});
              }).find("negative"),
              std::string::npos);
    int known = t.op1("Tile", {t.ints({N, 7}), t.ints({2})});
    EXPECT_EQ(contents(t, known), (Strs{"N", "7", "N", "7"}));
}

TEST(OpsNnElementwise, CostsAndSavedOperands) {
    TestGraph t;
    int a = t.trainable({N, 256});
    int b = t.trainable({N, 256});
    int add = t.op1("Add", {a, b});
    int mul = t.op1("Mul", {a, b});
    int div = t.op1("Div", {a, t.input({N, 256})});
    EXPECT_TRUE(t.cost(add, 2).saved.empty());
    EXPECT_EQ(t.cost(mul, 2).saved.size(), 2u);
    EXPECT_DOUBLE_EQ(t.cost(mul, 2).forwardFlops, 512);
    // Only the numerator needs a gradient: the denominator is kept, the numerator is not.
    ts::OpCost d = t.cost(div, 2);
    ASSERT_EQ(d.saved.size(), 1u);
    EXPECT_EQ(d.saved[0].value, t.g.ops[t.g.values[div].producer].inputs[1]);
    int cmp = t.op1("Greater", {a, b});
    EXPECT_DOUBLE_EQ(t.cost(cmp, 2).backwardFlops, 0);
}

// ---- reductions ----

TEST(OpsNnReduction, AxesFromAttributeOrInput) {
    TestGraph t;
    int x = t.trainable({N, S, 768});
    int mean = t.op1("ReduceMean", {x}, {{"axes", Ints{-1}}});
    EXPECT_EQ(t.shape(mean), (Shape{N, S, 1}));
    int sum = t.op1("ReduceSum", {x, t.ints({1})}, {{"keepdims", int64_t(0)}});
    EXPECT_EQ(t.shape(sum), (Shape{N, 768}));
    int all = t.op1("ReduceMax", {x}, {{"keepdims", int64_t(0)}});
    EXPECT_EQ(t.shape(all), (Shape{}));
    int noop = t.op1("ReduceSum", {x}, {{"noop_with_empty_axes", int64_t(1)}});
    EXPECT_EQ(t.shape(noop), (Shape{N, S, 768}));
    int arg = t.op1("ArgMax", {x}, {{"axis", int64_t(-1)}, {"keepdims", int64_t(0)}});
    EXPECT_EQ(t.shape(arg), (Shape{N, S}));
    EXPECT_EQ(t.g.values[arg].dtype, DType::Int64);
    EXPECT_DOUBLE_EQ(t.cost(mean, 2, 5).forwardFlops, 2.0 * 5 * 768 + 2 * 5);
    EXPECT_NE(errorOf([&] { t.op1("ReduceMean", {x}, {{"axes", Ints{3}}}); }).find("out of range"), std::string::npos);
    int computedAxes = t.op1("Add", {t.input({1}, DType::Int64), t.ints({1})});
    std::string err = errorOf([&] { t.op1("ReduceSum", {x, computedAxes}); });
    EXPECT_NE(err.find("data-dependent"), std::string::npos) << err;
    int cum = t.op1("CumSum", {t.ints({N, 2, 3}), t.ints({0})});
    EXPECT_EQ(contents(t, cum), (Strs{"N", "N+2", "N+5"}));
    int prod = t.op1("ReduceProd", {t.ints({N, 12, 64})}, {{"keepdims", int64_t(1)}});
    EXPECT_EQ(contents(t, prod), (Strs{"768*N"}));
}

// ---- recurrent ----

TEST(OpsNnRecurrent, BidirectionalLstm) {
    TestGraph t;
    const int64_t input = 10, hidden = 20;
    int x = t.input({S, N, input});
    auto outs =
        t.op("LSTM", {x, t.param({2, 4 * hidden, input}), t.param({2, 4 * hidden, hidden}), t.param({2, 8 * hidden})},
             {{"hidden_size", hidden}, {"direction", std::string("bidirectional")}}, 3);
    EXPECT_EQ(t.shape(outs[0]), (Shape{S, 2, N, hidden}));
    EXPECT_EQ(t.shape(outs[1]), (Shape{2, N, hidden}));
    EXPECT_EQ(t.shape(outs[2]), (Shape{2, N, hidden}));
    // 5 steps, batch 3, 2 directions: input and recurrent GEMMs, two bias adds and 18 pointwise FLOPs per unit.
    const double rows = 5.0 * 3 * 2;
    const double expected =
        rows * (2.0 * input * 4 * hidden + 2.0 * hidden * 4 * hidden + 2.0 * 4 * hidden + 18.0 * hidden);
    ts::OpCost c = t.cost(outs[0], 3, 5);
    EXPECT_DOUBLE_EQ(c.forwardFlops, expected);
    EXPECT_GT(c.backwardFlops, c.forwardFlops);
    std::string err = errorOf([&] {
        t.op("GRU", {x, t.param({1, 3 * hidden, input + 1}), t.param({1, 3 * hidden, hidden})},
             {{"hidden_size", hidden}}, 2);
    });
    EXPECT_NE(err.find("GRU W [1, 60, 11] must have shape [1, 60, 10]"), std::string::npos) << err;
    int xb = t.input({N, S, input});
    auto gru = t.op("GRU", {xb, t.param({1, 3 * hidden, input}), t.param({1, 3 * hidden, hidden})},
                    {{"hidden_size", hidden}, {"layout", int64_t(1)}}, 2);
    EXPECT_EQ(t.shape(gru[0]), (Shape{N, S, 1, hidden}));
    EXPECT_EQ(t.shape(gru[1]), (Shape{N, 1, hidden}));
}

}  // namespace
