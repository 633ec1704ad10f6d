// The executor on whole models: every zoo model runs a training forward on the CPU at small sizes
// with each output shaped as the graph says, and a backward from the sum of its floating outputs
// reaches every parameter the forward uses. Also: leaf contents by role, and operations the
// executor cannot run fail with their name.
#include <gtest/gtest.h>

#if defined(TRAINSCOPE_HAVE_TORCH)

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "torch/graph_executor.h"
#include "trainscope/core/builder.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/ops.h"

namespace {

using ts::torchexec::GraphExecutor;
using ts::torchexec::LoweringOptions;

struct ZooCase {
    std::string model;
    std::map<std::string, std::string> params;
    // Why the default test run leaves it out (set TRAINSCOPE_SLOW_TESTS=1 to run it anyway).
    std::string slow;
};

std::vector<ZooCase> zooCases() {
    const std::map<std::string, ZooCase> small = {
        {"resnet18", {"resnet18", {{"image", "32"}, {"classes", "10"}}, ""}},
        {"resnet50", {"resnet50", {{"image", "32"}, {"classes", "10"}}, ""}},
        {"resnet101", {"resnet101", {{"image", "32"}, {"classes", "10"}}, ""}},
        {"inception_v3", {"inception_v3", {{"image", "299"}, {"classes", "10"}}, ""}},
        {"vgg16", {"vgg16", {{"image", "224"}, {"classes", "10"}}, ""}},
        {"mobilenet_v2", {"mobilenet_v2", {{"image", "32"}, {"classes", "10"}}, ""}},
        {"bert_base", {"bert_base", {{"seq", "8"}}, ""}},
        {"bert_large", {"bert_large", {{"seq", "8"}}, ""}},
        {"gpt2", {"gpt2", {{"seq", "8"}}, ""}},
        {"gpt2_large",
         {"gpt2_large",
          {{"seq", "8"}},
          "774M parameters: one training step on the CPU peaks at about 7 GB of memory and takes about 17 s"}},
        {"transformer", {"transformer", {{"seq", "8"}, {"vocab", "64"}}, ""}},
        {"gnmt", {"gnmt", {{"seq", "8"}, {"vocab", "64"}}, ""}},
        {"dcgan", {"dcgan", {}, ""}},
        {"resnext101_32x4d", {"resnext101_32x4d", {{"image", "32"}, {"classes", "10"}}, ""}},
        {"se_resnext101_32x4d", {"se_resnext101_32x4d", {{"image", "32"}, {"classes", "10"}}, ""}},
        {"efficientnet_b0", {"efficientnet_b0", {{"image", "32"}, {"classes", "10"}}, ""}},
        {"efficientnet_b4", {"efficientnet_b4", {{"image", "32"}, {"classes", "10"}}, ""}},
        // The smallest image SSD300's last feature block accepts.
        {"ssd300", {"ssd300", {{"image", "257"}, {"classes", "5"}}, ""}},
        {"transformer_xl_base", {"transformer_xl_base", {{"seq", "8"}, {"mem", "8"}}, ""}},
        {"transformer_xl_large", {"transformer_xl_large", {{"seq", "8"}, {"mem", "8"}}, ""}},
        {"ncf", {"ncf", {{"users", "1000"}, {"items", "500"}}, ""}},
        // The smallest patch whose bottleneck InstanceNorm can normalise (2^3 voxels).
        {"nnunet", {"nnunet", {{"patch", "64"}}, ""}},
        {"bart_large",
         {"bart_large",
          {{"seq", "8"}},
          "406M parameters, like gpt2_large's step on the CPU (ExecutorHfConfig runs a tiny BART and mBART)"}},
    };
    std::vector<ZooCase> cases;
    for (const ts::ZooEntry& e : ts::zooModels()) {
        auto it = small.find(e.name);
        cases.push_back(it != small.end() ? it->second : ZooCase{e.name, {}, ""});
    }
    return cases;
}

// Readable test names in failure messages.
void PrintTo(const ZooCase& c, std::ostream* os) {
    *os << c.model;
}

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

class ExecutorZoo : public ::testing::TestWithParam<ZooCase> {};

// One training step of `g` on the CPU: every output shaped and typed as the graph says and finite,
// and a backward from the sum of the floating outputs reaching every parameter the forward uses.
void checkTrainingStep(const ts::Graph& g, int64_t batch, int64_t seq, const std::string& label) {
    auto start = std::chrono::steady_clock::now();
    GraphExecutor ex(g, batch, seq, at::Device(at::kCPU), 0);
    ex.materializeLeaves();
    const double initSeconds = seconds(start);
    start = std::chrono::steady_clock::now();
    ex.forward(LoweringOptions{.training = true});
    const double forwardSeconds = seconds(start);

    at::Tensor loss;
    for (int v : g.outputs) {
        const ts::Value& value = g.values[size_t(v)];
        const at::Tensor& y = ex.value(v);
        ASSERT_TRUE(y.defined()) << label << " output " << value.name;
        const std::vector<int64_t> got(y.sizes().begin(), y.sizes().end());
        EXPECT_EQ(got, ts::evalShape(value.shape, batch, seq)) << label << " output " << value.name;
        EXPECT_EQ(ts::torchexec::dtypeOf(y.scalar_type()), value.dtype) << label << " output " << value.name;
        if (!y.is_floating_point()) continue;
        EXPECT_TRUE(at::isfinite(y).all().item<bool>()) << label << " output " << value.name << " is not finite";
        loss = loss.defined() ? loss + y.sum() : y.sum();
    }
    ASSERT_TRUE(loss.defined()) << label << " has no floating output";
    start = std::chrono::steady_clock::now();
    loss.backward();
    const double backwardSeconds = seconds(start);

    const std::vector<int> owners = g.parameterOwners();
    int used = 0;
    std::vector<std::string> missing;
    for (size_t v = 0; v < g.values.size(); ++v) {
        if (g.values[v].kind != ts::ValueKind::Parameter || owners[v] < 0) continue;
        ++used;
        const at::Tensor& p = ex.value(int(v));
        if (!p.requires_grad() || !p.grad().defined()) missing.push_back(g.values[v].name);
    }
    EXPECT_GT(used, 0) << label;
    EXPECT_TRUE(missing.empty()) << label << ": " << missing.size() << " parameters get no gradient, first "
                                 << (missing.empty() ? "" : missing[0]);
    std::printf("%s: %zu operations, %d parameters; init %.2f s, forward %.2f s, backward %.2f s\n", label.c_str(),
                g.ops.size(), used, initSeconds, forwardSeconds, backwardSeconds);
}

// One intra-op thread: on a machine shared with other jobs, OpenMP's spinning workers make small
// CPU kernels tens of times slower than running them on one core.
class OneThread {
public:
    OneThread() : threads_(at::get_num_threads()) { at::set_num_threads(1); }
    ~OneThread() { at::set_num_threads(threads_); }
    OneThread(const OneThread&) = delete;
    OneThread& operator=(const OneThread&) = delete;

private:
    int threads_;
};

TEST_P(ExecutorZoo, TrainingStepShapesAndGradients) {
    const ZooCase& zc = GetParam();
    if (!zc.slow.empty() && !std::getenv("TRAINSCOPE_SLOW_TESTS")) GTEST_SKIP() << zc.model << ": " << zc.slow;
    OneThread oneThread;
    ts::Graph g = ts::buildZooModel(zc.model, zc.params);
    checkTrainingStep(g, 1, g.defaults.seq, zc.model);
}

INSTANTIATE_TEST_SUITE_P(AllModels, ExecutorZoo, ::testing::ValuesIn(zooCases()),
                         [](const ::testing::TestParamInfo<ZooCase>& info) { return info.param.model; });

// BERT's task heads, losses included, train as the plain encoder does.
TEST(ExecutorZooOptions, BertTaskHeadsRunATrainingStep) {
    OneThread oneThread;
    for (const char* head : {"pretraining", "squad"}) {
        ts::Graph g = ts::buildZooModel("bert_base", {{"seq", "8"}, {"head", head}});
        checkTrainingStep(g, 2, g.defaults.seq, std::string("bert_base?head=") + head);
    }
}

// Hugging Face configs (RMSNorm, rotary embeddings, grouped-query scaled dot-product attention, SiLU and
// GELU gated MLPs, Qwen3's per-head norms, mixture-of-experts layers, GPT-OSS's sinks, Phi, DistilBERT,
// ModernBERT, BART, mBART, T5 and mT5): a tiny model of every family runs a
// training step with gradients reaching every parameter (each expert gets some of 16 tokens' routes).
TEST(ExecutorHfConfig, TinyModelsOfEveryFamilyRunATrainingStep) {
    OneThread oneThread;
    const std::string sizes = R"("vocab_size": 97, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4,
        "intermediate_size": 48, "max_position_embeddings": 64)";
    const std::pair<const char*, std::string> configs[] = {
        {"llama", R"("model_type": "llama", "num_key_value_heads": 2, )"},
        {"gemma", R"("model_type": "gemma", "num_key_value_heads": 1, "head_dim": 8, )"},
        {"phi3", R"("model_type": "phi3", "num_key_value_heads": 2, "partial_rotary_factor": 0.5, )"},
        {"qwen3", R"("model_type": "qwen3", "num_key_value_heads": 2, "head_dim": 8, )"},
        {"mixtral", R"("model_type": "mixtral", "num_key_value_heads": 2, "num_local_experts": 4, )"},
        {"qwen3_moe", R"("model_type": "qwen3_moe", "num_key_value_heads": 2, "head_dim": 8, "num_experts": 4,
                         "num_experts_per_tok": 2, "moe_intermediate_size": 16, "norm_topk_prob": true, )"},
        {"gpt_neox", R"("model_type": "gpt_neox", "rotary_pct": 0.25, )"},
        {"bert", R"("model_type": "bert", )"},
        {"roberta", R"("model_type": "roberta", )"},
        {"phi", R"("model_type": "phi", "partial_rotary_factor": 0.5, "qk_layernorm": true, )"},
        {"xlm-roberta", R"("model_type": "xlm-roberta", )"},
        // GPT-OSS: sinks, a window of 4 in its one (even) layer, biased experts with the clamped SwiGLU.
        {"gpt_oss", R"("model_type": "gpt_oss", "num_key_value_heads": 2, "head_dim": 8, "num_local_experts": 4,
                       "num_experts_per_tok": 2, "sliding_window": 4, )"},
    };
    for (const auto& [family, fields] : configs) {
        for (const char* attention : {"flash", "math"}) {
            ts::Graph g = ts::importHfConfigText("{" + fields + sizes + "}", family,
                                                 {{"seq", "8"}, {"attention", attention}});
            checkTrainingStep(g, 2, 8, std::string(family) + "?attention=" + attention);
        }
    }
    // One GPU's tensor-parallel shard (its all-reduces the identity: one process holds one rank), with
    // and without sequence parallelism, dense and mixture-of-experts.
    for (size_t family : {size_t(0), size_t(4)})
        for (const char* sequence : {"0", "1"}) {
            ts::Graph shard = ts::importHfConfigText(
                "{" + configs[family].second + sizes + "}", configs[family].first,
                {{"seq", "8"}, {"tensor_parallel", "2"}, {"sequence_parallel", sequence}});
            checkTrainingStep(shard, 2, 8,
                              std::string(configs[family].first) + "?tensor_parallel=2&sequence_parallel=" + sequence);
        }
    // One GPU's expert-parallel shard: its all-to-alls the identity, every route on one of its 2 experts.
    ts::Graph experts = ts::importHfConfigText("{" + configs[5].second + sizes + "}", configs[5].first,
                                               {{"seq", "8"}, {"expert_parallel", "2"}});
    checkTrainingStep(experts, 2, 8, std::string(configs[5].first) + "?expert_parallel=2");
    ts::Graph distilbert = ts::importHfConfigText(
        R"({"model_type": "distilbert", "vocab_size": 97, "dim": 32, "n_layers": 1, "n_heads": 4, "hidden_dim": 48,
            "max_position_embeddings": 64})",
        "distilbert", {{"seq", "8"}});
    checkTrainingStep(distilbert, 2, 8, "distilbert");
    ts::Graph modernbert = ts::importHfConfigText(
        R"({"model_type": "modernbert", "architectures": ["ModernBertForSequenceClassification"], "vocab_size": 97,
            "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 48,
            "local_attention": 4, "classifier_pooling": "mean", "num_labels": 3})",
        "modernbert", {{"seq", "8"}});
    checkTrainingStep(modernbert, 2, 8, "modernbert");
    ts::Graph gpt2 = ts::importHfConfigText(
        R"({"model_type": "gpt2", "vocab_size": 97, "n_embd": 32, "n_layer": 1, "n_head": 4, "n_positions": 64})", "gpt2",
        {{"seq", "8"}});
    checkTrainingStep(gpt2, 2, 8, "gpt2");
    // The encoder-decoders, tied and untied, with a target shorter than the source (cross-attention of 5
    // queries over 8 keys).
    for (const char* family : {"bart", "mbart"})
        for (const char* tied : {"true", "false"}) {
            ts::Graph g = ts::importHfConfigText(
                std::string(R"({"model_type": ")") + family + R"(", "vocab_size": 97, "d_model": 32,
                    "encoder_layers": 1, "decoder_layers": 1,
                    "encoder_attention_heads": 4, "decoder_attention_heads": 2,
                    "encoder_ffn_dim": 48, "decoder_ffn_dim": 40, "max_position_embeddings": 64,
                    "tie_word_embeddings": )" + tied + "}",
                family, {{"seq", "8"}, {"target_seq", "5"}});
            checkTrainingStep(g, 2, 8, std::string(family) + " tied " + tied);
        }
    // T5 and mT5: the relative-position bias through sdpa's float mask, gated and ReLU MLPs.
    for (const char* family : {"t5", "mt5"})
        for (const char* projection : {"relu", "gated-gelu"}) {
            ts::Graph g = ts::importHfConfigText(
                std::string(R"({"model_type": ")") + family + R"(", "vocab_size": 97, "d_model": 32, "d_kv": 12,
                    "d_ff": 40, "num_layers": 2, "num_decoder_layers": 1, "num_heads": 4,
                    "relative_attention_num_buckets": 8, "feed_forward_proj": ")" + projection + "\"}",
                family, {{"seq", "8"}, {"target_seq", "5"}});
            checkTrainingStep(g, 2, 8, std::string(family) + " " + projection);
        }
    ts::Graph vit = ts::importHfConfigText(
        R"({"model_type": "vit", "architectures": ["ViTForImageClassification"], "hidden_size": 32,
            "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 48, "image_size": 16,
            "patch_size": 8, "num_labels": 3})", "vit");
    checkTrainingStep(vit, 2, 0, "vit");
}

