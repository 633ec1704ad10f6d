// The ONNX importer on hand-built models: parameters, symbolic sizes and module paths, and broken
// files that must fail with a one-line message naming the file and the problem (ONNX's own backend
// test models: test_onnx_backend_suite.cpp).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>  // ONNX_ML and ONNX_NAMESPACE come from the onnx_proto target
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <variant>

#include "onnx_model_maker.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace fs = std::filesystem;
using ts::testing::ModelMaker;
using ts::testing::tempDir;

namespace {

std::string importError(const std::string& path, const std::map<std::string, std::string>& params = {}) {
    try {
        ts::importOnnx(path, params);
    } catch (const ts::ModelError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("unexpected exception type: ") + e.what();
    }
    return "";
}

const ts::Operation* findOp(const ts::Graph& g, const std::string& type) {
    for (const auto& op : g.ops)
        if (op.type == type) return &op;
    return nullptr;
}

std::string outShape(const ts::Graph& g, size_t i = 0) { return ts::shapeStr(g.values[g.outputs.at(i)].shape); }

// conv -> bn -> relu -> global pool -> flatten -> fc, named as torch.onnx.export names them.
ModelMaker convBnReluGemm() {
    ModelMaker m;
    m.input("input", onnx::TensorProto::FLOAT, {std::string("batch"), 3, 32, 32});
    m.weight("conv1.weight", {16, 3, 3, 3});
    m.weight("conv1.bias", {16});
    for (const char* leaf : {"weight", "bias", "running_mean", "running_var"}) m.weight(std::string("bn1.") + leaf, {16});
    m.weight("fc.weight", {10, 16});
    m.weight("fc.bias", {10});
    auto* conv = m.node("Conv", {"input", "conv1.weight", "conv1.bias"}, {"c"}, "/conv1/Conv");
    ModelMaker::intsAttr(conv, "pads", {1, 1, 1, 1});
    ModelMaker::intsAttr(conv, "kernel_shape", {3, 3});
    m.node("BatchNormalization", {"c", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var"}, {"b"},
           "/bn1/BatchNormalization");
    m.node("Relu", {"b"}, {"r"}, "/relu/Relu");
    m.node("GlobalAveragePool", {"r"}, {"p"}, "/avgpool/GlobalAveragePool");
    m.node("Flatten", {"p"}, {"f"}, "/Flatten");
    ModelMaker::intAttr(m.node("Gemm", {"f", "fc.weight", "fc.bias"}, {"logits"}, "/fc/Gemm"), "transB", 1);
    m.output("logits");
    return m;
}

}  // namespace

TEST(OnnxImport, ConvBnReluGemmParametersBuffersAndPaths) {
    std::string path = convBnReluGemm().save("convnet.onnx");
    ts::Graph g = ts::importOnnx(path, {});
    EXPECT_EQ(g.name, "convnet");
    EXPECT_EQ(g.format, "onnx");
    EXPECT_EQ(g.source, path);
    // conv 16*3*3*3+16, bn weight+bias 2*16, fc 16*10+10: as nn.Module.parameters() counts them.
    EXPECT_EQ(g.parameterCount(), 448 + 32 + 170);
    int buffers = 0;
    for (const auto& v : g.values) buffers += v.kind == ts::ValueKind::Buffer;
    EXPECT_EQ(buffers, 2);  // running mean and var
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(ts::shapeStr(g.values[g.inputs[0]].shape), "[N, 3, 32, 32]");
    EXPECT_EQ(outShape(g), "[N, 10]");
    ASSERT_NE(findOp(g, "Conv"), nullptr);
    EXPECT_EQ(findOp(g, "Conv")->modulePath, "conv1");
    EXPECT_EQ(findOp(g, "Conv")->attrInt("_opset", 0), 17);
    EXPECT_EQ(findOp(g, "Gemm")->modulePath, "fc");
    EXPECT_EQ(findOp(g, "Flatten")->modulePath, "");
    EXPECT_NO_THROW(g.validate());
}

TEST(OnnxImport, ReshapeTargetComputedFromShapeKeepsTheBatchSymbolic) {
    for (int opset : {11, 13, 17}) {
        ModelMaker m(opset);
        m.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4, 6});
        m.ints("zero", {0}, /*scalar=*/true);
        m.ints("minus_one", {-1});
        m.node("Shape", {"x"}, {"shape"}, "/Shape");
        m.node("Gather", {"shape", "zero"}, {"batch"}, "/Gather");
        auto* unsq = m.node("Unsqueeze", opset >= 13 ? std::vector<std::string>{"batch", "axes"}
                                                      : std::vector<std::string>{"batch"},
                            {"batch1"}, "/Unsqueeze");
        if (opset >= 13) m.ints("axes", {0});
        else ModelMaker::intsAttr(unsq, "axes", {0});
        ModelMaker::intAttr(m.node("Concat", {"batch1", "minus_one"}, {"target"}, "/Concat"), "axis", 0);
        m.node("Reshape", {"x", "target"}, {"y"}, "/flatten/Reshape");
        m.output("y");
        ts::Graph g = ts::importOnnx(m.save("reshape" + std::to_string(opset) + ".onnx"), {});
        EXPECT_EQ(outShape(g), "[N, 24]") << "opset " << opset;
        const ts::Operation* gather = findOp(g, "Gather");
        ASSERT_NE(gather, nullptr);
        const ts::Value& batch = g.values[gather->outputs[0]];
        ASSERT_TRUE(batch.intData.has_value());
        EXPECT_EQ(batch.intData->at(0), ts::Dim::batch());
        EXPECT_EQ(findOp(g, "Reshape")->modulePath, "flatten");
    }
}

