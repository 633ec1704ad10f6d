#include <gtest/gtest.h>

#include "trainscope/core/builder.h"
#include "trainscope/core/errors.h"

namespace {

const ts::Operation* findOp(const ts::Graph& g, const std::string& name) {
    for (const auto& op : g.ops)
        if (op.name == name) return &op;
    return nullptr;
}

const ts::Value& value(const ts::Graph& g, const std::string& name) {
    int v = g.findValue(name);
    if (v < 0) throw std::runtime_error("no value " + name);
    return g.values[v];
}

}  // namespace

TEST(ModelBuilder, ScopesNestAndUnwind) {
    ts::ModelBuilder b("m");
    EXPECT_EQ(b.currentPath(), "");
    EXPECT_EQ(b.childPath("conv"), "conv");
    {
        auto s = b.scope("layer1");
        {
            auto t = b.scope("0");
            EXPECT_EQ(b.currentPath(), "layer1.0");
            EXPECT_EQ(b.childPath("conv1"), "layer1.0.conv1");
            EXPECT_EQ(b.childPath(""), "layer1.0");
        }
        EXPECT_EQ(b.currentPath(), "layer1");
        auto moved = std::move(s);  // a moved-from guard must not pop twice
    }
    EXPECT_EQ(b.currentPath(), "");
}

TEST(ModelBuilder, LayersNameParametersLikePyTorch) {
    ts::ModelBuilder b("m");
    int x = b.input("x", {ts::Dim::batch(), 3, 32, 32});
    {
        auto s = b.scope("layer1");
        auto t = b.scope("0");
        x = b.conv2d("conv1", x, 8, 3, 1, 1, 1, false);
        x = b.batchNorm("bn1", x);
        x = b.relu(x, "relu");
        x = b.relu(x, "relu");
    }
    EXPECT_EQ(ts::shapeStr(value(b.graph(), "layer1.0.conv1.weight").shape), "[8, 3, 3, 3]");
    EXPECT_EQ(b.graph().findValue("layer1.0.conv1.bias"), -1);  // bias=False
    EXPECT_EQ(value(b.graph(), "layer1.0.bn1.weight").kind, ts::ValueKind::Parameter);
    EXPECT_EQ(value(b.graph(), "layer1.0.bn1.bias").kind, ts::ValueKind::Parameter);
    EXPECT_EQ(value(b.graph(), "layer1.0.bn1.running_mean").kind, ts::ValueKind::Buffer);
    EXPECT_EQ(value(b.graph(), "layer1.0.bn1.running_var").kind, ts::ValueKind::Buffer);

    const ts::Operation* conv = findOp(b.graph(), "layer1.0.conv1/Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->modulePath, "layer1.0.conv1");
    EXPECT_EQ(conv->attrInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(conv->attrInts("kernel_shape"), (std::vector<int64_t>{3, 3}));
    // The same module called twice: unique operation names with a running suffix.
    ASSERT_NE(findOp(b.graph(), "layer1.0.relu/Relu"), nullptr);
    ASSERT_NE(findOp(b.graph(), "layer1.0.relu/Relu_1"), nullptr);
    EXPECT_EQ(ts::shapeStr(b.graph().values[x].shape), "[N, 8, 32, 32]");
}

TEST(ModelBuilder, SmallConvNetParameterCount) {
    ts::ModelBuilder b("net");
    int x = b.input("image", {ts::Dim::batch(), 3, 28, 28});
    x = b.relu(b.conv2d("conv1", x, 16, 5));                              // 3*16*25 + 16 = 1216, -> 24x24
    x = b.maxPool2d(x, 2, 2);                                             // 12x12
    x = b.relu(b.batchNorm("bn", b.conv2d("conv2", x, 32, 3, 1, 1, 2)));  // groups=2
    x = b.flatten(b.adaptiveAvgPool2d(x, 1, 1), 1);
    x = b.linear("fc", x, 10);  // 32*10 + 10 = 330
    ts::Graph g = b.finish({x});
    // conv2 with groups=2: weight [32, 8, 3, 3] = 2304, bias 32; bn weight+bias 64.
    EXPECT_EQ(g.parameterCount(), 1216 + 2304 + 32 + 64 + 330);
    EXPECT_EQ(ts::shapeStr(g.values[g.outputs[0]].shape), "[N, 10]");
    EXPECT_EQ(ts::shapeStr(value(g, "conv2.weight").shape), "[32, 8, 3, 3]");
    EXPECT_EQ(ts::shapeStr(value(g, "fc.weight").shape), "[10, 32]");  // Gemm keeps PyTorch's [out, in]
    EXPECT_EQ(g.name, "net");
    EXPECT_NO_THROW(g.validate());
}

TEST(ModelBuilder, LinearOnSequencesUsesMatMulAndAdd) {
    ts::ModelBuilder b("m");
    int x = b.input("x", {ts::Dim::batch(), ts::Dim::seq(), 64});
    int y = b.linear("proj", x, 128);
    EXPECT_EQ(ts::shapeStr(b.graph().values[y].shape), "[N, S, 128]");
    EXPECT_NE(findOp(b.graph(), "proj/MatMul"), nullptr);
    EXPECT_NE(findOp(b.graph(), "proj/Add"), nullptr);
    EXPECT_EQ(b.graph().parameterCount(), 64 * 128 + 128);
}

TEST(ModelBuilder, TiedEmbeddingIsCountedOnce) {
    ts::ModelBuilder b("lm", ts::SymbolDefaults{1, 16});
    int ids = b.input("ids", {ts::Dim::batch(), ts::Dim::seq()}, ts::DType::Int64);
    int h = b.embedding("wte", ids, 100, 8);
    int w = b.graph().findValue("wte.weight");
    ASSERT_GE(w, 0);
    int logits = b.matmul(h, b.transpose(w, {1, 0}, "lm_head"), "lm_head");
    ts::Graph g = b.finish({logits});
    EXPECT_EQ(g.parameterCount(), 100 * 8);
    EXPECT_EQ(ts::shapeStr(g.values[logits].shape), "[N, S, 100]");
    EXPECT_EQ(g.defaults.seq, 16);
}

TEST(ModelBuilder, CallingALayerTwiceSharesItsParameters) {
    ts::ModelBuilder b("m");
    int x = b.input("x", {ts::Dim::batch(), 16});
    int y = b.linear("fc", b.linear("fc", x, 16), 16);
    ts::Graph g = b.finish({y});
    EXPECT_EQ(g.parameterCount(), 16 * 16 + 16);
    EXPECT_NE(findOp(g, "fc/Gemm_1"), nullptr);
}

TEST(ModelBuilder, LstmParametersMatchPyTorchCounts) {
    ts::ModelBuilder b("rnn");
    int x = b.input("x", {ts::Dim::seq(), ts::Dim::batch(), 32});
    int y = b.lstm("rnn", x, 64, 2, true);
    // nn.LSTM(32, 64, num_layers=2, bidirectional=True): per direction 4H*(I+H) + 8H,
    // layer 0 I = 32, layer 1 I = 128 (hand-computed from PyTorch's formula).
    const int64_t h = 64;
    const int64_t expected = 2 * (4 * h * (32 + h) + 8 * h) + 2 * (4 * h * (128 + h) + 8 * h);
    EXPECT_EQ(b.graph().parameterCount(), expected);
    EXPECT_EQ(ts::shapeStr(b.graph().values[y].shape), "[S, N, 128]");
    EXPECT_EQ(ts::shapeStr(value(b.graph(), "rnn.weight_ih_l1").shape), "[2, 256, 128]");
    const ts::Operation* op = findOp(b.graph(), "rnn/LSTM");
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->attrString("direction", ""), "bidirectional");
    EXPECT_EQ(op->attrInt("hidden_size", 0), 64);
}

TEST(ModelBuilder, GruParametersMatchPyTorchCounts) {
    ts::ModelBuilder b("rnn");
    int x = b.input("x", {ts::Dim::seq(), ts::Dim::batch(), 10});
    int y = b.gru("gru", x, 20);
    // nn.GRU(10, 20): 3H*(I+H) + 6H.
    EXPECT_EQ(b.graph().parameterCount(), 3 * 20 * (10 + 20) + 6 * 20);
    EXPECT_EQ(ts::shapeStr(b.graph().values[y].shape), "[S, N, 20]");
    const ts::Operation* op = findOp(b.graph(), "gru/GRU");
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->attrInt("linear_before_reset", 0), 1);
}