// Real architectures exported by PyTorch itself (tests/real_models/generate.py writes them; the test
// skips when they are absent): the ONNX and TorchScript files run a training step as the zoo does.
TEST(ExecutorRealModels, ExportedModelsRunATrainingStep) {
    const std::filesystem::path dir = TRAINSCOPE_GENERATED_DIR;
    std::ifstream in(dir / "manifest.json");
    if (!in) GTEST_SKIP() << "no generated models in " << dir << " (run tests/real_models/generate.py " << dir << ")";
    const nlohmann::json manifest = nlohmann::json::parse(in);
    OneThread oneThread;
    int checked = 0;
    for (const auto& [name, model] : manifest.at("models").items()) {
        for (const auto& [format, file] : model.at("files").items()) {
            std::string spec = (dir / file.get<std::string>()).string();
            if (format.rfind("torchscript", 0) == 0) spec += model.value("torchscript_options", "");
            const std::string label = name + " (" + format + ")";
            try {
                ts::Graph g = ts::loadModel(spec);
                checkTrainingStep(g, 1, g.defaults.seq, label);
            } catch (const std::exception& e) {
                ADD_FAILURE() << label << ": " << e.what();
            }
            ++checked;
        }
    }
    EXPECT_GT(checked, 0);
}

// Parameters and buffers take PyTorch's defaults for their layer; ids stay below the table they index.
TEST(ExecutorLeaves, ContentsFollowTheRoleOfTheConsumer) {
    ts::ModelBuilder b("leaves");
    int image = b.input("image", {ts::Dim::batch(), 3, 8, 8});
    int ids = b.input("ids", {ts::Dim::batch(), 5}, ts::DType::Int64);
    int x = b.batchNorm("bn", b.conv2d("conv", image, 4, 3));
    int e = b.embedding("emb", ids, 7, 4);
    ts::Graph g = b.finish({x, e});
    GraphExecutor ex(g, 2, 0, at::Device(at::kCPU), 42);
    ex.materializeLeaves();
    auto valueOf = [&](const std::string& name) { return ex.value(g.findValue(name)); };
    at::Tensor w = valueOf("conv.weight");
    const double bound = 1.0 / std::sqrt(3.0 * 3 * 3);
    EXPECT_LE(w.abs().max().item<double>(), bound);
    EXPECT_GT(w.abs().max().item<double>(), bound * 0.5);  // spread over the range, not a constant
    EXPECT_TRUE(w.requires_grad());
    EXPECT_EQ(valueOf("conv.bias").abs().max().item<double>(), 0.0);
    EXPECT_TRUE(at::equal(valueOf("bn.weight"), at::ones({4})));
    EXPECT_TRUE(at::equal(valueOf("bn.bias"), at::zeros({4})));
    EXPECT_TRUE(at::equal(valueOf("bn.running_mean"), at::zeros({4})));
    EXPECT_TRUE(at::equal(valueOf("bn.running_var"), at::ones({4})));
    EXPECT_FALSE(valueOf("bn.running_var").requires_grad());
    at::Tensor table = valueOf("emb.weight");
    EXPECT_NEAR(table.std().item<double>(), 1.0, 0.5);  // nn.Embedding: N(0, 1)
    at::Tensor tokens = ex.value(ids);
    EXPECT_EQ(tokens.sizes(), at::IntArrayRef({2, 5}));
    EXPECT_GE(tokens.min().item<int64_t>(), 0);
    EXPECT_LT(tokens.max().item<int64_t>(), 7);

    // The same seed gives the same model and batch; training updates the running statistics in place.
    GraphExecutor again(g, 2, 0, at::Device(at::kCPU), 42);
    again.materializeLeaves();
    EXPECT_TRUE(at::equal(again.value(g.findValue("conv.weight")), w));
    EXPECT_TRUE(at::equal(again.value(ids), tokens));
    ex.forward(LoweringOptions{.training = true});
    EXPECT_FALSE(at::equal(valueOf("bn.running_mean"), at::zeros({4})));
}

