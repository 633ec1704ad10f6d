// TorchScript import through LibTorch: error handling always; real architectures when
// tests/real_models/generate.py has written them (ctest runs it as a fixture; otherwise skipped).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "trainscope/core/errors.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/model_loader.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string importError(const std::string& path, const std::map<std::string, std::string>& params = {}) {
    try {
        importTorchScript(path, params);
    } catch (const ModelError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("unexpected exception type: ") + e.what();
    }
    return "no error";
}

std::string generated(const std::string& file) { return std::string(TRAINSCOPE_GENERATED_DIR) + "/" + file; }

nlohmann::json manifest() {
    std::ifstream in(generated("manifest.json"));
    if (!in) return nullptr;
    return nlohmann::json::parse(in, nullptr, false);
}

#define REQUIRE_TORCH() \
    if (!torchScriptSupported()) GTEST_SKIP() << "this build has no LibTorch"
#define REQUIRE_GENERATED(file)                                                                                \
    REQUIRE_TORCH();                                                                                           \
    if (!fs::exists(generated(file)) || manifest().is_null())                                                  \
        GTEST_SKIP() << generated(file) << " is absent: run `ctest -L real_models` (tests/real_models/generate.py)"

std::map<std::string, int> opCounts(const Graph& g) {
    std::map<std::string, int> counts;
    for (const Operation& op : g.ops) ++counts[op.type];
    return counts;
}

// The operation that first uses the named parameter.
const Operation* userOf(const Graph& g, const std::string& parameter) {
    int v = g.findValue(parameter);
    if (v < 0) return nullptr;
    for (const Operation& op : g.ops)
        for (int in : op.inputs)
            if (in == v) return &op;
    return nullptr;
}

TEST(TorchScriptImport, NonexistentFileIsNamed) {
    REQUIRE_TORCH();
    EXPECT_EQ(importError("/nonexistent/model.pt"), "/nonexistent/model.pt: no such file");
}

