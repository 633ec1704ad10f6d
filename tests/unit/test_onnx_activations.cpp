// Activations that PyTorch runs as one operator and its ONNX exporters write as several nodes
// (onnx_activations.cpp), and F.dropout at p = 0: what autograd saves and what a GPU launches must
// be what PyTorch's own F.silu, F.gelu and dropout do, not what the decomposed nodes would.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "onnx_model_maker.h"
#include "trainscope/core/costs.h"
#include "trainscope/core/model_loader.h"

using ts::testing::ModelMaker;

namespace {

constexpr int64_t kBatch = 2, kWidth = 8;
constexpr double kTensorBytes = kBatch * kWidth * 4;  // one [2, 8] fp32 tensor

std::vector<std::string> types(const ts::Graph& g) {
    std::vector<std::string> t;
    for (const auto& op : g.ops) t.push_back(op.type);
    return t;
}

// input -> Linear (Gemm, so that the activation's input is an activation) -> the nodes of `body` -> output "y".
ModelMaker linearThen() {
    ModelMaker m;
    m.input("input", onnx::TensorProto::FLOAT, {std::string("batch"), kWidth});
    m.weight("fc.weight", {kWidth, kWidth});
    ModelMaker::intAttr(m.node("Gemm", {"input", "fc.weight"}, {"x"}, "/fc/Gemm"), "transB", 1);
    return m;
}

double savedBytes(const ts::Graph& g) {
    return ts::computeCosts(g, kBatch).totals.activationBytes;
}

}  // namespace

TEST(OnnxActivations, SiluIsOneOperatorThatSavesItsInput) {
    // Both exporters write nn.SiLU as Mul(x, Sigmoid(x)), in either operand order.
    for (bool sigmoidFirst : {false, true}) {
        ModelMaker m = linearThen();
        m.node("Sigmoid", {"x"}, {"s"}, "/act/Sigmoid");
        m.node("Mul", sigmoidFirst ? std::vector<std::string>{"s", "x"} : std::vector<std::string>{"x", "s"}, {"y"},
               "/act/Mul");
        m.output("y");
        ts::Graph g = ts::importOnnx(m.save("silu.onnx"), {});
        ASSERT_EQ(types(g), (std::vector<std::string>{"Gemm", "Silu"}));
        EXPECT_EQ(g.ops[1].modulePath, "act");
        EXPECT_EQ(g.ops[1].inputs, g.ops[0].outputs);
        EXPECT_EQ(g.values[size_t(g.outputs.at(0))].name, "y");
        // The Gemm saves the input, SiLU its input x; the Sigmoid's output is no tensor of the model.
        EXPECT_DOUBLE_EQ(savedBytes(g), 2 * kTensorBytes);
    }
}

TEST(OnnxActivations, SigmoidGatesAndSharedSigmoidsStayNodes) {
    // Squeeze-and-excitation: x * sigmoid(y), a gate of another tensor.
    ModelMaker gate = linearThen();
    gate.node("Relu", {"x"}, {"r"}, "/relu/Relu");
    gate.node("Sigmoid", {"r"}, {"s"}, "/gate/Sigmoid");
    gate.node("Mul", {"x", "s"}, {"y"}, "/Mul");
    gate.output("y");
    EXPECT_EQ(types(ts::importOnnx(gate.save("gate.onnx"), {})),
              (std::vector<std::string>{"Gemm", "Relu", "Sigmoid", "Mul"}));

    // The sigmoid read again elsewhere is a tensor of the model: nothing is merged.
    ModelMaker shared = linearThen();
    shared.node("Sigmoid", {"x"}, {"s"}, "/act/Sigmoid");
    shared.node("Mul", {"x", "s"}, {"y"}, "/act/Mul");
    shared.node("Add", {"y", "s"}, {"z"}, "/Add");
    shared.output("z");
    EXPECT_EQ(types(ts::importOnnx(shared.save("shared.onnx"), {})),
              (std::vector<std::string>{"Gemm", "Sigmoid", "Mul", "Add"}));
}