TEST(ExecutorLeaves, CanExecuteEveryRegistryOperator) {
    for (const std::string& type : ts::supportedOperators()) EXPECT_TRUE(ts::torchexec::canExecute(type)) << type;
    EXPECT_FALSE(ts::torchexec::canExecute("NoSuchOperator"));
}

std::vector<at::Tensor> runGraph(const ts::Graph& g, int64_t batch) {
    GraphExecutor ex(g, batch, 0, at::Device(at::kCPU), 7);
    ex.materializeLeaves();
    ex.forward(LoweringOptions{.training = false});
    std::vector<at::Tensor> out;
    for (int v : g.outputs) out.push_back(ex.value(v));
    return out;
}

// PyTorch's fused LSTM/GRU/RNN kernels (ONNX gates reordered) against the ONNX equations step by
// step (a clip too large to matter sends an operation down that path), in every direction and layout.
TEST(ExecutorRecurrent, FusedKernelsAgreeWithTheOnnxEquations) {
    for (const std::string kind : {"LSTM", "GRU", "RNN"})
        for (const std::string direction : {"forward", "reverse", "bidirectional"})
            for (int64_t layout : {0, 1}) {
                ts::ModelBuilder b("rnn");
                const int64_t dirs = direction == "bidirectional" ? 2 : 1, gates = kind == "LSTM"  ? 4
                                                                                   : kind == "GRU" ? 3
                                                                                                   : 1;
                int x = b.input("x", {5, ts::Dim::batch(), 3});
                int w = b.parameter("rnn", "W", {dirs, gates * 4, 3});
                int r = b.parameter("rnn", "R", {dirs, gates * 4, 4});
                int bias = b.parameter("rnn", "B", {dirs, 2 * gates * 4});
                std::map<std::string, ts::Attribute> attrs{{"hidden_size", int64_t{4}}, {"direction", direction}};
                if (kind == "GRU") attrs["linear_before_reset"] = int64_t{1};
                std::vector<int> outs = b.op(kind, {x, w, r, bias}, attrs, kind == "LSTM" ? 3 : 2, "rnn");
                ts::Graph fused = b.finish(outs);
                for (ts::Operation& op : fused.ops) op.attrs["layout"] = layout;
                ts::Graph stepwise = fused;
                for (ts::Operation& op : stepwise.ops) op.attrs["clip"] = 1e30;
                std::vector<at::Tensor> a = runGraph(fused, 2), e = runGraph(stepwise, 2);
                ASSERT_EQ(a.size(), e.size());
                for (size_t i = 0; i < a.size(); ++i)
                    EXPECT_TRUE(at::allclose(a[i], e[i], 1e-4, 1e-5))
                        << kind << " " << direction << " layout " << layout << " output " << i << "\n"
                        << a[i] << e[i];
            }
}