TEST(OnnxImport, FixedBatchExportBecomesSymbolic) {
    ModelMaker m;
    m.input("x", onnx::TensorProto::FLOAT, {int64_t(2), 4, 6});
    m.ints("target", {2, 24});
    m.node("Reshape", {"x", "target"}, {"y"}, "/Reshape");
    m.output("y");
    std::string path = m.save("fixed.onnx");
    ts::Graph g = ts::importOnnx(path, {});
    EXPECT_EQ(outShape(g), "[N, 24]");
    EXPECT_EQ(g.defaults.batch, 2);
    ts::Graph fixed = ts::importOnnx(path, {{"concrete", "1"}});
    EXPECT_EQ(outShape(fixed), "[2, 24]");
}

// torchvision's Swin pads each window to a multiple of its size with F.pad, whose pads the legacy
// exporter computes from the input's shape: Shape -> Gather -> Mod/Sub -> Concat with zeros -> Reshape
// [-1, 2] -> reversed Slice -> Transpose -> Reshape [-1] -> Cast -> Pad. All of it is static at the input's
// sizes: (7 - 5 % 7) % 7 = 2 rows and columns of padding.
TEST(OnnxImport, PadsComputedFromStaticSizesAreFolded) {
    ModelMaker m;
    m.input("x", onnx::TensorProto::FLOAT, {std::string("batch"), 5, 5, 4});
    m.ints("one", {1}, true);
    m.ints("seven", {7}, true);
    m.ints("zero", {0}, true);
    m.ints("axis0", {0});
    m.ints("pairs", {-1, 2});
    m.ints("flat", {-1});
    m.ints("rank_twice", {8});
    for (const char* name : {"minus1", "axes", "steps"}) m.ints(name, {std::string(name) == "axes" ? 0 : -1});
    m.ints("to_start", {-9223372036854775807LL});
    m.node("Shape", {"x"}, {"shape"}, "/attn/Shape");
    ModelMaker::intAttr(m.node("Gather", {"shape", "one"}, {"h"}, "/attn/Gather"), "axis", 0);
    m.node("Mod", {"h", "seven"}, {"hm"}, "/attn/Mod");
    m.node("Sub", {"seven", "hm"}, {"hs"}, "/attn/Sub");
    m.node("Mod", {"hs", "seven"}, {"pad"}, "/attn/Mod_1");
    m.node("Unsqueeze", {"zero", "axis0"}, {"z"}, "/attn/Unsqueeze");
    m.node("Unsqueeze", {"pad", "axis0"}, {"p"}, "/attn/Unsqueeze_1");
    ModelMaker::intAttr(m.node("Concat", {"z", "z", "z", "p", "z", "p"}, {"six"}, "/attn/Concat"), "axis", 0);
    m.node("Shape", {"six"}, {"six_len"}, "/attn/Shape_1");
    m.node("Sub", {"rank_twice", "six_len"}, {"rest"}, "/attn/Sub_1");
    auto* zeros = m.node("ConstantOfShape", {"rest"}, {"tail"}, "/attn/ConstantOfShape");
    auto* value = zeros->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    value->mutable_t()->add_dims(1);
    value->mutable_t()->add_int64_data(0);
    ModelMaker::intAttr(m.node("Concat", {"six", "tail"}, {"eight"}, "/attn/Concat_1"), "axis", 0);
    m.node("Reshape", {"eight", "pairs"}, {"by_dim"}, "/attn/Reshape");
    m.node("Slice", {"by_dim", "minus1", "to_start", "axes", "steps"}, {"reversed"}, "/attn/Slice");
    ModelMaker::intsAttr(m.node("Transpose", {"reversed"}, {"begins_ends"}, "/attn/Transpose"), "perm", {1, 0});
    m.node("Reshape", {"begins_ends", "flat"}, {"pads_i"}, "/attn/Reshape_1");
    ModelMaker::intAttr(m.node("Cast", {"pads_i"}, {"pads"}, "/attn/Cast"), "to", onnx::TensorProto::INT64);
    m.node("Pad", {"x", "pads"}, {"y"}, "/attn/Pad");
    m.output("y");
    ts::Graph g = ts::importOnnx(m.save("swin_pad.onnx"), {});
    EXPECT_EQ(outShape(g), "[N, 7, 7, 4]");
}

