// Kernels of the whole-iteration model whose rate is not a GEMM's: scaled_dot_product_attention by
// backend, FP32 3x3 convolutions, which cuDNN runs with Winograd's transform, and depthwise
// convolutions, which run on CUDA cores.
#include <gtest/gtest.h>

#include <cmath>

#include "trainscope/core/builder.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/iteration/operation_times.h"

using namespace ts;
using namespace ts::predictors;

namespace {

const GpuSpec& gpu(const std::string& id) {
    return GpuDatabase::builtin().get(id);
}

// One attention over [batch, heads, seq, dim] queries, keys and values that need gradients.
Graph attentionGraph(const std::string& backend, int64_t seq, bool causal) {
    ModelBuilder b("attention", SymbolDefaults{1, seq});
    std::vector<int> qkv;
    for (const char* name : {"q", "k", "v"}) {
        const int x = b.input(name, {Dim::batch(), Dim(16), Dim::seq(), Dim(64)});
        qkv.push_back(b.linear(std::string(name) + "_proj", x, 64));  // so that they need gradients
    }
    const int out = b.op1("ScaledDotProductAttention", qkv,
                          {{"backend", backend}, {"causal", int64_t{causal ? 1 : 0}}, {"dropout", 0.0}});
    return b.finish({out});
}

const TimeRow& attentionRow(const ModelAnalysis& m, const OperationTimes& t, bool backward) {
    for (const TimeRow& r : backward ? t.backward : t.forward)
        if (m.ops[size_t(r.op)].kind == OpKind::Attention) return r;
    throw std::runtime_error("no attention row");
}

}  // namespace

// A fused kernel computes its products at the tensor-core rate times the backend's efficiency: the
// forward's FLOPs over (dense 16-bit peak x the architecture's GEMM efficiency x the backend's). PyTorch's
// fused kernels are Ampere's: on an A100 FlashAttention-2 runs at 0.75 of a GEMM's rate (its paper's A100
// benchmarks), on an H100 at 35% of the dense peak in bursts (FlashAttention-3's paper), where cuBLAS's
// GEMMs reach 0.86 of it; the memory-efficient kernel at 60% of the flash kernel's rate on both.
TEST(IterationKernels, FusedAttentionComputesAtItsBackendsShareOfTheGemmRate) {
    const StreamModel& model = StreamModel::shipped();
    const double hopperFlash = 0.35 / model.burstTensorCoreEfficiency(gpu("h100-sxm"), TrainingPrecision::AmpBf16);
    EXPECT_NEAR(hopperFlash, 0.35 / 0.86, 1e-12);
    struct Case {
        const char* gpuId;
        const char* backend;
        double efficiency;  // of a GEMM's rate
    };
    for (const Case& c : {Case{"a100-sxm4-80gb", "flash", 0.75}, Case{"a100-sxm4-80gb", "efficient", 0.45},
                          Case{"h100-sxm", "flash", hopperFlash}, Case{"h100-sxm", "efficient", 0.6 * hopperFlash}}) {
        SCOPED_TRACE(std::string(c.gpuId) + " " + c.backend);
        const GpuSpec& g = gpu(c.gpuId);
        const ModelAnalysis m(attentionGraph(c.backend, 2048, false));
        const OperationTimes t = prepareIterationTimes(m, g, TrainingPrecision::AmpBf16);
        const TimeRow& f = attentionRow(m, t, false);
        const AnalyzedOp& op = m.ops[size_t(f.op)];
        ASSERT_EQ(op.kind, OpKind::Attention);
        const double rate = *g.peakTflops(ComputePrecision::Bf16) * 1e12 *
                            model.tensorCoreEfficiency(g, TrainingPrecision::AmpBf16) * c.efficiency;
        const double batch = 8;
        EXPECT_NEAR(f.computeMs.at(batch), op.forwardFlops.at(batch) / rate * 1e3, 1e-9 * f.computeMs.at(batch));
        // The scores stay on chip: at 2,048 tokens the products, not the traffic, bound the kernel.
        EXPECT_GT(f.computeMs.at(batch), f.memoryMs.at(batch));
    }
}

