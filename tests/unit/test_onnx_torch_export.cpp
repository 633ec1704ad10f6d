// The ONNX importer on files shaped like those of the torch.export-based exporter (torch.onnx.export's
// default since PyTorch 2.9): its graph signature says which initializers are parameters and buffers, and
// what its optimizer folded, merged, dropped or fused is put back, so that the parameter count is
// PyTorch's (tests/real_models/generate_exports.py checks the real exporter's files).
#include <gtest/gtest.h>

#include <algorithm>

#include "onnx_model_maker.h"
#include "trainscope/core/costs.h"
#include "trainscope/core/model_loader.h"

using ts::testing::ModelMaker;

namespace {

// The value of that name ("absent" as its shape and a Constant kind when there is none).
const ts::Value& valueNamed(const ts::Graph& g, const std::string& name) {
    static ts::Value absent;
    absent.kind = ts::ValueKind::Constant;
    absent.shape.clear();
    absent.name = "absent";
    int i = g.findValue(name);
    return i < 0 ? absent : g.values[size_t(i)];
}

std::vector<const ts::Operation*> opsOfType(const ts::Graph& g, const std::string& type) {
    std::vector<const ts::Operation*> out;
    for (const auto& op : g.ops)
        if (op.type == type) out.push_back(&op);
    return out;
}

std::string fx(const std::string& aten, const std::string& args) {
    return "%out : [num_users=1] = call_function[target=torch.ops.aten." + aten + "](args = (" + args +
           "), kwargs = {})";
}

}  // namespace

// A Llama-like block: the embedding is a parameter, the linear layer's weight a folded transpose of
// one, the rotary table a constant folded from the inv_freq buffer, the embedding scale a buffer.
TEST(OnnxTorchExport, SignatureSaysWhatIsAParameter) {
    ModelMaker m(20);
    m.input("input_ids", onnx::TensorProto::INT64, {2, 4});
    m.signature(
        "\n# inputs\np_embed_weight: PARAMETER target='embed.weight'\n"
        "p_proj_weight: PARAMETER target='proj.weight'\n"
        "b_rope_inv_freq: BUFFER target='rope.inv_freq' persistent=False\n"
        "b_embed_scale: BUFFER target='embed_scale' persistent=False\ninput_ids: USER_INPUT\n");
    m.weight("embed.weight", {10, 8});
    m.weight("val_5", {8, 6});  // proj.weight [6, 8], transposed by the optimizer
    m.foldedFrom("val_5", "['proj.weight']");
    m.weight("unsqueeze_3", {1, 4, 6});
    m.foldedFrom("unsqueeze_3", "['arange', 'cos', 'rope.inv_freq', 'val_1']");
    m.weight("embed_scale", {});
    m.node("Gather", {"embed.weight", "input_ids"}, {"e"}, "node_embedding");
    m.node("Mul", {"e", "embed_scale"}, {"s"}, "node_mul");
    auto* mm = m.node("MatMul", {"s", "val_5"}, {"h"}, "node_linear");
    ModelMaker::nameScopes(mm, "['', 'proj', 'linear']");
    m.node("Mul", {"h", "unsqueeze_3"}, {"out"}, "node_mul_1");
    m.output("out");

    ts::Graph g = ts::importOnnx(m.save("signature.onnx"), {});
    EXPECT_EQ(g.parameterCount(), 10 * 8 + 6 * 8);  // not the rotary table's 24, nor the scale
    EXPECT_EQ(valueNamed(g, "proj.weight").kind, ts::ValueKind::Parameter);
    EXPECT_EQ(valueNamed(g, "embed_scale").kind, ts::ValueKind::Buffer);
    EXPECT_EQ(valueNamed(g, "unsqueeze_3").name, "unsqueeze_3");
    EXPECT_EQ(valueNamed(g, "unsqueeze_3").kind, ts::ValueKind::Constant);
    EXPECT_EQ(opsOfType(g, "MatMul").at(0)->modulePath, "proj");
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.outputs[0])].shape), "[N, 4, 6]");
    EXPECT_TRUE(g.notes.empty());
}

