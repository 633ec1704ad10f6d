// Activations that PyTorch runs as one operator and its ONNX exporters write as several nodes
// (onnx_fused_operators.cpp), and F.dropout at p = 0: what autograd saves and what a GPU launches must
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

TEST(OnnxFusedOperators, SiluIsOneOperatorThatSavesItsInput) {
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

TEST(OnnxFusedOperators, SigmoidGatesAndSharedSigmoidsStayNodes) {
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

TEST(OnnxFusedOperators, LegacyErfGeluIsOneOperatorAndPythonsFormulaIsNot) {
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

TEST(OnnxFusedOperators, LegacyTanhGeluIsOneOperatorAndGeluNewIsNot) {
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

TEST(OnnxFusedOperators, DropoutOfRatioZeroIsItsInput) {
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

TEST(OnnxFusedOperators, CastToItsOwnDtypeIsItsInput) {
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

namespace {

// q, k and v [batch, heads 2, seq 4, dim 8] from one input, then the nodes of an attention.
ModelMaker attentionInputs() {
    ModelMaker m;
    m.input("x", onnx::TensorProto::FLOAT, {std::string("batch"), 2, 4, 8});
    for (const char* name : {"wq", "wk", "wv"}) m.weight(name, {8, 8});
    m.node("MatMul", {"x", "wq"}, {"q"}, "/attn/q/MatMul");
    m.node("MatMul", {"x", "wk"}, {"k"}, "/attn/k/MatMul");
    m.node("MatMul", {"x", "wv"}, {"v"}, "/attn/v/MatMul");
    return m;
}

const ts::Operation* attention(const ts::Graph& g) {
    for (const auto& op : g.ops)
        if (op.type == "ScaledDotProductAttention") return &op;
    return nullptr;
}

}  // namespace

TEST(OnnxFusedOperators, LegacySdpaIsOneAttentionThatSavesNoProbabilities) {
    // The legacy exporter's F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p=0.1): both sides
    // scaled by the sqrt of a scale it computes (two Sqrt nodes), k^T a Transpose, the mask added to the
    // scores, the Softmax over the last axis, a Dropout of the probabilities, the product with v.
    ModelMaker m = attentionInputs();
    m.input("mask", onnx::TensorProto::FLOAT, {int64_t(4), 4});
    m.scalar("scale", 0.125f);
    m.scalar("ratio", 0.1f);
    m.node("Sqrt", {"scale"}, {"sq"}, "/attn/Sqrt_1");
    m.node("Sqrt", {"scale"}, {"sk"}, "/attn/Sqrt_2");
    ModelMaker::intsAttr(m.node("Transpose", {"k"}, {"kt"}, "/attn/Transpose"), "perm", {0, 1, 3, 2});
    m.node("Mul", {"q", "sq"}, {"qs"}, "/attn/Mul");
    m.node("Mul", {"kt", "sk"}, {"ks"}, "/attn/Mul_1");
    m.node("MatMul", {"qs", "ks"}, {"s"}, "/attn/MatMul");
    m.node("Add", {"s", "mask"}, {"sm"}, "/attn/Add");
    ModelMaker::intAttr(m.node("Softmax", {"sm"}, {"p"}, "/attn/Softmax"), "axis", -1);
    m.node("Dropout", {"p", "ratio"}, {"pd"}, "/attn/Dropout");
    m.node("MatMul", {"pd", "v"}, {"y"}, "/attn/MatMul_1");
    m.output("y");
    ts::Graph g = ts::importOnnx(m.save("sdpa-legacy.onnx"), {});
    ASSERT_EQ(types(g), (std::vector<std::string>{"MatMul", "MatMul", "MatMul", "ScaledDotProductAttention"}));
    const ts::Operation& a = g.ops[3];
    EXPECT_EQ(a.modulePath, "attn");
    ASSERT_EQ(a.inputs.size(), 4u);
    EXPECT_EQ(a.inputs[0], g.ops[0].outputs[0]);
    EXPECT_EQ(a.inputs[1], g.ops[1].outputs[0]);
    EXPECT_EQ(a.inputs[2], g.ops[2].outputs[0]);
    EXPECT_EQ(g.values[size_t(a.inputs[3])].name, "mask");
    EXPECT_EQ(a.attrString("backend", ""), "efficient");  // PyTorch's flash kernel takes no mask
    EXPECT_NEAR(a.attrFloat("dropout", 0), 0.1, 1e-6);
    // x for the three projections; q, k, v, the output, a logsumexp per query and the mask (the
    // memory-efficient kernel's backward reads it again) for the attention; no [4, 4] scores or
    // probabilities of any head, no dropout mask (the kernel draws it again from its seed).
    const double qkv = 2 * 2 * 4 * 8 * 4;
    EXPECT_DOUBLE_EQ(savedBytes(g), qkv + 4 * qkv + 2 * 2 * 4 * 4 + 4 * 4 * 4);
}

TEST(OnnxFusedOperators, TorchExportSdpaWithItsNanGuardIsOneAttention) {
    // The torch.export-based exporter: one scale constant on both sides, k^T as Reshape, Transpose and
    // Reshape, the NaN guard of a boolean mask (Where(IsNaN(p), 0, p)).
    ModelMaker m = attentionInputs();
    m.input("mask", onnx::TensorProto::FLOAT, {int64_t(4), 4});
    m.scalar("c", 0.5946f);
    m.scalar("zero", 0.0f);
    m.ints("flat", {-1, 4, 8});
    m.ints("back", {-1, 2, 8, 4});
    m.node("Reshape", {"k", "flat"}, {"k3"}, "node_Reshape_1");
    ModelMaker::intsAttr(m.node("Transpose", {"k3"}, {"k3t"}, "node_Transpose_2"), "perm", {0, 2, 1});
    m.node("Reshape", {"k3t", "back"}, {"kt"}, "node_Reshape_3");
    m.node("Mul", {"q", "c"}, {"qs"}, "node_Mul_4");
    m.node("Mul", {"kt", "c"}, {"ks"}, "node_Mul_5");
    m.node("MatMul", {"qs", "ks"}, {"s"}, "node_MatMul_6");
    m.node("Add", {"s", "mask"}, {"sm"}, "node_Add_7");
    ModelMaker::intAttr(m.node("Softmax", {"sm"}, {"p"}, "node_Softmax_8"), "axis", -1);
    m.node("IsNaN", {"p"}, {"nan"}, "node_IsNaN_9");
    m.node("Where", {"nan", "zero", "p"}, {"pg"}, "node_Where_10");
    m.node("MatMul", {"pg", "v"}, {"y"}, "node_scaled_dot_product_attention");
    m.output("y");
    ts::Graph g = ts::importOnnx(m.save("sdpa-dynamo.onnx"), {});
    ASSERT_EQ(types(g), (std::vector<std::string>{"MatMul", "MatMul", "MatMul", "ScaledDotProductAttention"}));
    EXPECT_EQ(g.ops[3].inputs[1], g.ops[1].outputs[0]);  // the key before its transpose
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.outputs.at(0))].shape), "[N, 2, 4, 8]");
}

TEST(OnnxFusedOperators, EagerAttentionAndOtherShapesKeepTheirNodes) {
    // transformers' eager attention scales the scores after the product (matmul(q, k^T) * scaling): PyTorch
    // runs and saves it node by node, as it is written.
    ModelMaker eager = attentionInputs();
    eager.scalar("scaling", 0.35f);
    ModelMaker::intsAttr(eager.node("Transpose", {"k"}, {"kt"}, "/attn/Transpose"), "perm", {0, 1, 3, 2});
    eager.node("MatMul", {"q", "kt"}, {"s"}, "/attn/MatMul");
    eager.node("Mul", {"s", "scaling"}, {"ss"}, "/attn/Mul");
    ModelMaker::intAttr(eager.node("Softmax", {"ss"}, {"p"}, "/attn/Softmax"), "axis", -1);
    eager.node("MatMul", {"p", "v"}, {"y"}, "/attn/MatMul_1");
    eager.output("y");
    ts::Graph g = ts::importOnnx(eager.save("sdpa-eager.onnx"), {});
    EXPECT_EQ(attention(g), nullptr);
    EXPECT_EQ(g.ops.size(), 8u);

    // The sdpa nodes around tensors of rank 3 ([batch, seq, dim], no heads) are imported as written, in order.
    ModelMaker flat;
    flat.input("x", onnx::TensorProto::FLOAT, {std::string("batch"), 4, 8});
    flat.scalar("c", 0.5946f);
    flat.ints("back", {-1, 8, 4});
    flat.ints("flat", {-1, 4, 8});
    flat.node("Reshape", {"x", "flat"}, {"x3"}, "/attn/Reshape");
    ModelMaker::intsAttr(flat.node("Transpose", {"x3"}, {"x3t"}, "/attn/Transpose_1"), "perm", {0, 2, 1});
    flat.node("Reshape", {"x3t", "back"}, {"kt"}, "/attn/Reshape_1");
    flat.node("Mul", {"x", "c"}, {"qs"}, "/attn/Mul");
    flat.node("Mul", {"kt", "c"}, {"ks"}, "/attn/Mul_1");
    flat.node("MatMul", {"qs", "ks"}, {"s"}, "/attn/MatMul");
    ModelMaker::intAttr(flat.node("Softmax", {"s"}, {"p"}, "/attn/Softmax"), "axis", -1);
    flat.node("MatMul", {"p", "x"}, {"y"}, "/attn/MatMul_1");
    flat.output("y");
    ts::Graph h = ts::importOnnx(flat.save("sdpa-rank3.onnx"), {});
    EXPECT_EQ(attention(h), nullptr);
    EXPECT_EQ(types(h), (std::vector<std::string>{"Reshape", "Transpose", "Reshape", "Mul", "Mul", "MatMul", "Softmax",
                                                  "MatMul"}));
}

TEST(OnnxFusedOperators, StaticExportsKeysWithoutTheirHeadsAreViewedAsHeads) {
    // With every size fixed, the torch.export-based exporter folds the key's [N, H, S, D] view away. A
    // grouped-query key reaches its k^T as repeat_kv expanded it ([N, 1 kv head, 2 copies, 4, 8] ->
    // [-1, 4, 8] -> transposed -> [N, 2, 8, 4]); nn.MultiheadAttention's key is [N * H, S, D] already.
    // Either is one attention reading the key as [N, 2, 4, 8], which it saves as PyTorch's does.
    auto finish = [](ModelMaker& m, const std::string& keyFlat) {
        m.scalar("c", 0.5946f);
        m.ints("back", {-1, 2, 8, 4});
        ModelMaker::intsAttr(m.node("Transpose", {keyFlat}, {"k3t"}, "node_Transpose_2"), "perm", {0, 2, 1});
        m.node("Reshape", {"k3t", "back"}, {"kt"}, "node_Reshape_3");
        m.node("Mul", {"q", "c"}, {"qs"}, "node_Mul_4");
        m.node("Mul", {"kt", "c"}, {"ks"}, "node_Mul_5");
        m.node("MatMul", {"qs", "ks"}, {"s"}, "node_MatMul_6");
        ModelMaker::intAttr(m.node("Softmax", {"s"}, {"p"}, "node_Softmax_8"), "axis", -1);
        m.node("MatMul", {"p", "v"}, {"y"}, "node_scaled_dot_product_attention");
        m.output("y");
    };
    const double heads = 2 * 2 * 4 * 8 * 4;  // one [2, 2, 4, 8] fp32 tensor at batch 2
    const double lse = 2 * 2 * 4 * 4;        // a logsumexp per query

    ModelMaker gqa;
    gqa.input("x", onnx::TensorProto::FLOAT, {std::string("batch"), 2, 4, 8});
    gqa.input("xkv", onnx::TensorProto::FLOAT, {std::string("batch"), 1, 4, 8});
    for (const char* name : {"wq", "wk", "wv"}) gqa.weight(name, {8, 8});
    gqa.ints("axis2", {2});
    gqa.ints("copies", {1, 1, 2, 1, 1});
    gqa.ints("flat", {-1, 4, 8});
    gqa.ints("heads", {-1, 2, 4, 8});
    gqa.node("MatMul", {"x", "wq"}, {"q"}, "node_linear");
    gqa.node("MatMul", {"xkv", "wk"}, {"k"}, "node_linear_1");
    gqa.node("MatMul", {"xkv", "wv"}, {"vkv"}, "node_linear_2");
    gqa.node("Unsqueeze", {"k", "axis2"}, {"k5"}, "node_unsqueeze");
    gqa.node("Expand", {"k5", "copies"}, {"kx"}, "node_expand");
    gqa.node("Unsqueeze", {"vkv", "axis2"}, {"v5"}, "node_unsqueeze_1");
    gqa.node("Expand", {"v5", "copies"}, {"vx"}, "node_expand_1");
    gqa.node("Reshape", {"vx", "heads"}, {"v"}, "node__unsafe_view");
    gqa.node("Reshape", {"kx", "flat"}, {"k3"}, "node_Reshape_1");
    finish(gqa, "k3");
    ts::Graph g = ts::importOnnx(gqa.save("sdpa-static-gqa.onnx"), {});
    const ts::Operation* a = attention(g);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(ts::shapeStr(g.values[size_t(a->inputs[1])].shape), "[N, 2, 4, 8]");
    const ts::Operation& view = g.ops[size_t(g.values[size_t(a->inputs[1])].producer)];
    EXPECT_EQ(view.type, "Reshape");
    EXPECT_EQ(g.values[size_t(view.inputs[0])].name, "kx");  // the expanded key itself
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.outputs.at(0))].shape), "[N, 2, 4, 8]");
    // x for q's projection, xkv once for k's and v's, and q, the repeated k and v, the output and the
    // logsumexp for the attention: no [4, 4] scores or probabilities.
    EXPECT_DOUBLE_EQ(savedBytes(g), heads + heads / 2 + 4 * heads + lse);

    // nn.MultiheadAttention's key, every size fixed as the static export fixes it (batch 2, 2 heads).
    auto mha = [&](int64_t keyRows) {
        ModelMaker m;
        m.input("x", onnx::TensorProto::FLOAT, {int64_t(2), 2, 4, 8});
        m.input("xk", onnx::TensorProto::FLOAT, {keyRows, 4, 8});
        for (const char* name : {"wq", "wk", "wv"}) m.weight(name, {8, 8});
        m.node("MatMul", {"x", "wq"}, {"q"}, "node_linear");
        m.node("MatMul", {"xk", "wk"}, {"k3"}, "node_linear_1");
        m.node("MatMul", {"x", "wv"}, {"v"}, "node_linear_2");
        finish(m, "k3");
        return ts::importOnnx(m.save("sdpa-static-mha-" + std::to_string(keyRows) + ".onnx"), {});
    };
    ts::Graph h = mha(4);  // [N * H, S, D]
    ASSERT_NE(attention(h), nullptr);
    EXPECT_EQ(h.values[size_t(h.ops[size_t(h.values[size_t(attention(h)->inputs[1])].producer)].inputs[0])].name, "k3");
    // x for q's and v's projections, xk for k's; q, k, v, the output and the logsumexp.
    EXPECT_DOUBLE_EQ(savedBytes(h), 2 * heads + 4 * heads + lse);
    // A key of other elements than [N, H, S, D] (one row of heads: [2, 4, 8]) is no attention's key.
    ts::Graph other = mha(2);
    EXPECT_EQ(attention(other), nullptr);
    EXPECT_EQ(other.ops.size(), 10u);
}