// The math backend writes and reads every score: its products and its softmax are kernels one after
// another, so at a long sequence it is slower than a fused kernel doing the same products.
TEST(IterationKernels, MathAttentionPaysForItsScoresInMemory) {
    const GpuSpec& a100 = gpu("a100-sxm4-80gb");
    auto total = [&](const std::string& backend) {
        const ModelAnalysis m(attentionGraph(backend, 2048, false));
        const OperationTimes t = prepareIterationTimes(m, a100, TrainingPrecision::AmpFp16);
        return attentionRow(m, t, false).kernelMs(8) + attentionRow(m, t, true).kernelMs(8);
    };
    EXPECT_GT(total("math"), total("flash"));
    EXPECT_GT(total("efficient"), total("flash"));
    // A causal mask halves what the fused kernels compute (the masked tiles are skipped).
    const ModelAnalysis full(attentionGraph("flash", 2048, false)), causal(attentionGraph("flash", 2048, true));
    const double fullFlops =
        full.ops[size_t(attentionRow(full, prepareIterationTimes(full, a100, TrainingPrecision::AmpFp16), false).op)]
            .forwardFlops.at(1);
    const double causalFlops =
        causal
            .ops[size_t(
                attentionRow(causal, prepareIterationTimes(causal, a100, TrainingPrecision::AmpFp16), false).op)]
            .forwardFlops.at(1);
    EXPECT_NEAR(causalFlops / fullFlops, 0.5, 0.01);
}

// Transformers' BERT and GPT-2 run scaled_dot_product_attention by default (attn_implementation
// "sdpa": memory-efficient with BERT's padding mask, flash for GPT-2's causal mask); math is the
// eager attention, with its softmax and dropout as operators of their own.
TEST(IterationKernels, ZooTransformersUseTransformersDefaultAttention) {
    auto count = [](const Graph& g, const std::string& type) {
        int n = 0;
        for (const Operation& op : g.ops) n += op.type == type;
        return n;
    };
    const Graph bert = loadModel("zoo:bert_base");
    EXPECT_EQ(count(bert, "ScaledDotProductAttention"), 12);
    EXPECT_EQ(count(bert, "Softmax"), 0);
    for (const Operation& op : bert.ops)
        if (op.type == "ScaledDotProductAttention") {
            EXPECT_EQ(op.attrString("backend", ""), "efficient");
            EXPECT_EQ(op.inputs.size(), 4u) << "the padding mask";
        }
    const Graph eager = loadModel("zoo:bert_base?attention=math");
    EXPECT_EQ(count(eager, "ScaledDotProductAttention"), 0);
    EXPECT_EQ(count(eager, "Softmax"), 12);
    EXPECT_EQ(bert.parameterCount(), eager.parameterCount());
    const Graph gpt2 = loadModel("zoo:gpt2?seq=128");
    for (const Operation& op : gpt2.ops)
        if (op.type == "ScaledDotProductAttention") {
            EXPECT_EQ(op.attrString("backend", ""), "flash");
            EXPECT_EQ(op.attrInt("causal", 0), 1);
            EXPECT_EQ(op.inputs.size(), 3u) << "flash takes no mask";
        }
    EXPECT_EQ(count(gpt2, "ScaledDotProductAttention"), 12);
}

