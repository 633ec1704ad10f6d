// Predicting a PyTorch profiler trace on another GPU (predictors/trace): the replay of the steps
// on hand-built traces whose every time is worked out in the comments, the kernel moves' physics
// (same GPU: unchanged; more bandwidth: faster; arithmetic the target lacks: replaced), the
// arithmetic read from kernel names and the work read from operator shapes, and the shared GPU
// traces (replayed with their own times they give back their measured steps).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "trace_test_builder.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/trace/trace_prediction.h"

namespace ts::predictors {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<double> durations(const KinetoTrace& t, double factor) {
    std::vector<double> d;
    for (const TraceKernel& k : t.kernels) d.push_back(k.durationUs * factor);
    return d;
}

const GpuSpec& gpu(const std::string& id) {
    return GpuDatabase::builtin().get(id);
}

// Step 1 = [0, 1000]: kernels launched at 12, 22, 32 run back to back [40, 340], [340, 640], [640, 940];
// the host synchronises at 40 and returns at 945, 5 us after the last kernel; it then works until the
// step ends at 1000. Step 2 = [1000, 1400]: a kernel launched at 1012 runs [1020, 1320]; a sync from
// 1030 returns at 1325; the host works on until 1400.
KinetoTrace gpuBoundTrace() {
    TraceBuilder b;
    b.step(1, 0, 1000);
    b.step(2, 1000, 400);
    b.kernel(10, 40, 300);
    b.kernel(20, 340, 300);
    b.kernel(30, 640, 300);
    b.runtimeCall("cudaStreamSynchronize", 40, 905);
    b.kernel(1010, 1020, 300);
    b.runtimeCall("cudaStreamSynchronize", 1030, 295);
    return b.read();
}

TEST(TraceReplay, MeasuredDurationsGiveBackTheMeasuredSteps) {
    const KinetoTrace t = gpuBoundTrace();
    ASSERT_EQ(t.hostCalls.size(), 2u);
    const TraceReplay r = replayTrace(t, durations(t, 1));
    ASSERT_EQ(r.steps.size(), 2u);
    EXPECT_DOUBLE_EQ(r.steps[0].measuredMs, 1.0);  // to the next step's start
    EXPECT_DOUBLE_EQ(r.steps[1].measuredMs, 0.4);  // to the later of its host end and its work's end
    for (const ReplayStep& s : r.steps) EXPECT_NEAR(s.predictedMs, s.measuredMs, 1e-9);
    EXPECT_EQ(r.hostWaits, 2);
    for (size_t i = 0; i < t.kernels.size(); ++i) EXPECT_NEAR(r.predictedStartUs[i], t.kernels[i].startUs, 1e-9);
}

TEST(TraceReplay, AFasterGpuShortensTheStepsTheHostWaitedIn) {
    // Kernels of 150 us: [40, 190], [190, 340], [340, 490]; the first sync returns at 495 instead of
    // 945 (the host is 450 us early from then on), step 2 starts at 550, so step 1 takes 550 us. Its
    // kernel is launched at 1012 - 450 = 562 and starts 8 us later (as measured): [570, 720]; the
    // sync issued at 580 returns at 725, 600 us early; the host ends step 2 at 1400 - 600 = 800, so
    // step 2 takes 800 - 550 = 250 us.
    const KinetoTrace t = gpuBoundTrace();
    const TraceReplay r = replayTrace(t, durations(t, 0.5));
    ASSERT_EQ(r.steps.size(), 2u);
    EXPECT_NEAR(r.steps[0].predictedMs, 0.550, 1e-9);
    EXPECT_NEAR(r.steps[1].predictedMs, 0.250, 1e-9);
    EXPECT_NEAR(r.predictedStartUs[3], 570, 1e-9);
}

TEST(TraceReplay, AHostBoundStepDoesNotGetFasterWithTheGpu) {
    // Kernels of 20 us launched every 300 us, no synchronisation: the GPU idles between them.
    TraceBuilder b;
    b.step(1, 0, 1000);
    b.step(2, 1000, 1000);
    for (double at : {100.0, 400.0, 700.0, 1100.0, 1400.0, 1700.0}) b.kernel(at, at + 10, 20);
    const KinetoTrace t = b.read();
    const TraceReplay faster = replayTrace(t, durations(t, 0.25));
    const TraceReplay slower = replayTrace(t, durations(t, 4));
    for (const TraceReplay* r : {&faster, &slower}) {
        ASSERT_EQ(r->steps.size(), 2u);
        EXPECT_NEAR(r->steps[0].predictedMs, 1.0, 1e-9);
        EXPECT_NEAR(r->steps[1].predictedMs, 1.0, 1e-9);  // its host span; the last kernel still ends before it
    }
}

TEST(TraceReplay, AKernelThatWaitedForAnotherStreamStillWaitsForIt) {
    // Stream 7 runs [20, 120]; stream 20's kernel, launched at 5, started only at 120, when stream
    // 7's ended: a dependency (an event the trace does not show). Stream 7's kernel now takes 200 us,
    // so the dependent one starts at 220.
    TraceBuilder b;
    b.step(1, 0, 500);
    b.kernel(0, 20, 100, 7);
    b.kernel(3, 120, 30, 20);
    const KinetoTrace t = b.read();
    std::vector<double> d = durations(t, 1);
    d[0] = 200;
    const TraceReplay r = replayTrace(t, d);
    EXPECT_EQ(r.dependencies, 1);
    EXPECT_NEAR(r.predictedStartUs[1], 220, 1e-9);
}

TEST(TraceReplay, RefusesDurationsThatDoNotMatchTheTrace) {
    const KinetoTrace t = gpuBoundTrace();
    EXPECT_THROW(replayTrace(t, {1.0}), std::invalid_argument);
}

TEST(TraceKernels, ArithmeticComesFromTheKernelsName) {
    EXPECT_EQ(kernelMathPrecision("ampere_sgemm_128x64_nn", KernelClass::Gemm), ComputePrecision::Fp32);
    EXPECT_EQ(kernelMathPrecision("volta_sgemm_32x128_tn", KernelClass::Gemm), ComputePrecision::Fp32);
    EXPECT_EQ(kernelMathPrecision("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(...)",
                                  KernelClass::Gemm),
              ComputePrecision::Tf32);
    EXPECT_EQ(kernelMathPrecision("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw",
                                  KernelClass::Conv),
              ComputePrecision::Tf32);
    EXPECT_EQ(kernelMathPrecision("volta_h884gemm_64x64_ldg8_nn", KernelClass::Gemm), ComputePrecision::Fp16);
    EXPECT_EQ(kernelMathPrecision("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", KernelClass::Gemm),
              ComputePrecision::Bf16);
    EXPECT_EQ(kernelMathPrecision("sm90_xmma_gemm_e4m3e4m3_bf16f32_f32_tn", KernelClass::Gemm), ComputePrecision::Fp8);
    EXPECT_EQ(kernelMathPrecision("pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, cutlass::half_t>>",
                                  KernelClass::Attention),
              ComputePrecision::Fp16);
    EXPECT_FALSE(kernelMathPrecision("void at::native::vectorized_elementwise_kernel<4>", KernelClass::Elementwise));
}

TEST(TraceKernels, FbgemmKernelsAreNotGemms) {
    EXPECT_NE(classifyKernelName("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int)"), KernelClass::Gemm);
    EXPECT_EQ(classifyKernelName("void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float>"),
              KernelClass::Embedding);
}

TEST(TraceKernels, WorkFromRecordedShapes) {
    // addmm(bias [512], a [64, 256], b [256, 512]): 2 x 64 x 256 x 512 FLOPs; reads a, b and the bias,
    // writes 64 x 512, 4 bytes each.
    const auto addmm = operatorWork("aten::addmm", "[[512],[64,256],[256,512],[],[]]",
                                    R"(["float","float","float","Scalar","Scalar"])");
    ASSERT_TRUE(addmm);
    EXPECT_DOUBLE_EQ(addmm->flops, 2.0 * 64 * 256 * 512);
    EXPECT_DOUBLE_EQ(addmm->bytes, 4.0 * (64 * 256 + 256 * 512 + 64 * 512 + 512));
    // bmm in half precision: 8 x [32, 16] x [16, 64].
    const auto bmm = operatorWork("aten::bmm", "[[8,32,16],[8,16,64]]", R"(["c10::Half","c10::Half"])");
    ASSERT_TRUE(bmm);
    EXPECT_DOUBLE_EQ(bmm->flops, 2.0 * 8 * 32 * 16 * 64);
    EXPECT_DOUBLE_EQ(bmm->bytes, 2.0 * (8 * 32 * 16 + 8 * 16 * 64 + 8 * 32 * 64));
    // linear(x [4, 10, 8], w [16, 8], b [16]): 40 rows.
    const auto linear = operatorWork("aten::linear", "[[4,10,8],[16,8],[16]]", R"(["float","float","float"])");
    ASSERT_TRUE(linear);
    EXPECT_DOUBLE_EQ(linear->flops, 2.0 * 40 * 8 * 16);
    // add(a [1000], b [1000]): reads both, writes 1000.
    const auto add = operatorWork("aten::add", "[[1000],[1000],[]]", R"(["float","float","Scalar"])");
    ASSERT_TRUE(add);
    EXPECT_DOUBLE_EQ(add->flops, 0);
    EXPECT_DOUBLE_EQ(add->bytes, 4.0 * 3000);
    EXPECT_FALSE(operatorWork("aten::mm", "not json", ""));
    EXPECT_FALSE(operatorWork("aten::mm", "[[3],[3]]", ""));  // not matrices
}

KinetoTrace mixedTrace() {
    TraceBuilder b;
    b.step(1, 0, 2000);
    b.kernel(10, 20, 400);  // elementwise, no shapes
    b.kernel(30, 420, 500, 7, "ampere_sgemm_128x64_nn", "aten::mm", json::array({{1024, 1024}, {1024, 1024}}),
             json::array({"float", "float"}));
    b.kernel(40, 920, 300, 7, "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>", "aten::mm",
             json::array({{2048, 512}, {512, 2048}}), json::array({"float", "float"}));
    b.kernel(50, 1220, 300, 7, "sm80_xmma_fprop_implicit_gemm_indexed_f32f32_f32f32_f32_nchw",
             "aten::cudnn_convolution");
    return b.read();
}

TEST(TraceKernels, OnItsOwnGpuEveryKernelKeepsItsTime) {
    const KinetoTrace t = mixedTrace();
    const TraceKernelMover same(t, gpu("a100-sxm4-80gb"), gpu("a100-sxm4-80gb"), Fp32Math::AsRecorded);
    for (const TraceKernel& k : t.kernels) EXPECT_DOUBLE_EQ(same.move(k).durationUs, k.durationUs);
}

TEST(TraceKernels, AnArithmeticItsOwnGpuLacksIsRatedAsItsLibraryFallsBack) {
    // A GEMM whose name says FP8 on an A100 (no FP8 in the database: found by fuzz_kineto, which
    // stopped on the missing figure): rated as BF16 on both sides, it keeps its time there.
    TraceBuilder b;
    b.step(1, 0, 1000);
    b.kernel(10, 20, 4);
    b.kernel(30, 40, 300, 7, "sm90_xmma_gemm_e4m3bf16_bf16f32_f32_tn_n", "aten::mm",
             json::array({{1024, 1024}, {1024, 1024}}), json::array({"float", "float"}));
    const KinetoTrace t = b.read();
    const TraceKernelMover same(t, gpu("a100-sxm4-80gb"), gpu("a100-sxm4-80gb"), Fp32Math::AsRecorded);
    EXPECT_NEAR(same.move(t.kernels[1]).durationUs, 300, 1e-9);
    const TracePrediction own = predictTrace(t, gpu("a100-sxm4-80gb"), gpu("a100-sxm4-80gb"));
    EXPECT_NEAR(own.replay.predictedMedianMs, own.replay.measuredMedianMs, 1e-9);
}

TEST(TraceKernels, MovesFollowTheTargetsBandwidthAndArithmetic) {
    const KinetoTrace t = mixedTrace();
    const GpuSpec& a100 = gpu("a100-sxm4-80gb");
    const TraceKernelMover toH100(t, a100, gpu("h100-sxm"), Fp32Math::AsRecorded);
    const TraceKernelMover toT4(t, a100, gpu("t4"), Fp32Math::AsRecorded);
    const TraceKernelMover toV100(t, a100, gpu("v100-sxm2-32gb"), Fp32Math::AsRecorded);
    const TraceKernel& elementwise = t.kernels[0];
    EXPECT_LT(toH100.move(elementwise).durationUs, elementwise.durationUs);    // 3.35 TB/s against 2.0
    EXPECT_GT(toT4.move(elementwise).durationUs, 3 * elementwise.durationUs);  // 320 GB/s
    // The TF32 GEMM on a V100 (no TF32) runs in FP32, from its shapes; the FP32 one stays FP32.
    const KernelMove tf32 = toV100.move(t.kernels[2]);
    EXPECT_EQ(tf32.originMath, ComputePrecision::Tf32);
    EXPECT_EQ(tf32.targetMath, ComputePrecision::Fp32);
    EXPECT_EQ(tf32.basis, MoveBasis::Shapes);
    EXPECT_GT(tf32.durationUs, t.kernels[2].durationUs);
    EXPECT_EQ(toV100.move(t.kernels[1]).targetMath, ComputePrecision::Fp32);
}

TEST(TraceKernels, PyTorchsFp32DefaultPutsConvolutionsOnTf32) {
    const KinetoTrace t = mixedTrace();
    const GpuSpec& v100 = gpu("v100-sxm2-32gb");
    const GpuSpec& a100 = gpu("a100-sxm4-80gb");
    // Moved from the A100 to itself under each FP32 mode: the FP32 convolution and GEMM kernels.
    const TraceKernelMover byDefault(t, a100, a100, Fp32Math::PyTorchDefault);
    const TraceKernelMover strict(t, a100, a100, Fp32Math::Strict);
    const TraceKernelMover tf32(t, a100, a100, Fp32Math::Tf32);
    const TraceKernel& conv = t.kernels[3];
    const TraceKernel& sgemm = t.kernels[1];
    EXPECT_EQ(byDefault.move(conv).targetMath, ComputePrecision::Tf32);
    EXPECT_EQ(byDefault.move(sgemm).targetMath, ComputePrecision::Fp32);
    EXPECT_EQ(strict.move(t.kernels[2]).targetMath, ComputePrecision::Fp32);
    EXPECT_EQ(tf32.move(sgemm).targetMath, ComputePrecision::Tf32);
    EXPECT_LT(tf32.move(sgemm).durationUs, sgemm.durationUs);  // tensor cores: faster
    // Recorded on a V100, which cannot show whether the job allows TF32: as recorded, its FP32
    // convolutions take PyTorch's default on an A100 (TF32), its FP32 matrix multiplies stay FP32.
    const TraceKernelMover fromV100(t, v100, a100, Fp32Math::AsRecorded);
    EXPECT_EQ(fromV100.move(conv).targetMath, ComputePrecision::Tf32);
    EXPECT_EQ(fromV100.move(sgemm).targetMath, ComputePrecision::Fp32);
    // Recorded on an A100, the job's choice is what it ran: FP32 convolutions stay FP32.
    const TraceKernelMover fromA100(t, a100, gpu("h100-sxm"), Fp32Math::AsRecorded);
    EXPECT_EQ(fromA100.move(conv).targetMath, ComputePrecision::Fp32);
    // A V100 has no TF32: the default leaves its convolutions in FP32.
    const TraceKernelMover toV100(t, a100, v100, Fp32Math::PyTorchDefault);
    EXPECT_EQ(toV100.move(conv).targetMath, ComputePrecision::Fp32);
}

TEST(TraceKernels, CollectivesKeepTheRateTheJobReachedWithinTheTargetsRing) {
    // 100 M floats all-reduced over 8 GPUs: 2 x 7/8 x 400 MB = 700 MB over each GPU's link. At
    // 3,043 us that is 230 GB/s, near the A100's NVLink ring (300 GB/s a direction, of which NCCL
    // gets 80%); at 70,000 us, 10 GB/s: the job's network, not the A100, set that rate.
    TraceBuilder b;
    b.step(1, 0, 100000);
    b.allReduce(10, 20, 3043, 100'000'000, 8);
    b.allReduce(4000, 4010, 70000, 100'000'000, 8);
    const KinetoTrace t = b.read();
    ASSERT_EQ(t.kernels.size(), 2u);
    EXPECT_DOUBLE_EQ(collectiveBusBytes(t.collectives[0], 8), 2.0 * 7 / 8 * 4e8);
    // An L40S has no NVLink: its ring is PCIe 4.0 x16 (32 GB/s a direction, 80% of it for NCCL).
    const TraceKernelMover toPcie(t, gpu("a100-sxm4-80gb"), gpu("l40s"), Fp32Math::AsRecorded);
    const KernelMove linkBound = toPcie.move(t.kernels[0]);
    const KernelMove networkBound = toPcie.move(t.kernels[1]);
    EXPECT_EQ(linkBound.basis, MoveBasis::Link);
    EXPECT_GT(linkBound.durationUs, 5 * 3043.0);          // 240 / 25 GB/s: about 9.5x longer
    EXPECT_NEAR(networkBound.durationUs, 70000.0, 1e-6);  // 10 GB/s fits in the PCIe ring
    // On an H100 SXM (NVLink 900 GB/s) the link-bound one gets faster; the other keeps its rate.
    const TraceKernelMover toH100(t, gpu("a100-sxm4-80gb"), gpu("h100-sxm"), Fp32Math::AsRecorded);
    EXPECT_LT(toH100.move(t.kernels[0]).durationUs, 3043.0);
    EXPECT_NEAR(toH100.move(t.kernels[1]).durationUs, 70000.0, 1e-6);
}

TEST(TracePrediction, RefusesWhatCannotBeMoved) {
    TraceBuilder b;
    b.step(1, 0, 10);
    const KinetoTrace cpuOnly = b.read();
    EXPECT_NE(tracePredictionProblem(cpuOnly, &gpu("a100-sxm4-80gb")).find("no GPU activity"), std::string::npos);
    const KinetoTrace t = gpuBoundTrace();
    EXPECT_NE(tracePredictionProblem(t, nullptr).find("not in the GPU database"), std::string::npos);
    EXPECT_THROW(predictTrace(cpuOnly, gpu("a100-sxm4-80gb"), gpu("h100-sxm")), ModelError);
    EXPECT_EQ(parseFp32Math("tf32"), Fp32Math::Tf32);
    EXPECT_EQ(parseFp32Math("fp32"), Fp32Math::PyTorchDefault);
    EXPECT_FALSE(parseFp32Math("amp-fp16"));
}

fs::path sharedTraces() {
    return fs::path(TRAINSCOPE_SOURCE_DIR) / ".." / "shared" / "data" / "pytorch-traces";
}

TEST(TracePrediction, SharedGpuTracesReplayToTheirMeasuredSteps) {
    const fs::path dir = sharedTraces();
    if (!fs::exists(dir)) GTEST_SKIP() << "no shared traces at " << dir;
    const GpuDatabase& db = GpuDatabase::builtin();
    for (const char* name : {"a100_recsys_train.json.gz", "v100-16gb_recsys_train.json.gz",
                             "a100-80gb_train_rank0.json.gz", "v100-32gb_ddp_train_rank0.json.gz"}) {
        SCOPED_TRACE(name);
        const KinetoTrace t = readKinetoTrace((dir / name).string());
        const GpuSpec* origin = matchTraceGpu(t, db);
        ASSERT_NE(origin, nullptr);
        const TracePrediction own = predictTrace(t, *origin, *origin);
        EXPECT_NEAR(own.originReplayMedianMs, own.replay.measuredMedianMs, 1e-6 * own.replay.measuredMedianMs);
        EXPECT_NEAR(own.replay.predictedMedianMs, own.replay.measuredMedianMs, 1e-6 * own.replay.measuredMedianMs);
        // A GPU with less of everything takes longer; one with more, no longer.
        const TracePrediction t4 = predictTrace(t, *origin, gpu("t4"));
        EXPECT_GT(t4.replay.predictedMedianMs, own.replay.measuredMedianMs);
        const TracePrediction h100 = predictTrace(t, *origin, gpu("h100-sxm"));
        EXPECT_LE(h100.replay.predictedMedianMs, own.replay.measuredMedianMs * 1.001);
    }
}

}  // namespace
}  // namespace ts::predictors