TEST(OnnxActivations, LegacyErfGeluIsOneOperatorAndPythonsFormulaIsNot) {
    // torch.onnx's symbolic of F.gelu below opset 20: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5),
    // its constants as Constant nodes.
    ModelMaker m = linearThen();
    m.constant("sqrt2", float(std::sqrt(2.0)));
    m.constant("one", 1.0f);
    m.constant("half", 0.5f);
    m.node("Div", {"x", "sqrt2"}, {"d"}, "/act/Div");
    m.node("Erf", {"d"}, {"e"}, "/act/Erf");
    m.node("Add", {"e", "one"}, {"a"}, "/act/Add");
    m.node("Mul", {"x", "a"}, {"m"}, "/act/Mul");
    m.node("Mul", {"m", "half"}, {"y"}, "/act/Mul_1");
    m.output("y");
    ts::Graph g = ts::importOnnx(m.save("gelu.onnx"), {});
    ASSERT_EQ(types(g), (std::vector<std::string>{"Gemm", "Gelu"}));
    EXPECT_EQ(g.ops[1].attrString("approximate", ""), "none");
    EXPECT_EQ(g.ops[1].modulePath, "act");
    EXPECT_DOUBLE_EQ(savedBytes(g), 2 * kTensorBytes);

    // `x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))` written in Python runs (and is saved) node by node.
    ModelMaker py = linearThen();
    py.scalar("sqrt2", float(std::sqrt(2.0)));
    py.scalar("one", 1.0f);
    py.scalar("half", 0.5f);
    py.node("Mul", {"x", "half"}, {"h"}, "/act/Mul");
    py.node("Div", {"x", "sqrt2"}, {"d"}, "/act/Div");
    py.node("Erf", {"d"}, {"e"}, "/act/Erf");
    py.node("Add", {"e", "one"}, {"a"}, "/act/Add");
    py.node("Mul", {"h", "a"}, {"y"}, "/act/Mul_1");
    py.output("y");
    EXPECT_EQ(types(ts::importOnnx(py.save("gelu-python.onnx"), {})),
              (std::vector<std::string>{"Gemm", "Mul", "Div", "Erf", "Add", "Mul"}));
}

TEST(OnnxActivations, LegacyTanhGeluIsOneOperatorAndGeluNewIsNot) {
    // F.gelu(approximate="tanh") below opset 20:
    // Mul(0.5, Mul(x, Add(1, Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, Mul(x, Mul(x, x)))))))))
    ModelMaker m = linearThen();
    m.scalar("beta", float(std::sqrt(2.0 / M_PI)));
    m.scalar("kappa", 0.044715f);
    m.scalar("one", 1.0f);
    m.scalar("half", 0.5f);
    m.node("Mul", {"x", "x"}, {"sq"}, "/act/Mul");
    m.node("Mul", {"x", "sq"}, {"cube"}, "/act/Mul_1");
    m.node("Mul", {"kappa", "cube"}, {"kc"}, "/act/Mul_2");
    m.node("Add", {"x", "kc"}, {"sum"}, "/act/Add");
    m.node("Mul", {"beta", "sum"}, {"inner"}, "/act/Mul_3");
    m.node("Tanh", {"inner"}, {"t"}, "/act/Tanh");
    m.node("Add", {"one", "t"}, {"a"}, "/act/Add_1");
    m.node("Mul", {"x", "a"}, {"xa"}, "/act/Mul_4");
    m.node("Mul", {"half", "xa"}, {"y"}, "/act/Mul_5");
    m.output("y");
    ts::Graph g = ts::importOnnx(m.save("gelu-tanh.onnx"), {});
    ASSERT_EQ(types(g), (std::vector<std::string>{"Gemm", "Gelu"}));
    EXPECT_EQ(g.ops[1].attrString("approximate", ""), "tanh");
    EXPECT_EQ(g.ops[1].inputs, g.ops[0].outputs);

    // transformers' gelu_new, `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * torch.pow(x, 3))))`, is
    // Python: PyTorch runs its nodes one by one.
    ModelMaker py = linearThen();
    py.scalar("three", 3.0f);
    py.scalar("beta", float(std::sqrt(2.0 / M_PI)));
    py.scalar("kappa", 0.044715f);
    py.scalar("one", 1.0f);
    py.scalar("half", 0.5f);
    py.node("Mul", {"half", "x"}, {"h"}, "/act/Mul");
    py.node("Pow", {"x", "three"}, {"cube"}, "/act/Pow");
    py.node("Mul", {"kappa", "cube"}, {"kc"}, "/act/Mul_1");
    py.node("Add", {"x", "kc"}, {"sum"}, "/act/Add");
    py.node("Mul", {"beta", "sum"}, {"inner"}, "/act/Mul_2");
    py.node("Tanh", {"inner"}, {"t"}, "/act/Tanh");
    py.node("Add", {"one", "t"}, {"a"}, "/act/Add_1");
    py.node("Mul", {"h", "a"}, {"y"}, "/act/Mul_3");
    py.output("y");
    EXPECT_EQ(types(ts::importOnnx(py.save("gelu-new.onnx"), {})).size(), 9u);
}