TEST(OnnxImport, ModulePathsFromNodeNamesAndParameterNames) {
    ModelMaker m;
    m.input("input_ids", onnx::TensorProto::INT64, {std::string("batch"), std::string("sequence")});
    m.weight("embeddings.word_embeddings.weight", {100, 8});
    m.node("Gather", {"embeddings.word_embeddings.weight", "input_ids"}, {"e"}, "Gather_0");
    auto* t1 = m.node("Transpose", {"e"}, {"t1"}, "/encoder/layer.0/attention/self/query/Transpose");
    ModelMaker::intsAttr(t1, "perm", {0, 2, 1});
    m.node("Transpose", {"t1"}, {"t2"}, "/layer1/layer1.0/conv1/Transpose_3");
    m.node("Transpose", {"t2"}, {"t3"}, "/layer1/layer1.0/downsample/downsample.0/Transpose");
    m.output("t3");
    ts::Graph g = ts::importOnnx(m.save("paths.onnx"), {{"seq", "32"}});
    ASSERT_EQ(g.ops.size(), 4u);
    EXPECT_EQ(g.ops[0].modulePath, "embeddings.word_embeddings");
    EXPECT_EQ(g.ops[1].modulePath, "encoder.layer.0.attention.self.query");
    EXPECT_EQ(g.ops[2].modulePath, "layer1.0.conv1");
    EXPECT_EQ(g.ops[3].modulePath, "layer1.0.downsample.0");
    EXPECT_EQ(ts::shapeStr(g.values[g.ops[0].outputs[0]].shape), "[N, S, 8]");
    EXPECT_EQ(g.defaults.seq, 32);
    EXPECT_EQ(g.parameterCount(), 800);
}

TEST(OnnxImport, DeduplicatedWeightsAndWeightsAsInputsCountLikePyTorch) {
    // torch replaces equal initializers by Identity nodes named after the original parameter.
    ModelMaker dedup;
    dedup.input("x", onnx::TensorProto::FLOAT, {std::string("batch"), 4});
    dedup.weight("a.bias", {4});
    dedup.node("Identity", {"a.bias"}, {"b.bias"}, "Identity_0");
    dedup.node("Add", {"x", "a.bias"}, {"y"}, "/a/Add");
    dedup.node("Add", {"y", "b.bias"}, {"z"}, "/b/Add");
    dedup.output("z");
    ts::Graph g = ts::importOnnx(dedup.save("dedup.onnx"), {});
    EXPECT_EQ(g.parameterCount(), 8);
    EXPECT_EQ(findOp(g, "Identity"), nullptr);

    // export_params=False: no initializers, the weights are graph inputs with their shapes.
    ModelMaker noParams;
    noParams.input("input", onnx::TensorProto::FLOAT, {int64_t(1), 6});
    noParams.input("fc.weight", onnx::TensorProto::FLOAT, {int64_t(3), 6});
    noParams.input("fc.bias", onnx::TensorProto::FLOAT, {int64_t(3)});
    ModelMaker::intAttr(noParams.node("Gemm", {"input", "fc.weight", "fc.bias"}, {"y"}, "/fc/Gemm"), "transB", 1);
    noParams.output("y");
    ts::Graph h = ts::importOnnx(noParams.save("noparams.onnx"), {});
    EXPECT_EQ(h.parameterCount(), 21);
    ASSERT_EQ(h.inputs.size(), 1u);
    EXPECT_EQ(ts::shapeStr(h.values[h.inputs[0]].shape), "[N, 6]");
}