// Freshly initialised norms hold equal tensors, which the optimizer merges into one initializer; the FX
// node of each layer still names its own parameters, and a norm read through a folded "1 + weight"
// (Gemma) is the one of the node's module.
TEST(OnnxTorchExport, MergedInitializersGetTheirParametersBack) {
    ModelMaker m(20);
    m.input("x", onnx::TensorProto::FLOAT, {2, 8});
    m.signature(
        "p_ln1_weight: PARAMETER target='ln1.weight'\np_ln1_bias: PARAMETER target='ln1.bias'\n"
        "p_ln2_weight: PARAMETER target='ln2.weight'\np_ln2_bias: PARAMETER target='ln2.bias'\n"
        "p_norm1_weight: PARAMETER target='norm1.weight'\np_norm2_weight: PARAMETER target='norm2.weight'\n"
        "x: USER_INPUT\n");
    m.weight("ln1.weight", {8});
    m.weight("ln1.bias", {8});
    m.weight("add_4", {8});
    m.foldedFrom("add_4", "['norm1.weight', 'val_3']");
    auto* ln1 = m.node("LayerNormalization", {"x", "ln1.weight", "ln1.bias"}, {"a"}, "node_layer_norm");
    ModelMaker::fxNode(ln1, fx("layer_norm.default", "%x, [8], %p_ln1_weight, %p_ln1_bias, 1e-05"));
    auto* ln2 = m.node("LayerNormalization", {"a", "ln1.weight", "ln1.bias"}, {"b"}, "node_layer_norm_1");
    ModelMaker::fxNode(ln2, fx("layer_norm.default", "%a, [8], %p_ln2_weight, %p_ln2_bias, 1e-05"));
    auto* n1 = m.node("Mul", {"b", "add_4"}, {"c"}, "node_mul");
    ModelMaker::nameScopes(n1, "['', 'norm1', 'mul']");
    auto* n2 = m.node("Mul", {"c", "add_4"}, {"d"}, "node_mul_1");
    ModelMaker::nameScopes(n2, "['', 'norm2', 'mul_1']");
    ModelMaker::fxNode(n2, fx("mul.Tensor", "%c, %add_9"));
    m.output("d");

    ts::Graph g = ts::importOnnx(m.save("merged.onnx"), {});
    EXPECT_EQ(g.parameterCount(), 6 * 8);  // 3 * 8 as the file has them
    EXPECT_EQ(ts::computeCosts(g, 2).totals.parameters, 6 * 8);
    auto lns = opsOfType(g, "LayerNormalization");
    ASSERT_EQ(lns.size(), 2u);
    EXPECT_EQ(g.values[size_t(lns[1]->inputs[1])].name, "ln2.weight");
    EXPECT_EQ(g.values[size_t(lns[1]->inputs[2])].name, "ln2.bias");
    EXPECT_EQ(g.values[size_t(opsOfType(g, "Mul").at(1)->inputs[1])].name, "norm2.weight");
}