TEST(ModelBuilder, OnnxAttributesForDropoutSoftmaxAndPooling) {
    ts::ModelBuilder b("m");
    int x = b.input("x", {ts::Dim::batch(), 4, 8, 8});
    b.dropout("drop", x, 0.25);
    b.softmax(x, 1, "sm");
    b.maxPool2d(x, 3, 2, 1, true, "pool");
    const ts::Operation* d = findOp(b.graph(), "drop/Dropout");
    ASSERT_NE(d, nullptr);
    EXPECT_DOUBLE_EQ(d->attrFloat("ratio", 0), 0.25);
    EXPECT_EQ(d->attrInt("training_mode", 0), 1);
    EXPECT_EQ(findOp(b.graph(), "sm/Softmax")->attrInt("axis", -1), 1);
    const ts::Operation* p = findOp(b.graph(), "pool/MaxPool");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->attrInt("ceil_mode", 0), 1);
    EXPECT_EQ(ts::shapeStr(b.graph().values[p->outputs[0]].shape), "[N, 4, 5, 5]");
}

TEST(ModelBuilder, MismatchedShapesThrowShapeError) {
    ts::ModelBuilder b("m");
    int img = b.input("img", {ts::Dim::batch(), 3, 8, 8});
    int vec = b.input("vec", {ts::Dim::batch(), 5});
    EXPECT_THROW(b.add(img, vec), ts::ShapeError);                    // [N,3,8,8] + [N,5]
    EXPECT_THROW(b.conv2d("conv", vec, 4, 3), ts::ShapeError);        // Conv2d needs rank 4
    EXPECT_THROW(b.conv2d("g", img, 4, 1, 1, 0, 2), ts::ShapeError);  // 3 channels, 2 groups
    int wide = b.input("wide", {ts::Dim::batch(), 7});
    int y = b.linear("fc", vec, 4);
    EXPECT_THROW(b.linear("fc", wide, 4), ts::ShapeError);  // reuse of fc with another input width
    EXPECT_THROW(b.matmul(y, wide), ts::ShapeError);        // [N,4] x [N,7]
    EXPECT_THROW(b.dropout("d", y, 1.5), ts::ShapeError);
    EXPECT_THROW(b.embedding("emb", vec, 10, 4), ts::ShapeError);  // float ids
}
