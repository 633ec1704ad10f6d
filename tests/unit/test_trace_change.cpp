// A trace at another batch size or precision (predictors/trace/trace_change.h): the batch found in
// the recorded CNN and transformer traces is the one record_traces.py used; every GEMM of the
// transformer does twice the FLOPs at twice the batch and every optimizer operator the same work;
// on a hand-built GEMM-bound trace whose every time is worked out in the comments, twice the
// batch doubles the GEMM's variable time and keeps the optimizer's, autocast moves the GEMM to the
// 16-bit tensor-core rate and adds its casts, and a bf16 trace moved to fp32 loses its casts;
// traces without shapes, with an ambiguous batch or asked for fp8 are refused with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "trace_test_builder.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/scaling/kernel_scaling.h"
#include "trainscope/predictors/trace/trace_prediction.h"

namespace ts::predictors {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kTraces = fs::path(TRAINSCOPE_TEST_DATA_DIR) / "traces";
const GpuSpec& a100() {
    return GpuDatabase::builtin().get("a100-sxm4-80gb");
}

// The stream model's rates on the A100, from its published constants (what the kernel moves use).
double fp32FlopsPerUs() {
    return sustainedFp32Tflops(a100(), KernelScalingTable::builtin().forClass("linear").params) * 1e6;
}
double bf16FlopsPerUs() {
    return *a100().peakTflops(ComputePrecision::Bf16) * 1e6 *
           StreamModel::shipped().tensorCoreEfficiency(a100(), TrainingPrecision::AmpBf16);
}
double bytesPerUs() {
    const KernelScalingTable& table = KernelScalingTable::builtin();
    return *a100().memoryBandwidthGBs * 1e3 * table.statsFor(table.forClass("add"), a100()).memEff *
           StreamModel::shipped().memoryEfficiency;
}

// One step [0, 3000] of a linear layer at batch 256 (8192 -> 8192 features) and its SGD update:
//   copy_ of the input [256, 8192] at [10, 22]: a 4 us kernel [20, 24] (the trace's shortest: the
//     floor, 4 us)
//   addmm (under linear): an FP32 GEMM [60, 2060], 216 blocks of 100 KB shared memory (one per SM
//     on the A100: two waves of 108), launched at 50
//   AccumulateGrad of the weight [8192, 8192] and bias [8192] (no kernels)
//   add_ of the weight: the optimizer kernel [2320, 2620], launched at 2302
// `gemm`, `types`, `castFirst`: the GEMM kernel's name, the operators' float type, and for an amp
// trace an autocast cast of the input ([30, 80] under aten::to at [25, 36]) before the GEMM.
KinetoTrace linearStep(bool shapes = true, const std::string& gemm = "ampere_sgemm_128x64_tn",
                       const std::string& type = "float", bool castFirst = false, int gemmBlocks = 216) {
    TraceBuilder b;
    const json f = type;
    auto dims = [&](json d) { return shapes ? d : json(nullptr); };
    b.step(1, 0, 3000);
    b.op("aten::copy_", 10, 12, dims({{256, 8192}, {256, 8192}, json::array()}), {"float", "float", "Scalar"});
    b.launch(12, 20, 4, "void at::native::vectorized_elementwise_kernel<4>");
    if (castFirst) {
        b.op("aten::to", 25, 11, dims({{256, 8192}, json::array()}), {"float", "Scalar"});
        b.op("aten::_to_copy", 26, 9, dims({{256, 8192}, json::array()}), {"float", "Scalar"});
        b.op("aten::copy_", 28, 6, dims({{256, 8192}, {256, 8192}, json::array()}), {type, "float", "Scalar"});
        b.launch(29, 30, 50, "void at::native::unrolled_elementwise_kernel<copy>");
    }
    b.op("aten::linear", 40, 60, dims({{256, 8192}, {8192, 8192}, {8192}}), {f, f, f});
    b.op("aten::addmm", 45, 50, dims({{8192}, {256, 8192}, {8192, 8192}, json::array(), json::array()}),
         {f, f, f, "Scalar", "Scalar"});
    b.launch(50, 60, 2000, gemm, {gemmBlocks, 1, 1}, {256, 1, 1}, 64, 102400);
    b.op("torch::autograd::AccumulateGrad", 2200, 5, dims({{8192, 8192}}), {"float"});
    b.op("torch::autograd::AccumulateGrad", 2210, 5, dims({{8192}}), {"float"});
    b.op("aten::add_", 2300, 20, dims({{8192, 8192}, {8192, 8192}, json::array()}), {"float", "float", "Scalar"});
    b.launch(2302, 2320, 300, "void multi_tensor_apply_kernel<TensorListMetadata<2>, SgdFunctor>");
    return b.read();
}

const TraceKernel& kernelNamed(const KinetoTrace& t, const std::string& part) {
    for (const TraceKernel& k : t.kernels)
        if (t.str(k.name).find(part) != std::string::npos) return k;
    throw std::runtime_error("no kernel " + part);
}

TEST(TraceBatch, FoundInTheRecordedCnnAndTransformerTracesAsTheRecordingScriptsBatch) {
    // record_traces.py: the CNN trains on randn(4, 3, 16, 16), the transformer on tokens [2, 8].
    const TraceBatch cnn = findTraceBatch(readKinetoTrace((kTraces / "cpu_cnn_shapes.json.gz").string()));
    EXPECT_EQ(cnn.batch, 4) << cnn.problem;
    const TraceBatch transformer =
        findTraceBatch(readKinetoTrace((kTraces / "cpu_transformer_shapes_stack.json.gz").string()));
    EXPECT_EQ(transformer.batch, 2) << transformer.problem;
    EXPECT_EQ(transformer.tokenSizes, std::vector<int64_t>{16});  // 2 x 8 tokens, flattened for the linears
    EXPECT_NE(transformer.how.find("[2, 8]"), std::string::npos) << transformer.how;
    for (const char* plain : {"cpu_cnn_stack.json.gz", "cpu_transformer_plain.json.gz"}) {
        const TraceBatch none = findTraceBatch(readKinetoTrace((kTraces / plain).string()));
        EXPECT_EQ(none.batch, 0) << plain;
        EXPECT_NE(none.problem.find("record_shapes"), std::string::npos) << none.problem;
    }
}

TEST(TraceBatch, TwiceTheBatchDoublesEveryTransformerGemmAndKeepsTheOptimizersWork) {
    // Linears on [16, 32] tokens, attention's bmm on [4 = 2 x 2 heads, 8, 16], weight gradients
    // reducing over the tokens: each does 2 x the FLOPs at batch 4; SGD's updates touch parameters only.
    const KinetoTrace t = readKinetoTrace((kTraces / "cpu_transformer_shapes_stack.json.gz").string());
    TraceChange change;
    change.batch = 4;
    const TraceChangeWork w = analyseTraceChange(t, change);
    int gemms = 0, reductions = 0, optimizer = 0;
    for (size_t i = 0; i < t.operators.size(); ++i) {
        const std::string& name = t.str(t.operators[i].name);
        const OperatorChange& c = w.operators[i];
        if (name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm") {
            ++gemms;
            EXPECT_DOUBLE_EQ(c.computeRatio, 2) << name << " " << t.str(t.operators[i].inputShapes);
            reductions += c.reductionBatched ? 1 : 0;
        }
        if (t.str(t.operators[i].scope).find("optimizer") != std::string::npos && t.operators[i].inputShapes >= 0 &&
            name != "aten::to" && name != "aten::_to_copy" && name != "aten::copy_" && name != "aten::empty_strided") {
            ++optimizer;
            EXPECT_FALSE(c.batched) << name << " " << t.str(t.operators[i].inputShapes);
            EXPECT_DOUBLE_EQ(c.bytesRatio, 1) << name;
        }
    }
    EXPECT_GT(gemms, 20);
    EXPECT_GT(reductions, 5);  // the weight gradients: the batch is their reduction dimension
    EXPECT_GT(optimizer, 20);
}

TEST(TraceBatch, TwiceTheBatchDoublesTheGemmsVariableTimeAndKeepsTheOptimizers) {
    const KinetoTrace t = linearStep();
    TraceChange change;
    change.batch = 512;
    const TracePrediction p = predictTrace(t, a100(), a100(), change);
    EXPECT_EQ(p.recordedBatch, 256);
    // Same GPU: the GEMM keeps its efficiency; compute-bound both ways (34 GFLOP at ~19 TFLOP/s
    // against 285 MB at ~1.5 TB/s), in whole waves both ways (216 -> 432 blocks, 108 per wave):
    // 4 + (2000 - 4) x 2 = 3996 us. The optimizer's 300 us and the 4 us copy (all floor) stay.
    const auto classMs = [&](KernelClass c) {
        for (const TraceClassTime& k : p.classes)
            if (k.kind == c) return k.predictedMs;
        return -1.0;
    };
    EXPECT_NEAR(classMs(KernelClass::Gemm), 3.996, 1e-9);
    EXPECT_NEAR(classMs(KernelClass::Optimizer), 0.300, 1e-9);
    EXPECT_NEAR(classMs(KernelClass::Elementwise), 0.004, 1e-9);
    // The replay: the GEMM runs [60, 4056]; the optimizer kernel, launched at 2302 (18 us launch
    // latency), starts at 4074 and ends at 4374: the step ends with it, 4.374 ms (measured 3.0).
    ASSERT_EQ(p.replay.steps.size(), 1u);
    EXPECT_NEAR(p.replay.steps[0].measuredMs, 3.0, 1e-9);
    EXPECT_NEAR(p.replay.steps[0].predictedMs, 4.374, 1e-9);
    ASSERT_TRUE(p.shares);
    EXPECT_NEAR(p.shares->changedMs, 2.004, 1e-9);  // the GEMM and the input's copy
    EXPECT_NEAR(p.shares->keptMs, 0.300, 1e-9);     // the optimizer
}

TEST(TraceBatch, TheGemmsGridGrowsWithTheBatchAndItsWavesQuantise) {
    // 162 blocks of one per SM: 1.5 waves of 108, two waves' time (padding 4/3). At batch 512,
    // 324 blocks: 3 whole waves. Twice the work in 3/2 the padded waves: (2000 - 4) x 1.5 + 4.
    const KinetoTrace t = linearStep(true, "ampere_sgemm_128x64_tn", "float", false, 162);
    TraceChange change;
    change.batch = 512;
    const TraceKernelMover mover(t, a100(), a100(), change.math,
                                 std::make_shared<const TraceWork>(analyseTraceWork(t, change)));
    EXPECT_NEAR(mover.move(kernelNamed(t, "sgemm")).durationUs, 4 + 1996 * 1.5, 1e-6);
}

TEST(TraceBatch, TheRecordedBatchOnTheRecordedGpuGivesBackTheMeasuredStep) {
    const KinetoTrace t = linearStep();
    TraceChange change;
    change.batch = 256;
    const TracePrediction p = predictTrace(t, a100(), a100(), change);
    EXPECT_NEAR(p.replay.predictedMedianMs, p.replay.measuredMedianMs, 1e-9);
}

TEST(TraceBatch, RefusedWithTheReasonWithoutShapesOrWithAnAmbiguousBatch) {
    TraceChange change;
    change.batch = 512;
    try {
        predictTrace(linearStep(false), a100(), a100(), change);
        FAIL() << "a trace without shapes took a batch size";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("record_shapes"), std::string::npos) << e.what();
    }
    // The first input [16, 32]: 16 leads four activation inputs (the copy's two, two relus), 32 four.
    TraceBuilder b;
    b.step(1, 0, 1000);
    b.op("aten::copy_", 10, 5, json::array({{16, 32}, {16, 32}}), {"float", "float"});
    b.op("aten::relu", 20, 5, json::array({{16, 7}}), {"float"});
    b.op("aten::relu", 30, 5, json::array({{32, 7}}), {"float"});
    b.op("aten::relu", 40, 5, json::array({{32, 9}}), {"float"});
    b.op("aten::relu", 50, 5, json::array({{32, 3}}), {"float"});
    b.op("aten::relu", 60, 5, json::array({{16, 3}}), {"float"});
    b.op("aten::relu", 70, 5, json::array({{32, 5}}), {"float"});
    const TraceBatch found = findTraceBatch(b.read());
    EXPECT_EQ(found.batch, 0);
    EXPECT_NE(found.problem.find("ambiguous"), std::string::npos) << found.problem;
}