// cuDNN runs a dense FP32 3x3 convolution of stride 1 with Winograd's transform: fewer
// multiplications than its FLOPs, so it runs faster per FLOP than a strided one, by
// StreamModel::winogradSpeedup less its transforms' share, k (1 / C_in + 1 / C_out) of its products:
// 64 -> 64 channels at S / (1 + 2k / 64). On tensor cores (TF32, 16-bit) it is an implicit GEMM like
// any other.
TEST(IterationKernels, Fp32ThreeByThreeConvolutionsRunWinograd) {
    ModelBuilder b("convs");
    const int x = b.input("x", {Dim::batch(), Dim(64), Dim(56), Dim(56)});
    const int s1 = b.conv2d("stride1", x, 64, 3, 1, 1);
    const int s2 = b.conv2d("stride2", s1, 64, 3, 2, 1);
    const int dw = b.conv2d("depthwise", s2, 64, 3, 1, 1, 64);
    const Graph g = b.finish({dw});
    const ModelAnalysis m(g);
    std::map<std::string, bool> eligible;
    for (const AnalyzedOp& op : m.ops)
        if (op.kind == OpKind::Conv) eligible[op.name] = op.winogradEligible;
    ASSERT_EQ(eligible.size(), 3u);
    int winograd = 0;
    for (const auto& [name, e] : eligible) winograd += e;
    EXPECT_EQ(winograd, 1) << "only the dense stride-1 one";
    auto perFlop = [&](TrainingPrecision p, const std::string& id) {
        const OperationTimes t = prepareIterationTimes(m, gpu(id), p);
        std::map<bool, double> msPerFlop;
        for (const TimeRow& r : t.forward) {
            const AnalyzedOp& op = m.ops[size_t(r.op)];
            if (op.kind == OpKind::Conv && !op.groupedConv)
                msPerFlop[op.winogradEligible] = r.computeMs.at(4) / op.forwardFlops.at(4);
        }
        return msPerFlop;
    };
    const StreamModel& model = StreamModel::shipped();
    const double speedup64 = model.winogradSpeedup / (1 + model.winogradTransformChannels * 2 / 64);
    EXPECT_LT(speedup64, model.winogradSpeedup);
    const auto v100 = perFlop(TrainingPrecision::Fp32, "v100-sxm2-16gb");
    // (C_in comes from the reduction length, which a bias lengthens by half a FLOP per output.)
    EXPECT_NEAR(v100.at(false) / v100.at(true), speedup64, 1e-3);
    const auto amp = perFlop(TrainingPrecision::AmpFp16, "v100-sxm2-16gb");
    EXPECT_NEAR(amp.at(false) / amp.at(true), 1.0, 1e-9);
    // PyTorch's fp32 on an A100 runs convolutions on TF32 tensor cores: no Winograd; fp32-strict does.
    const auto a100 = perFlop(TrainingPrecision::Fp32, "a100-sxm4-80gb");
    EXPECT_NEAR(a100.at(false) / a100.at(true), 1.0, 1e-9);
    const auto strict = perFlop(TrainingPrecision::Fp32Strict, "a100-sxm4-80gb");
    EXPECT_NEAR(strict.at(false) / strict.at(true), speedup64, 1e-3);
}

// Winograd's transforms weigh less against its products the more channels a convolution has: the
// stored V100 ResNet-50 trace (FP32, batch 32) runs its 3x3 convolutions of 64, 128, 256 and 512
// channels at 1.74, 2.06, 2.35 and 2.6 times their FLOP rate relative to the model's other
// convolutions; the model's per-FLOP gain rises the same way, within 8% of each.
TEST(IterationKernels, WinogradGainsWithChannels) {
    const StreamModel& model = StreamModel::shipped();
    auto gain = [&](double channels) {
        return model.winogradSpeedup / (1 + model.winogradTransformChannels * 2 / channels);
    };
    const std::map<double, double> measured{{64, 1.74}, {128, 2.06}, {256, 2.35}, {512, 2.6}};
    double previous = 0;
    for (const auto& [channels, m] : measured) {
        EXPECT_NEAR(gain(channels) / m, 1.0, 0.08) << channels << " channels";
        EXPECT_GT(gain(channels), previous);
        previous = gain(channels);
    }
}