// What cannot run throws an ExecutionError naming the operation and its type; nothing crashes.
TEST(ExecutorLeaves, UnsupportedOperationsFailWithTheirName) {
    ts::ModelBuilder b("unsupported");
    int x = b.input("x", {ts::Dim::batch(), 2, 8, 8});
    int y = b.op1("AveragePool", {x},
                  {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"dilations", std::vector<int64_t>{2, 2}}}, "pool");
    ts::Graph g = b.finish({y});
    GraphExecutor ex(g, 1, 0, at::Device(at::kCPU), 0);
    ex.materializeLeaves();
    try {
        ex.forward(LoweringOptions{.training = false});
        FAIL() << "a dilated average pool ran";
    } catch (const ts::ExecutionError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("pool/AveragePool (AveragePool)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("dilated"), std::string::npos) << msg;
    }

    // An operator without a lowering (a graph built by hand: no importer accepts one).
    ts::Graph det;
    ts::Value in;
    in.name = "m";
    in.shape = {2, 3, 3};
    in.kind = ts::ValueKind::Input;
    det.inputs.push_back(det.addValue(in));
    ts::Value out;
    out.name = "d";
    out.shape = {2};
    ts::Operation op;
    op.type = "Det";
    op.name = "det";
    op.inputs = {0};
    op.outputs = {det.addValue(out)};
    det.addOperation(op);
    det.outputs = {1};
    GraphExecutor detEx(det, 1, 0, at::Device(at::kCPU), 0);
    detEx.materializeLeaves();
    try {
        detEx.forward(LoweringOptions{.training = false});
        FAIL() << "an operator without a lowering ran";
    } catch (const ts::ExecutionError& e) {
        EXPECT_NE(std::string(e.what()).find("det (Det): the executor has no lowering"), std::string::npos) << e.what();
    }

    // LibTorch refusing its arguments (a reshape to the wrong size) is reported the same way.
    ts::Graph bad = det;
    bad.ops[0].type = "Reshape";
    bad.ops[0].name = "reshape";
    ts::Value target;
    target.name = "target";
    target.dtype = ts::DType::Int64;
    target.shape = {1};
    target.kind = ts::ValueKind::Constant;
    target.intData = std::vector<ts::Dim>{ts::Dim(7)};
    bad.ops[0].inputs = {0, bad.addValue(target)};
    GraphExecutor badEx(bad, 1, 0, at::Device(at::kCPU), 0);
    badEx.materializeLeaves();
    try {
        badEx.forward(LoweringOptions{.training = false});
        FAIL() << "a reshape of 18 elements to 7 ran";
    } catch (const ts::ExecutionError& e) {
        EXPECT_NE(std::string(e.what()).find("reshape (Reshape): "), std::string::npos) << e.what();
    }
}

}  // namespace

#endif  // TRAINSCOPE_HAVE_TORCH