TEST(OnnxImport, TableALinearLayerRunsOnIsABuffer) {
    // Swin V2's position-bias MLP as the legacy exporter writes it: the coordinate table (a buffer) is the
    // input of F.linear, MatMul(table, Transpose(weight)). A product of two parameters (U @ V, no
    // Transpose) keeps both as parameters.
    for (bool linear : {true, false}) {
        ModelMaker m;
        m.input("scores", onnx::TensorProto::FLOAT, {std::string("batch"), 9, 16});
        m.weight("attn.relative_coords_table", {9, 2});
        m.weight("attn.cpb_mlp.0.weight", {16, 2});
        m.weight("attn.cpb_mlp.0.bias", {16});
        std::string w = "attn.cpb_mlp.0.weight";
        if (linear) {
            m.node("Transpose", {w}, {"wt"}, "/attn/cpb_mlp/cpb_mlp.0/Transpose");
            w = "wt";
        } else {
            m.weight("attn.v", {2, 16});
            w = "attn.v";
        }
        m.node("MatMul", {"attn.relative_coords_table", w}, {"h"}, "/attn/cpb_mlp/cpb_mlp.0/MatMul");
        m.node("Add", {"h", "attn.cpb_mlp.0.bias"}, {"bias"}, "/attn/cpb_mlp/cpb_mlp.0/Add");
        m.node("Add", {"scores", "bias"}, {"y"}, "/attn/Add");
        m.output("y");
        ts::Graph g = ts::importOnnx(m.save(linear ? "table-linear.onnx" : "table-product.onnx"), {});
        EXPECT_EQ(g.parameterCount(), linear ? 16 * 2 + 16 : 9 * 2 + 2 * 16 + 16) << linear;
        int table = g.findValue("attn.relative_coords_table");
        ASSERT_GE(table, 0);
        EXPECT_EQ(g.values[size_t(table)].kind, linear ? ts::ValueKind::Buffer : ts::ValueKind::Parameter);
    }
}