TEST(TracePrecision, AutocastMovesTheGemmToBf16AndAddsItsCastsAndTheUnscale) {
    const KinetoTrace t = linearStep();
    EXPECT_EQ(recordedTracePrecision(t).precision, TrainingPrecision::Fp32);
    const TraceChange change = *parseTracePrecision("amp-bf16");
    const TracePrediction p = predictTrace(t, a100(), a100(), change);
    EXPECT_EQ(p.precision, TrainingPrecision::AmpBf16);
    // The GEMM: 34.36 GFLOP; FP32 on CUDA cores before, BF16 tensor cores after, reading 2-byte
    // operands (input, weight, bias and output: 2 x 71.3 M elements) within the same efficiency.
    const double flops = 2.0 * 256 * 8192 * 8192;
    const double elements = 256.0 * 8192 + 8192.0 * 8192 + 256.0 * 8192 + 8192;
    const double before = std::max(flops / fp32FlopsPerUs(), 4 * elements / bytesPerUs());
    const double after = std::max(flops / bf16FlopsPerUs(), 2 * elements / bytesPerUs());
    // Autocast's casts before it: the bias, the input (fp32 from the copy) and the weight, 4 + 2
    // bytes per element each, a 4 us floor per kernel.
    const double castUs = 3 * 4 + 6 * (8192 + 256.0 * 8192 + 8192.0 * 8192) / bytesPerUs();
    const TraceKernelMover mover(t, a100(), a100(), change.math,
                                 std::make_shared<const TraceWork>(analyseTraceWork(t, change)));
    const KernelMove gemm = mover.move(kernelNamed(t, "sgemm"));
    EXPECT_EQ(gemm.targetMath, ComputePrecision::Bf16);
    EXPECT_NEAR(gemm.addedUs, castUs, 1e-6);
    EXPECT_NEAR(gemm.durationUs - gemm.addedUs, 4 + 1996 * after / before, 1e-6);
    EXPECT_LT(gemm.durationUs, 2000);
    // The grad scaler's unscale before the optimizer step: 8 bytes per parameter, one kernel.
    const KernelMove step = mover.move(kernelNamed(t, "multi_tensor_apply"));
    EXPECT_NEAR(step.addedUs, 4 + 8 * (8192.0 * 8192 + 8192) / bytesPerUs(), 1e-6);
    EXPECT_NEAR(step.durationUs - step.addedUs, 300, 1e-9);
    ASSERT_TRUE(p.shares);
    EXPECT_NEAR(p.shares->mathMovedMs, 2.0, 1e-9);
}