// Inference-mode exports fold BatchNorm into the convolution before it, and drop all-zero biases (a
// Linear's, here): training runs Conv then BatchNormalization, and PyTorch counts the norm and the bias.
TEST(OnnxTorchExport, FusedBatchNormAndDroppedBiasAreRestored) {
    ModelMaker m(20);
    m.input("x", onnx::TensorProto::FLOAT, {2, 3, 8, 8});
    m.signature(
        "p_conv_weight: PARAMETER target='conv.weight'\np_bn_weight: PARAMETER target='bn.weight'\n"
        "p_bn_bias: PARAMETER target='bn.bias'\nb_bn_running_mean: BUFFER target='bn.running_mean'\n"
        "b_bn_running_var: BUFFER target='bn.running_var'\np_fc_weight: PARAMETER target='fc.weight'\n"
        "p_fc_bias: PARAMETER target='fc.bias'\nx: USER_INPUT\n");
    m.weight("conv.weight", {4, 3, 3, 3});
    m.weight("conv.weight_bias", {4});  // the fused bias: the norm's, not a parameter of its own
    m.weight("fc.weight", {5, 256});
    auto* conv = m.node("Conv", {"x", "conv.weight", "conv.weight_bias"}, {"y"}, "node_Conv_5");
    ModelMaker::intsAttr(conv, "pads", {1, 1, 1, 1});
    ModelMaker::fxNode(conv,
                       fx("_native_batch_norm_legit_no_training.default",
                          "%conv2d, %p_bn_weight, %p_bn_bias, %b_bn_running_mean, %b_bn_running_var, 0.1, 1e-05"));
    ModelMaker::nameScopes(conv, "['', 'bn', '_native_batch_norm_legit_no_training']");
    m.node("Flatten", {"y"}, {"f"}, "node_flatten");
    auto* gemm = m.node("Gemm", {"f", "fc.weight"}, {"out"}, "node_Gemm_7");
    ModelMaker::intAttr(gemm, "transB", 1);
    ModelMaker::fxNode(gemm, fx("linear.default", "%flatten, %p_fc_weight, %p_fc_bias"));
    m.output("out");

    ts::Graph g = ts::importOnnx(m.save("fused.onnx"), {});
    EXPECT_EQ(g.parameterCount(), 4 * 3 * 9 + 4 + 4 + 5 * 256 + 5);
    auto convs = opsOfType(g, "Conv");
    auto norms = opsOfType(g, "BatchNormalization");
    ASSERT_EQ(convs.size(), 1u);
    ASSERT_EQ(norms.size(), 1u);
    EXPECT_EQ(convs[0]->modulePath, "conv");
    EXPECT_TRUE(convs[0]->inputs.size() < 3 || convs[0]->inputs[2] < 0);  // conv had no bias
    EXPECT_EQ(norms[0]->modulePath, "bn");
    EXPECT_EQ(norms[0]->inputs[0], convs[0]->outputs[0]);
    EXPECT_EQ(g.values[size_t(norms[0]->inputs[3])].kind, ts::ValueKind::Buffer);
    EXPECT_EQ(g.values[size_t(norms[0]->inputs[4])].name, "bn.running_var");
    const ts::Operation* fc = opsOfType(g, "Gemm").at(0);
    ASSERT_GE(fc->inputs.size(), 3u);
    EXPECT_EQ(ts::shapeStr(g.values[size_t(fc->inputs[2])].shape), "[5]");
    // The Conv's FLOPs have no bias add; the Gemm's have one again (docs/costs.md).
    ts::ModelCosts c = ts::computeCosts(g, 2);
    double convFlops = 0, gemmFlops = 0;
    for (const auto& l : c.layers) {
        if (g.ops[size_t(l.op)].type == "Conv") convFlops = l.cost.forwardFlops;
        if (g.ops[size_t(l.op)].type == "Gemm") gemmFlops = l.cost.forwardFlops;
    }
    EXPECT_DOUBLE_EQ(convFlops, 2.0 * 2 * 4 * 8 * 8 * 3 * 9);
    EXPECT_DOUBLE_EQ(gemmFlops, 2.0 * 2 * 256 * 5 + 2 * 5);
}

// ViT's class token, expanded to the batch of a static export and folded: one row is the parameter, and
// an Expand keeps the batch symbolic.
TEST(OnnxTorchExport, ClassTokenExpandedToTheBatchIsOneRow) {
    ModelMaker m(20);
    m.input("x", onnx::TensorProto::FLOAT, {2, 4, 8});
    m.signature("p_class_token: PARAMETER target='class_token'\nx: USER_INPUT\n");
    m.weight("expand", {2, 1, 8});
    m.foldedFrom("expand", "['class_token', 'val_6', 'val_7']");
    ModelMaker::intAttr(m.node("Concat", {"expand", "x"}, {"y"}, "node_cat"), "axis", 1);
    m.output("y");

    ts::Graph g = ts::importOnnx(m.save("class_token.onnx"), {});
    EXPECT_EQ(g.parameterCount(), 8);
    EXPECT_EQ(ts::shapeStr(valueNamed(g, "class_token").shape), "[1, 1, 8]");
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.outputs[0])].shape), "[N, 5, 8]");
    ASSERT_EQ(opsOfType(g, "Expand").size(), 1u);
}

