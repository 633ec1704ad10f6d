#include <gtest/gtest.h>

#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace {

const char* kTinyCnn = R"({
  "trainscope_model": 1,
  "name": "tiny-cnn",
  "inputs": [{"name": "image", "shape": ["N", 3, 32, 32]}],
  "layers": [
    {"name": "conv1", "type": "Conv2d", "out_channels": 16, "kernel_size": 3, "padding": 1},
    {"name": "bn1", "type": "BatchNorm2d"},
    {"name": "relu", "type": "ReLU"},
    {"name": "block", "layers": [
      {"name": "conv", "type": "Conv2d", "out_channels": 16, "kernel_size": 3, "padding": 1},
      {"name": "skip", "type": "Add", "inputs": ["conv", "relu"]}
    ]},
    {"name": "pool", "type": "AdaptiveAvgPool2d", "output_size": 1},
    {"name": "flat", "type": "Flatten"},
    {"name": "fc", "type": "Linear", "out_features": 10}
  ]
})";

const ts::Operation* findOp(const ts::Graph& g, const std::string& path, const std::string& type) {
    for (const auto& op : g.ops)
        if (op.modulePath == path && op.type == type) return &op;
    return nullptr;
}

std::string errorOf(const std::string& text) {
    try {
        ts::importJsonModelText(text, "m.json");
    } catch (const ts::ModelError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(JsonModel, TinyCnnShapesParametersAndPaths) {
    ts::Graph g = ts::importJsonModelText(kTinyCnn, "tiny.json");
    EXPECT_EQ(g.name, "tiny-cnn");
    EXPECT_EQ(g.format, "json");
    // conv1 3*16*9+16, bn1 2*16, block.conv 16*16*9+16, fc 16*10+10 (hand-computed).
    EXPECT_EQ(g.parameterCount(), 448 + 32 + 2320 + 170);
    const ts::Operation* conv = findOp(g, "block.conv", "Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(ts::shapeStr(g.values[conv->outputs[0]].shape), "[N, 16, 32, 32]");
    ASSERT_EQ(g.outputs.size(), 1u);
    EXPECT_EQ(ts::shapeStr(g.values[g.outputs[0]].shape), "[N, 10]");
    EXPECT_NE(findOp(g, "block.skip", "Add"), nullptr);
    EXPECT_NE(findOp(g, "bn1", "BatchNormalization"), nullptr);
}

TEST(JsonModel, SequenceModelWithSymbolicSeq) {
    const char* text = R"({"trainscope_model": 1, "name": "lm", "seq": 64,
      "inputs": [{"name": "ids", "shape": ["N", "S"], "dtype": "int64"}],
      "layers": [
        {"name": "emb", "type": "Embedding", "num_embeddings": 1000, "embedding_dim": 32},
        {"name": "norm", "type": "LayerNorm"},
        {"name": "head", "type": "Linear", "out_features": 1000}
      ]})";
    ts::Graph g = ts::importJsonModelText(text, "lm.json");
    EXPECT_EQ(g.defaults.seq, 64);
    EXPECT_EQ(g.parameterCount(), 1000 * 32 + 2 * 32 + 32 * 1000 + 1000);
    EXPECT_EQ(ts::shapeStr(g.values[g.outputs[0]].shape), "[N, S, 1000]");
    ts::ModelCosts c = ts::computeCosts(g, 2, 0);
    EXPECT_EQ(c.seq, 64);
    ASSERT_FALSE(c.layers.empty());
    EXPECT_EQ(c.layers.back().outputShape, (std::vector<int64_t>{2, 64, 1000}));
}

TEST(JsonModel, ErrorsNameTheLayerAndTheProblem) {
    EXPECT_NE(errorOf(R"({"trainscope_model": 1, "inputs": [{"name": "x", "shape": ["N", 8]}],
        "layers": [{"name": "a", "type": "Nope"}]})").find("layer 'a': unsupported layer type 'Nope'"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"trainscope_model": 1, "inputs": [{"name": "x", "shape": ["N", 8]}],
        "layers": [{"name": "fc", "type": "Linear"}]})").find("needs \"out_features\""),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"trainscope_model": 1, "inputs": [{"name": "x", "shape": ["N", -5]}],
        "layers": []})").find("negative dimension"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"inputs": []})").find("not a TrainScope model file"), std::string::npos);
    EXPECT_NE(errorOf(std::string(200, '[')).find("nesting"), std::string::npos);
    EXPECT_EQ(errorOf(R"({"trainscope_model": 1, "inputs": [{"name": "x", "shape": ["N", 8]}],
        "layers": [{"name": "a", "type": "ReLU"}, {"name": "a", "type": "ReLU"}]})"),
              "m.json: layer 'a' is defined twice");
}