TEST(OnnxImport, BrokenFilesFailWithOneLineMessages) {
    auto expectError = [](const std::string& path, const std::string& problem) {
        std::string msg = importError(path);
        EXPECT_NE(msg.find(fs::path(path).filename().string()), std::string::npos) << msg;
        EXPECT_NE(msg.find(problem), std::string::npos) << "expected '" << problem << "' in: " << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    };
    expectError((tempDir() / "absent.onnx").string(), "no such file");
    expectError(ModelMaker::writeFile("text.onnx", "hello, this is not a model\n"), "not an ONNX model");
    expectError(ModelMaker::writeFile("empty.onnx", ""), "empty");

    std::string good = convBnReluGemm().bytes();
    expectError(ModelMaker::writeFile("truncated.onnx", good.substr(0, good.size() / 2)), "truncated or corrupt");

    ModelMaker cyclic;
    cyclic.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
    cyclic.node("Add", {"x", "b"}, {"a"}, "first");
    cyclic.node("Relu", {"a"}, {"b"}, "second");
    cyclic.output("b");
    expectError(cyclic.save("cyclic.onnx"), "cyclic graph");

    ModelMaker unknown;
    unknown.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
    unknown.node("Foo", {"x"}, {"y"}, "bar");
    unknown.output("y");
    expectError(unknown.save("unknown.onnx"), "unsupported operator 'Foo' (node 'bar')");

    ModelMaker vendor;
    vendor.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
    vendor.node("Relu", {"x"}, {"y"}, "fused")->set_domain("com.microsoft");
    vendor.output("y");
    expectError(vendor.save("vendor.onnx"), "unsupported operator 'Relu' (node 'fused') from domain 'com.microsoft'");

    ModelMaker huge;
    huge.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
    huge.weight("w", {int64_t(1) << 20, int64_t(1) << 20, int64_t(1) << 20}, /*withData=*/false);
    huge.node("Add", {"x", "w"}, {"y"}, "add");
    huge.output("y");
    expectError(huge.save("huge.onnx"), "initializer 'w' claims an absurd size");

    ModelMaker negative;
    negative.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
    negative.weight("w", {-4}, /*withData=*/false);
    negative.node("Add", {"x", "w"}, {"y"}, "add");
    negative.output("y");
    expectError(negative.save("negative.onnx"), "negative dimension -4");

    ModelMaker mismatch;
    mismatch.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
    mismatch.weight("w", {4}, /*withData=*/false)->set_raw_data(std::string(12, '\0'));
    mismatch.node("Add", {"x", "w"}, {"y"}, "add");
    mismatch.output("y");
    expectError(mismatch.save("mismatch.onnx"), "holds 12 bytes of data but its shape [4] needs 16");

    ModelMaker missing;
    missing.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 3, 8, 8});
    missing.node("Conv", {"x", "conv.weight"}, {"y"}, "/conv/Conv");
    missing.output("y");
    expectError(missing.save("missing.onnx"), "uses 'conv.weight', which no node, initializer or graph input provides");

    ModelMaker noShape;
    noShape.graph().add_input()->set_name("x");
    noShape.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    noShape.node("Relu", {"x"}, {"y"}, "relu");
    noShape.output("y");
    expectError(noShape.save("noshape.onnx"), "graph input 'x' has no shape");

    ModelMaker symbolic;
    symbolic.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 3, std::string("height"), 8});
    symbolic.node("Relu", {"x"}, {"y"}, "relu");
    symbolic.output("y");
    expectError(symbolic.save("symbolic.onnx"), "symbolic dimension named 'height'");
    EXPECT_EQ(ts::shapeStr(ts::importOnnx(symbolic.save("symbolic.onnx"), {{"height", "5"}}).values[0].shape),
              "[N, 3, 5, 8]");

    ModelMaker subgraph;
    subgraph.input("x", onnx::TensorProto::BOOL, {int64_t(1)});
    auto* node = subgraph.node("If", {"x"}, {"y"}, "branch");
    auto* a = node->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name("then");
    subgraph.output("y");
    expectError(subgraph.save("subgraph.onnx"), "unsupported operator 'If' (node 'branch')");

    ModelMaker badShape;  // shape inference errors name the node and its type
    badShape.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4, 6});
    badShape.ints("target", {5, 7});
    badShape.node("Reshape", {"x", "target"}, {"y"}, "/head/Reshape");
    badShape.output("y");
    expectError(badShape.save("badshape.onnx"), "node '/head/Reshape' (Reshape): cannot reshape");
}