// Tables read at positions the export fixed: a relative-position bias gathered by its index buffer
// (Swin, MaxViT) has (2W-1)^2 rows for a W x W window; a position table gathered at the sequence length
// keeps only the rows that length reads, which a note says.
TEST(OnnxTorchExport, GatheredTablesAreCountedOrNoted) {
    ModelMaker m(20);
    m.input("scores", onnx::TensorProto::FLOAT, {2, 3, 49, 49});
    m.input("tokens", onnx::TensorProto::FLOAT, {2, 16, 8});
    m.signature(
        "p_attn_relative_position_bias_table: PARAMETER target='attn.relative_position_bias_table'\n"
        "b_attn_relative_position_index: BUFFER target='attn.relative_position_index'\n"
        "p_wpe_weight: PARAMETER target='wpe.weight'\nscores: USER_INPUT\ntokens: USER_INPUT\n");
    m.weight("unsqueeze", {1, 3, 49, 49});
    m.foldedFrom("unsqueeze",
                 "['attn.relative_position_bias_table', 'attn.relative_position_index', 'index', "
                 "'permute_1', 'val_4']");
    m.weight("embedding_1", {1, 16, 8});
    m.foldedFrom("embedding_1", "['arange', 'val_1', 'wpe.weight']");
    m.node("Add", {"scores", "unsqueeze"}, {"biased"}, "node_add");
    m.node("Add", {"tokens", "embedding_1"}, {"positioned"}, "node_add_1");
    m.output("biased");
    m.output("positioned");

    ts::Graph g = ts::importOnnx(m.save("gathered.onnx"), {});
    EXPECT_EQ(g.parameterCount(), 13 * 13 * 3 + 16 * 8);
    EXPECT_EQ(ts::shapeStr(valueNamed(g, "attn.relative_position_bias_table").shape), "[169, 3]");
    ASSERT_EQ(g.notes.size(), 1u);
    EXPECT_NE(g.notes[0].find("'wpe.weight' is only partly in the file"), std::string::npos) << g.notes[0];
    EXPECT_EQ(opsOfType(g, "Gather").size(), 1u);  // the table's rows; the position rows are the parameter
}

// Swin V2's continuous position bias: a linear layer run on a coordinate buffer, which the exporter folds
// into a constant (the layer's output, not its weight's elements). The weight is not in the file, which a
// note says; the layer's bias, added by the node that stands for the linear layer, is counted.
TEST(OnnxTorchExport, LayerRunOnABufferIsNoParameter) {
    ModelMaker m(20);
    m.input("scores", onnx::TensorProto::FLOAT, {2, 15, 15, 16});
    m.signature(
        "p_cpb_0_weight: PARAMETER target='cpb.0.weight'\np_cpb_0_bias: PARAMETER target='cpb.0.bias'\n"
        "b_relative_coords_table: BUFFER target='relative_coords_table' persistent=True\nscores: USER_INPUT\n");
    m.weight("val_3", {1, 15, 15, 16});
    m.foldedFrom("val_3", "['cpb.0.weight', 'relative_coords_table', 'val_2']");
    m.weight("cpb.0.bias", {16});
    ModelMaker::fxNode(m.node("Add", {"val_3", "cpb.0.bias"}, {"linear"}, "node_linear"),
                       "%linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = "
                       "(%b_relative_coords_table, %p_cpb_0_weight, %p_cpb_0_bias), kwargs = {})");
    m.node("Add", {"scores", "linear"}, {"biased"}, "node_add");
    m.output("biased");
    ts::Graph g = ts::importOnnx(m.save("layer_of_buffer.onnx"), {});
    EXPECT_EQ(g.parameterCount(), 16);  // the bias alone
    ASSERT_EQ(g.notes.size(), 1u);
    EXPECT_NE(g.notes[0].find("parameter 'cpb.0.weight' is not in the file"), std::string::npos) << g.notes[0];
}