TEST(OnnxActivations, DropoutOfRatioZeroIsItsInput) {
    // The legacy exporter in training mode writes F.dropout(p=0.0) as Dropout(ratio 0), which returns
    // its input: the Softmax's output that the MatMul saves is the tensor the Softmax saves, kept once.
    auto attention = [](float ratio, bool asOutput) {
        ModelMaker m = linearThen();
        m.scalar("ratio", ratio);
        m.node("Softmax", {"x"}, {"p"}, "/attn/Softmax");
        m.node("Dropout", {"p", "ratio"}, {"pd"}, "/attn/dropout/Dropout");
        if (asOutput) {
            m.output("pd");
        } else {
            m.node("MatMul", {"pd", "fc.weight"}, {"y"}, "/attn/MatMul");
            m.output("y");
        }
        return ts::importOnnx(m.save("dropout.onnx"), {});
    };
    ts::Graph off = attention(0.0f, false);
    ASSERT_EQ(types(off), (std::vector<std::string>{"Gemm", "Softmax", "MatMul"}));
    EXPECT_EQ(off.ops[2].inputs[0], off.ops[1].outputs[0]);
    EXPECT_DOUBLE_EQ(savedBytes(off), 2 * kTensorBytes);  // the Gemm's input, the probabilities

    ts::Graph on = attention(0.1f, false);
    ASSERT_EQ(types(on), (std::vector<std::string>{"Gemm", "Softmax", "Dropout", "MatMul"}));
    // Its one-byte mask, and the dropped probabilities the MatMul saves.
    EXPECT_DOUBLE_EQ(savedBytes(on), 3 * kTensorBytes + kBatch * kWidth);

    ts::Graph last = attention(0.0f, true);  // a graph output under the dropout's name
    ASSERT_EQ(types(last), (std::vector<std::string>{"Gemm", "Softmax"}));
    EXPECT_EQ(last.outputs.at(0), last.ops[1].outputs[0]);
}

TEST(OnnxActivations, CastToItsOwnDtypeIsItsInput) {
    // transformers' eager attention: softmax(..., dtype=float32).to(query.dtype), which in an fp32 model is
    // the same tensor (Tensor.to returns self): the MatMul saves the probabilities the Softmax saves.
    auto attention = [](int to) {
        ModelMaker m = linearThen();
        m.node("Softmax", {"x"}, {"p"}, "/attn/Softmax");
        ModelMaker::intAttr(m.node("Cast", {"p"}, {"pc"}, "/attn/Cast"), "to", to);
        m.node("MatMul", {"pc", "fc.weight"}, {"y"}, "/attn/MatMul");
        m.output("y");
        return ts::importOnnx(m.save("cast.onnx"), {});
    };
    ts::Graph same = attention(onnx::TensorProto::FLOAT);
    ASSERT_EQ(types(same), (std::vector<std::string>{"Gemm", "Softmax", "MatMul"}));
    EXPECT_EQ(same.ops[2].inputs[0], same.ops[1].outputs[0]);
    EXPECT_DOUBLE_EQ(savedBytes(same), 2 * kTensorBytes);

    // A real conversion is an operator, and the MatMul then saves its 16-bit output.
    ts::Graph half = attention(onnx::TensorProto::FLOAT16);
    ASSERT_EQ(types(half), (std::vector<std::string>{"Gemm", "Softmax", "Cast", "MatMul"}));
    EXPECT_DOUBLE_EQ(savedBytes(half), 2 * kTensorBytes + kTensorBytes / 2);
}