// Issue 23: a tensor's values are read from the one typed field its data type names, so that field
// alone must hold them. The fuzzer's file was a Constant whose float_data was shorter than its
// shape, the difference made up by another field; float_data was read past its end.
TEST(OnnxImport, TypedDataIsReadOnlyFromTheFieldOfItsType) {
    struct Case {
        int type;
        const char* field;  // the field the type names
    };
    const Case cases[] = {
        {onnx::TensorProto::FLOAT, "float_data"},     {onnx::TensorProto::DOUBLE, "double_data"},
        {onnx::TensorProto::FLOAT16, "int32_data"},   {onnx::TensorProto::BFLOAT16, "int32_data"},
        {onnx::TensorProto::INT32, "int32_data"},     {onnx::TensorProto::INT8, "int32_data"},
        {onnx::TensorProto::UINT8, "int32_data"},     {onnx::TensorProto::BOOL, "int32_data"},
        {onnx::TensorProto::INT64, "int64_data"},     {onnx::TensorProto::UINT32, "uint64_data"},
        {onnx::TensorProto::UINT64, "uint64_data"},
    };
    // One value in the type's own field, three in another: the total matches the shape [4].
    auto fill = [](onnx::TensorProto* t, int type, bool split) {
        t->set_data_type(type);
        t->add_dims(4);
        auto put = [&](const std::string& field, int n) {
            for (int i = 0; i < n; ++i) {
                if (field == "float_data") t->add_float_data(1.0f);
                else if (field == "double_data") t->add_double_data(1.0);
                else if (field == "int32_data") t->add_int32_data(1);
                else if (field == "int64_data") t->add_int64_data(1);
                else t->add_uint64_data(1);
            }
        };
        std::string own;
        switch (type) {
            case onnx::TensorProto::FLOAT: own = "float_data"; break;
            case onnx::TensorProto::DOUBLE: own = "double_data"; break;
            case onnx::TensorProto::INT64: own = "int64_data"; break;
            case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: own = "uint64_data"; break;
            default: own = "int32_data";
        }
        if (!split) return put(own, 4);
        put(own, 1);
        put(own == "int64_data" ? "float_data" : "int64_data", 3);
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(std::string("data type ") + std::to_string(k.type));
        // Through a Constant node (OnnxGraphBuilder::foldConstant) ...
        auto constantModel = [&](bool split) {
            ModelMaker m;
            m.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
            auto* n = m.node("Constant", {}, {"c"}, "/Constant");
            auto* a = n->add_attribute();
            a->set_name("value");
            a->set_type(onnx::AttributeProto::TENSOR);
            fill(a->mutable_t(), k.type, split);
            m.node("Shape", {"c"}, {"y"}, "/Shape");
            m.output("y");
            return m;
        };
        std::string msg = importError(constantModel(true).save("split_constant.onnx"));
        EXPECT_NE(msg.find("split_constant.onnx: the value of node '/Constant' (Constant) holds 3 values outside " +
                           std::string(k.field)),
                  std::string::npos)
            << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        // ... and as an initializer (addSourceValue): the same check.
        ModelMaker init;
        init.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
        auto* t = init.graph().add_initializer();
        t->set_name("c");
        fill(t, k.type, true);
        init.node("Shape", {"c"}, {"y"}, "/Shape");
        init.output("y");
        msg = importError(init.save("split_initializer.onnx"));
        EXPECT_NE(msg.find("initializer 'c' holds 3 values outside " + std::string(k.field)), std::string::npos) << msg;
        // The same values all in the right field import, and their contents are known.
        ts::Graph g = ts::importOnnx(constantModel(false).save("whole_constant.onnx"), {});
        int c = g.findValue("c");
        ASSERT_GE(c, 0);
        const ts::Value& v = g.values[size_t(c)];
        size_t known = v.intData ? v.intData->size() : v.floatData ? v.floatData->size() : 0;
        EXPECT_EQ(known, 4u);
    }

    // A tensor attribute of an operator (convertAttributes) goes through the same decoder.
    ModelMaker attr;
    attr.ints("shape", {2, 3});
    auto* n = attr.node("ConstantOfShape", {"shape"}, {"y"}, "/ConstantOfShape");
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(7);  // one value, in the wrong field; float_data is empty
    attr.output("y");
    std::string msg = importError(attr.save("attribute.onnx"));
    EXPECT_NE(msg.find("attribute 'value' of node '/ConstantOfShape' (ConstantOfShape) holds 1 value outside float_data, the field "
                       "of its data type float32 (float_data holds 0)"),
              std::string::npos)
        << msg;

    // The right field, too short, is still a count mismatch.
    ModelMaker shortField;
    shortField.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 4});
    auto* s = shortField.graph().add_initializer();
    s->set_name("c");
    s->set_data_type(onnx::TensorProto::INT64);
    s->add_dims(4);
    s->add_int64_data(1);
    shortField.node("Shape", {"c"}, {"y"}, "/Shape");
    shortField.output("y");
    msg = importError(shortField.save("short_field.onnx"));
    EXPECT_NE(msg.find("initializer 'c' holds 1 value in int64_data but its shape [4] has 4 elements"),
              std::string::npos)
        << msg;
}