// The same file without the exporter's records is read by the legacy rules: every float initializer a
// tensor uses is a parameter (what the torch.export metadata corrects above).
TEST(OnnxTorchExport, WithoutMetadataTheLegacyRulesApply) {
    ModelMaker m(20);
    m.input("x", onnx::TensorProto::FLOAT, {2, 4, 8});
    m.weight("expand", {2, 1, 8});
    ModelMaker::intAttr(m.node("Concat", {"expand", "x"}, {"y"}, "node_cat"), "axis", 1);
    m.output("y");
    ts::Graph g = ts::importOnnx(m.save("no_metadata.onnx"), {});
    EXPECT_EQ(g.parameterCount(), 16);
}

// The exporter's default fixes every size at the example's; the batch stays free: a Reshape that
// merges the batch with the heads (b0 x heads), a causal mask computed for the fixed batch, and an
// as_strided written as a Gather of the flattened tensor with indices of the fixed batch.
TEST(OnnxTorchExport, StaticExportKeepsTheBatchSymbolic) {
    ModelMaker m(20);
    m.input("x", onnx::TensorProto::FLOAT, {2, 4, 8});
    m.signature("x: USER_INPUT\n");
    m.ints("val_1", {2, 4, 2, 4});
    m.ints("val_2", {4, 4, 4});  // batch 2 x 2 heads
    m.ints("val_3", {2, 2, 4, 4});
    m.ints("val_4", {-1});
    m.weight("val_5", {2, 1, 4, 4});  // the causal mask, for the batch of 2
    m.foldedFrom("val_5", "['arange', 'expand_1', 'val_0']");
    auto* idx = m.graph().add_initializer();
    idx->set_name("val_6");
    idx->set_data_type(onnx::TensorProto::INT64);
    idx->add_dims(2);
    idx->add_dims(8);
    for (int64_t i = 0; i < 16; ++i) idx->add_int64_data(i * 4);
    m.node("Reshape", {"x", "val_1"}, {"split"}, "node_view");
    ModelMaker::intsAttr(m.node("Transpose", {"split"}, {"heads"}, "node_transpose"), "perm", {0, 2, 1, 3});
    m.node("Reshape", {"heads", "val_2"}, {"merged"}, "node_view_1");
    m.node("Reshape", {"merged", "val_3"}, {"unmerged"}, "node_view_2");
    m.node("Add", {"unmerged", "val_5"}, {"masked"}, "node_add");
    m.node("Reshape", {"masked", "val_4"}, {"flat"}, "node_view_3");
    ModelMaker::intAttr(m.node("Gather", {"flat", "val_6"}, {"picked"}, "node_as_strided"), "axis", 0);
    m.output("picked");

    ts::Graph g = ts::importOnnx(m.save("static_batch.onnx"), {});
    EXPECT_EQ(ts::shapeStr(valueNamed(g, "merged").shape), "[2*N, 4, 4]");
    EXPECT_EQ(ts::shapeStr(valueNamed(g, "masked").shape), "[N, 2, 4, 4]");
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.outputs[0])].shape), "[N, 8]");
    EXPECT_EQ(g.defaults.batch, 2);
}

// An Expand of data whose batch is merged with another size (Swin's windows: b0 x 4 rows) to that merged
// size, as F.normalize's expand_as writes it in a static export: the target follows the batch too.
TEST(OnnxTorchExport, StaticExpandOfMergedBatchKeepsTheBatchSymbolic) {
    ModelMaker m(20);
    m.input("x", onnx::TensorProto::FLOAT, {2, 4, 8});
    m.signature("x: USER_INPUT\n");
    m.ints("val_1", {8, 8});  // batch 2 x 4 windows
    m.ints("val_2", {-1});
    m.ints("val_3", {8, 8});
    m.node("Reshape", {"x", "val_1"}, {"rows"}, "node_view");
    ModelMaker::intAttr(m.node("ReduceL2", {"rows", "val_2"}, {"norm"}, "node_norm"), "keepdims", 1);
    m.node("Expand", {"norm", "val_3"}, {"denominator"}, "node_expand");
    m.node("Div", {"rows", "denominator"}, {"y"}, "node_div");
    m.output("y");
    ts::Graph g = ts::importOnnx(m.save("static_expand.onnx"), {});
    EXPECT_EQ(ts::shapeStr(valueNamed(g, "denominator").shape), "[4*N, 8]");
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.outputs[0])].shape), "[4*N, 8]");
}