TEST(TorchScriptImport, CorruptFilesAreNotTorchScript) {
    REQUIRE_TORCH();
    for (const char* name : {"not_torchscript.pt", "text_file.pt"}) {
        std::string path = std::string(TRAINSCOPE_TEST_DATA_DIR) + "/bad/" + name;
        std::string msg = importError(path);
        EXPECT_EQ(msg.rfind(path + ": not a TorchScript archive: ", 0), 0u) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

TEST(TorchScriptImport, EmptyZipIsNotTorchScript) {
    REQUIRE_TORCH();
    // A valid zip archive with no entries: only the end-of-central-directory record.
    std::string path = (fs::temp_directory_path() / "trainscope_empty_zip.pt").string();
    {
        std::ofstream out(path, std::ios::binary);
        const char eocd[22] = {'P', 'K', 5, 6};
        out.write(eocd, sizeof eocd);
    }
    std::string msg = importError(path);
    fs::remove(path);
    EXPECT_EQ(msg.rfind(path + ": not a TorchScript archive: ", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(TorchScriptImport, TruncatedArchiveIsRejected) {
    REQUIRE_GENERATED("resnet18.pt");
    std::string path = (fs::temp_directory_path() / "trainscope_truncated.pt").string();
    {
        std::ifstream in(generated("resnet18.pt"), std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size() / 2));
    }
    std::string msg = importError(path);
    fs::remove(path);
    EXPECT_EQ(msg.rfind(path + ": not a TorchScript archive: ", 0), 0u) << msg;
}

TEST(TorchScriptImport, BadOptionsAreReported) {
    REQUIRE_GENERATED("resnet18.pt");
    EXPECT_EQ(importError(generated("resnet18.pt"), {{"input", "3xfoo"}}),
              generated("resnet18.pt") + ": option input='3xfoo' must be dimensions like 3x224x224");
    EXPECT_EQ(importError(generated("resnet18.pt"), {{"colour", "red"}}),
              generated("resnet18.pt") +
                  ": unknown option 'colour' (TorchScript files take input=CxHxW, seq=, batch=)");
    // A channel count the first convolution cannot take fails while running, naming the module.
    std::string msg = importError(generated("resnet18.pt"), {{"input", "5x64x64"}});
    EXPECT_NE(msg.find("module 'conv1'"), std::string::npos) << msg;
    // Absurd inputs are refused before anything is allocated.
    msg = importError(generated("resnet18.pt"), {{"input", "3x100000x100000"}});
    EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
}

TEST(TorchScriptImport, UnsupportedOperatorIsNamed) {
    REQUIRE_GENERATED("unsupported_flip.pt");
    std::string msg = importError(generated("unsupported_flip.pt"));
    EXPECT_EQ(msg.rfind(generated("unsupported_flip.pt") + ": unsupported operator 'aten::flip' (node %", 0), 0u) << msg;
    EXPECT_NE(msg.find(", module '<top>')"), std::string::npos) << msg;
}

void expectResNet18(const Graph& g, int64_t expectedParameters) {
    ASSERT_NO_THROW(g.validate());
    EXPECT_EQ(g.format, "torchscript");
    EXPECT_EQ(g.parameterCount(), expectedParameters);
    auto counts = opCounts(g);
    EXPECT_EQ(counts["Conv"], 20);
    EXPECT_EQ(counts["BatchNormalization"], 20);
    EXPECT_EQ(counts["Relu"], 17);
    EXPECT_EQ(counts["Add"], 8);
    EXPECT_EQ(counts["MaxPool"], 1);
    EXPECT_EQ(counts["GlobalAveragePool"], 1);
    EXPECT_EQ(counts["Gemm"], 1);
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(shapeStr(g.values[g.inputs[0]].shape), "[N, 3, 64, 64]");
    ASSERT_EQ(g.outputs.size(), 1u);
    EXPECT_EQ(shapeStr(g.values[g.outputs[0]].shape), "[N, 1000]");

    const Operation* conv = userOf(g, "layer2.0.downsample.0.weight");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->type, "Conv");
    EXPECT_EQ(conv->modulePath, "layer2.0.downsample.0");
    EXPECT_EQ(conv->attrInts("kernel_shape"), (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(conv->attrInts("strides"), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(shapeStr(g.values[conv->outputs[0]].shape), "[N, 128, 8, 8]");
    const Operation* stem = userOf(g, "conv1.weight");
    ASSERT_NE(stem, nullptr);
    EXPECT_EQ(stem->attrInts("pads"), (std::vector<int64_t>{3, 3, 3, 3}));
    const Operation* bn = userOf(g, "layer1.1.bn2.weight");
    ASSERT_NE(bn, nullptr);
    EXPECT_EQ(bn->type, "BatchNormalization");
    EXPECT_EQ(bn->modulePath, "layer1.1.bn2");
    ASSERT_EQ(bn->inputs.size(), 5u);
    EXPECT_EQ(g.values[bn->inputs[3]].name, "layer1.1.bn2.running_mean");
    EXPECT_EQ(g.values[bn->inputs[3]].kind, ValueKind::Buffer);
    const Operation* fc = userOf(g, "fc.weight");
    ASSERT_NE(fc, nullptr);
    EXPECT_EQ(fc->type, "Gemm");
    EXPECT_EQ(fc->attrInt("transB", 0), 1);
    EXPECT_EQ(fc->modulePath, "fc");
}

TEST(TorchScriptImport, TracedResNet18) {
    REQUIRE_GENERATED("resnet18.pt");
    Graph g = importTorchScript(generated("resnet18.pt"), {{"input", "3x64x64"}});
    EXPECT_EQ(g.name, "resnet18");
    expectResNet18(g, manifest()["models"]["resnet18"]["parameters"].get<int64_t>());
}

TEST(TorchScriptImport, ScriptedResNet18MatchesTraced) {
    REQUIRE_GENERATED("resnet18_scripted.pt");
    Graph scripted = importTorchScript(generated("resnet18_scripted.pt"), {{"input", "3x64x64"}});
    expectResNet18(scripted, manifest()["models"]["resnet18"]["parameters"].get<int64_t>());
    Graph traced = importTorchScript(generated("resnet18.pt"), {{"input", "3x64x64"}});
    EXPECT_EQ(opCounts(scripted), opCounts(traced));
}

// A slice bound computed from the input's length follows the sequence length (BERT's
// position_ids[:, :seq_length]) instead of keeping the value of the run that built the graph.
TEST(TorchScriptImport, SliceBoundsFollowTheSequence) {
    REQUIRE_GENERATED("bert_small.pt");
    const Graph g = importTorchScript(generated("bert_small.pt"), {{"seq", "32"}});
    int following = 0;
    for (const Operation& op : g.ops) {
        if (op.type != "Slice") continue;
        const Value& ends = g.values[size_t(op.inputs.at(2))];
        ASSERT_TRUE(ends.intData) << op.name;
        const Dim end = ends.intData->at(0);
        if (end.eval(1, 32) == INT64_MAX) continue;  // an open slice
        EXPECT_EQ(end.eval(1, 32), 32) << op.name;
        EXPECT_EQ(end.eval(2, 100), 100) << op.name;
        ++following;
    }
    EXPECT_GE(following, 1);
}

TEST(TorchScriptImport, GuessesImageInputFromFirstConvolution) {
    REQUIRE_GENERATED("squeezenet1_0.pt");
    Graph g = importTorchScript(generated("squeezenet1_0.pt"), {});
    EXPECT_EQ(shapeStr(g.values[g.inputs[0]].shape), "[N, 3, 224, 224]");
    EXPECT_EQ(shapeStr(g.values[g.outputs[0]].shape), "[N, 1000]");
}

TEST(TorchScriptImport, BertHasSymbolicBatchAndSequence) {
    REQUIRE_GENERATED("bert_small.pt");
    Graph g = importTorchScript(generated("bert_small.pt"), {{"seq", "32"}});
    ASSERT_NO_THROW(g.validate());
    EXPECT_EQ(g.defaults.seq, 32);
    EXPECT_EQ(g.parameterCount(), manifest()["models"]["bert_small"]["parameters"].get<int64_t>());
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(g.values[g.inputs[0]].dtype, DType::Int64);
    EXPECT_EQ(shapeStr(g.values[g.inputs[0]].shape), "[N, S]");
    ASSERT_GE(g.outputs.size(), 1u);
    EXPECT_EQ(shapeStr(g.values[g.outputs[0]].shape), "[N, S, 128]");
    const Operation* emb = userOf(g, "embeddings.word_embeddings.weight");
    ASSERT_NE(emb, nullptr);
    EXPECT_EQ(emb->type, "Gather");
    EXPECT_EQ(emb->modulePath, "embeddings.word_embeddings");
    // A rank-3 linear layer: Transpose of the weight, MatMul, then the bias Add, all in the module.
    const Operation* query = userOf(g, "encoder.layer.1.attention.self.query.weight");
    ASSERT_NE(query, nullptr);
    EXPECT_EQ(query->type, "Transpose");
    EXPECT_EQ(query->modulePath, "encoder.layer.1.attention.self.query");
    auto counts = opCounts(g);
    EXPECT_EQ(counts["LayerNormalization"], 5);
    EXPECT_EQ(counts["Softmax"], 2);
    EXPECT_EQ(counts["Gelu"], 2);
    // Attention scores [N, heads, S, S] come from a MatMul of two activations.
    bool scores = false;
    for (const Operation& op : g.ops)
        if (op.type == "MatMul" && shapeStr(g.values[op.outputs[0]].shape) == "[N, 2, S, S]") scores = true;
    EXPECT_TRUE(scores);
}

TEST(TorchScriptImport, Gpt2LanguageModel) {
    REQUIRE_GENERATED("gpt2_small_lm.pt");
    Graph g = importTorchScript(generated("gpt2_small_lm.pt"), {});
    ASSERT_NO_THROW(g.validate());
    EXPECT_EQ(g.defaults.seq, 128);
    EXPECT_EQ(g.parameterCount(), manifest()["models"]["gpt2_small_lm"]["parameters"].get<int64_t>());
    const Operation* attn = userOf(g, "transformer.h.0.attn.c_attn.weight");
    ASSERT_NE(attn, nullptr);
    EXPECT_EQ(attn->type, "Gemm");  // HF Conv1D is addmm
    EXPECT_EQ(attn->modulePath, "transformer.h.0.attn.c_attn");
    ASSERT_GE(g.outputs.size(), 1u);
    EXPECT_EQ(shapeStr(g.values[g.outputs[0]].shape), "[N, S, 50257]");
}

TEST(TorchScriptImport, EveryGeneratedModelMatchesPyTorchParameterCount) {
    REQUIRE_GENERATED("manifest.json");
    for (const auto& [name, model] : manifest()["models"].items()) {
        std::string file = model["files"]["torchscript"];
        std::map<std::string, std::string> params;
        if (model["kind"] == "vision") {
            const auto& in = model["input"];
            params["input"] = std::to_string(in[0].get<int>()) + "x" + std::to_string(in[1].get<int>()) + "x" +
                              std::to_string(in[2].get<int>());
        }
        SCOPED_TRACE(name);
        Graph g;
        ASSERT_NO_THROW(g = importTorchScript(generated(file), params));
        EXPECT_EQ(g.parameterCount(), model["parameters"].get<int64_t>());
        // The batch stays symbolic through every layer with parameters.
        const std::vector<int> owner = g.parameterOwners();
        for (size_t i = 0; i < g.ops.size(); ++i) {
            const Operation& op = g.ops[i];
            bool ownsParameter = false;
            for (int in : op.inputs) ownsParameter |= in >= 0 && owner[in] == static_cast<int>(i);
            if (!ownsParameter || op.type == "Transpose" || op.type == "Gather")
                continue;
            const Shape& out = g.values[op.outputs[0]].shape;
            ASSERT_FALSE(out.empty()) << op.name;
            EXPECT_TRUE(out[0] == Dim::batch() || out[0] == Dim::batch() * Dim::seq()) << op.name << " " << shapeStr(out);
        }
    }
}

}  // namespace
}  // namespace ts