// A Constant with two value attributes held contents of two kinds that disagreed with its shape
// (value_ints [3] and value_float: shape [3], three ints, one float); element-wise folding then
// read the one float as if it were three.
TEST(OnnxImport, ConstantWithTwoValueAttributesIsRefused) {
    ModelMaker m;
    m.input("x", onnx::TensorProto::FLOAT, {std::string("N"), 3});
    auto* c = m.node("Constant", {}, {"c"}, "/Constant");
    ModelMaker::intsAttr(c, "value_ints", {1, 2, 3});
    auto* f = c->add_attribute();
    f->set_name("value_float");
    f->set_type(onnx::AttributeProto::FLOAT);
    f->set_f(2.0f);
    auto* d = m.node("Constant", {}, {"d"}, "/Constant_1");
    auto* fs = d->add_attribute();
    fs->set_name("value_floats");
    fs->set_type(onnx::AttributeProto::FLOATS);
    for (float v : {1.0f, 2.0f, 3.0f}) fs->add_floats(v);
    m.node("Add", {"c", "d"}, {"s"}, "/Add");
    m.node("Add", {"x", "s"}, {"y"}, "/Add_1");
    m.output("y");
    std::string msg = importError(m.save("two_values.onnx"));
    EXPECT_NE(msg.find("two_values.onnx: node '/Constant' (Constant) has two value attributes ('value_ints' and "
                       "'value_float')"),
              std::string::npos)
        << msg;

    // A sparse value is bounded in rank like every other tensor.
    ModelMaker sparse;
    auto* sp = sparse.node("Constant", {}, {"y"}, "/Sparse");
    auto* sa = sp->add_attribute();
    sa->set_name("sparse_value");
    sa->set_type(onnx::AttributeProto::SPARSE_TENSOR);
    for (int i = 0; i < 40; ++i) sa->mutable_sparse_tensor()->add_dims(1);
    sa->mutable_sparse_tensor()->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
    sparse.output("y");
    msg = importError(sparse.save("sparse_rank.onnx"));
    EXPECT_NE(msg.find("has a sparse value of 40 dimensions"), std::string::npos) << msg;
}

TEST(OnnxImport, CorruptedBytesNeverCrash) {
    // Every prefix length class and single-byte corruption either imports or fails with a ModelError.
    std::string good = convBnReluGemm().bytes();
    int errors = 0, imported = 0;
    for (size_t i = 0; i < good.size(); i += std::max<size_t>(1, good.size() / 150)) {
        for (int variant = 0; variant < 2; ++variant) {
            std::string bytes = good;
            if (variant == 0) bytes.resize(i);
            else bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
            std::string path = ModelMaker::writeFile("corrupt.onnx", bytes);
            try {
                ts::importOnnx(path, {});
                ++imported;
            } catch (const ts::ModelError& e) {
                ++errors;
                EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
            }
        }
    }
    EXPECT_GT(errors, 100);
    EXPECT_GT(imported + errors, 250);
}

TEST(OnnxImport, DeepNestingAndOversizedFilesAreRefused) {
    ModelMaker nested;
    nested.input("x", onnx::TensorProto::BOOL, {int64_t(1)});
    onnx::NodeProto* node = nested.node("If", {"x"}, {"y"}, "outer");
    for (int depth = 0; depth < 200; ++depth) {
        auto* a = node->add_attribute();
        a->set_name("then_branch");
        a->set_type(onnx::AttributeProto::GRAPH);
        node = a->mutable_g()->add_node();
        node->set_op_type("If");
    }
    nested.output("y");
    std::string msg = importError(nested.save("nested.onnx"));
    EXPECT_NE(msg.find("nested.onnx: "), std::string::npos) << msg;
    EXPECT_NE(msg.find("nested deeper than"), std::string::npos) << msg;

    // A sparse file: its size is what counts, nothing is read.
    fs::path big = tempDir() / "big.onnx";
    { std::ofstream(big, std::ios::binary) << "\x08\x08"; }
    std::error_code ec;
    fs::resize_file(big, (std::uintmax_t(2) << 30) + 1, ec);
    if (!ec) {
        msg = importError(big.string());
        EXPECT_NE(msg.find("larger than 2 GB"), std::string::npos) << msg;
    }
    fs::remove(big, ec);
}