// A depthwise convolution has no reduction over channels for a tensor core: PyTorch's own kernels
// (channels-first FP32) and cuDNN's depthwise ones run on CUDA cores, spending loads and index
// arithmetic on every multiply-add. Its FLOPs take the same time at fp32-strict, tf32 and amp-fp16
// (the dense convolution beside it gains from tensor cores), it follows the CUDA cores from a V100 to
// an A100 rather than the bandwidth (2.27x), and its bytes move at the full
// bandwidth, where a grouped convolution (cuDNN's grouped kernels) of the same tensors is charged
// groupedConvEfficiency in both.
TEST(IterationKernels, DepthwiseConvolutionsRunOnCudaCores) {
    ModelBuilder builder("mbconv");
    const int x = builder.input("x", {Dim::batch(), Dim(96), Dim(56), Dim(56)});
    const int e = builder.conv2d("expand", x, 96, 1);  // gives the next convolutions inputs needing gradients
    const int d = builder.conv2d("depthwise", e, 96, 3, 1, 1, 96, false);
    const int g = builder.conv2d("grouped", e, 96, 3, 1, 1, 2, false);
    const Graph graph = builder.finish({builder.add(d, g)});
    const ModelAnalysis analysis(graph);
    struct Rows {
        const TimeRow *dense = nullptr, *depthwise = nullptr, *grouped = nullptr;
    };
    auto rowsOf = [&](const OperationTimes& t) {
        Rows r;
        for (const TimeRow& row : t.forward) {
            const AnalyzedOp& op = analysis.ops[size_t(row.op)];
            if (op.kind != OpKind::Conv) continue;
            (op.depthwiseConv() ? r.depthwise : op.groupedConv ? r.grouped : r.dense) = &row;
        }
        return r;
    };
    const double n = 64;
    const OperationTimes strict = prepareIterationTimes(analysis, gpu("a100-sxm4-80gb"), TrainingPrecision::Fp32Strict);
    const OperationTimes tf32 = prepareIterationTimes(analysis, gpu("a100-sxm4-80gb"), TrainingPrecision::Tf32);
    const OperationTimes amp = prepareIterationTimes(analysis, gpu("a100-sxm4-80gb"), TrainingPrecision::AmpFp16);
    const Rows s = rowsOf(strict), t = rowsOf(tf32), h = rowsOf(amp);
    ASSERT_TRUE(s.dense && s.depthwise && s.grouped && t.depthwise && h.depthwise && t.dense);
    EXPECT_DOUBLE_EQ(s.depthwise->computeMs.at(n), t.depthwise->computeMs.at(n));
    EXPECT_DOUBLE_EQ(s.depthwise->computeMs.at(n), h.depthwise->computeMs.at(n));
    EXPECT_GT(s.dense->computeMs.at(n), 2 * t.dense->computeMs.at(n));
    // No tiles: no wave, no padding of one output column to a tile's width.
    EXPECT_DOUBLE_EQ(s.depthwise->waveMs, 0.0);

    // From a V100 to an A100 its FLOPs speed up as the 1x1 convolution's do on CUDA cores (fp32-strict),
    // well short of the bandwidth's 2.27x; at this size they bound it (the bytes take less).
    const OperationTimes volta = prepareIterationTimes(analysis, gpu("v100-sxm2-16gb"), TrainingPrecision::Fp32);
    const Rows v = rowsOf(volta);
    const double bandwidth = *gpu("a100-sxm4-80gb").memoryBandwidthGBs / *gpu("v100-sxm2-16gb").memoryBandwidthGBs;
    ASSERT_GT(bandwidth, 2.0);
    const double depthwiseSpeedup = v.depthwise->computeMs.at(n) / t.depthwise->computeMs.at(n);
    EXPECT_NEAR(depthwiseSpeedup, v.dense->computeMs.at(n) / s.dense->computeMs.at(n), 1e-9);
    EXPECT_LT(depthwiseSpeedup, 0.75 * bandwidth);
    EXPECT_GT(t.depthwise->computeMs.at(n), t.depthwise->memoryMs.at(n));
    EXPECT_NEAR(v.depthwise->kernelMs(n) / t.depthwise->kernelMs(n), depthwiseSpeedup, 0.01 * depthwiseSpeedup);

    // The same bytes (96 -> 96 channels, 3x3, 56 x 56): the grouped convolution's at its efficiency.
    EXPECT_NEAR(s.grouped->memoryMs.at(n) / s.depthwise->memoryMs.at(n),
                1 / StreamModel::shipped().groupedConvEfficiency, 0.02);  // the weights differ
}