TEST(TracePrecision, ABf16TraceMovedToFp32LosesItsCastsAndRunsItsGemmInFp32) {
    const KinetoTrace t = linearStep(true, "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "c10::BFloat16", true);
    const TracePrecision recorded = recordedTracePrecision(t);
    EXPECT_EQ(recorded.precision, TrainingPrecision::AmpBf16) << recorded.how;
    EXPECT_FALSE(recorded.halfWeights);
    const TraceChange change = *parseTracePrecision("fp32");
    const auto work = std::make_shared<const TraceWork>(analyseTraceWork(t, change));
    ASSERT_TRUE(work->change);
    EXPECT_EQ(work->change->operatorsRemoved, 1);  // the copy_ from float to bf16
    ASSERT_EQ(work->change->hostExtraUs.size(), 1u);
    EXPECT_DOUBLE_EQ(work->change->hostExtraUs[0].first, 36);    // the end of aten::to, the outermost
    EXPECT_DOUBLE_EQ(work->change->hostExtraUs[0].second, -11);  // its host time goes
    const TraceKernelMover mover(t, a100(), a100(), change.math, work);
    const KernelMove cast = mover.move(kernelNamed(t, "unrolled_elementwise"));
    EXPECT_TRUE(cast.removed);
    EXPECT_DOUBLE_EQ(cast.durationUs, 0);
    const double flops = 2.0 * 256 * 8192 * 8192;
    const double elements = 256.0 * 8192 + 8192.0 * 8192 + 256.0 * 8192 + 8192;
    const double before = std::max(flops / bf16FlopsPerUs(), 2 * elements / bytesPerUs());
    // PyTorch's default: matrix multiplies in FP32, reading 4-byte operands.
    const double after = std::max(flops / fp32FlopsPerUs(), 4 * elements / bytesPerUs());
    const KernelMove gemm = mover.move(kernelNamed(t, "xmma_gemm"));
    EXPECT_EQ(gemm.targetMath, ComputePrecision::Fp32);
    EXPECT_NEAR(gemm.durationUs, 4 + 1996 * after / before, 1e-6);
    EXPECT_GT(gemm.durationUs, 2000);
}

TEST(TracePrecision, NamesAndRefusals) {
    EXPECT_EQ(parseTracePrecision("amp-fp16")->autocast, TraceAutocast::Fp16);
    EXPECT_EQ(parseTracePrecision("bf16")->autocast, TraceAutocast::Bf16);
    EXPECT_EQ(parseTracePrecision("tf32")->math, Fp32Math::Tf32);
    EXPECT_EQ(parseTracePrecision("as-recorded")->autocast, TraceAutocast::AsRecorded);
    EXPECT_FALSE(parseTracePrecision("fp8"));
    EXPECT_EQ(autocastRuleOfAtenOp("aten::addmm"), AutocastRule::Lower);
    EXPECT_EQ(autocastRuleOfAtenOp("aten::convolution_backward"), AutocastRule::Lower);
    EXPECT_EQ(autocastRuleOfAtenOp("aten::_softmax"), AutocastRule::Fp32);
    EXPECT_EQ(autocastRuleOfAtenOp("aten::native_layer_norm_backward"), AutocastRule::Fp32);
    EXPECT_EQ(autocastRuleOfAtenOp("aten::relu"), AutocastRule::Follow);
    // Without shapes, autocast cannot be turned on: the reason is given.
    try {
        predictTrace(linearStep(false), a100(), a100(), *parseTracePrecision("amp-fp16"));
        FAIL() << "a trace without shapes took autocast";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("record_shapes"), std::string::npos) << e.what();
    }
    // BF16 before Ampere: the GPU cannot run it.
    EXPECT_THROW(predictTrace(linearStep(), a100(), GpuDatabase::builtin().get("v100-sxm2-32gb"),
                              *parseTracePrecision("amp-bf16")),
                 ModelError);
}

TEST(TraceReplay, HostTimeAddedMovesEverythingTheHostDoesLater) {
    // Step [0, 1000]: kernels launched at 12 and 502 run [20, 60] and [510, 550]; 30 us of host
    // time added at 100 delay the second launch to 532: it runs [540, 580]; the step ends at 1030.
    TraceBuilder b;
    b.step(1, 0, 1000);
    b.kernel(10, 20, 40);
    b.kernel(500, 510, 40);
    const KinetoTrace t = b.read();
    const TraceReplay r = replayTrace(t, {40, 40}, {{100, 30}});
    EXPECT_NEAR(r.predictedStartUs[0], 20, 1e-9);
    EXPECT_NEAR(r.predictedStartUs[1], 540, 1e-9);
    EXPECT_NEAR(r.steps[0].predictedMs, 1.030, 1e-9);
}

}  // namespace
}  // namespace ts::predictors
