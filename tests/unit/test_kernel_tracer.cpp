// The kernel tracer: the tensor-core name heuristic on real kernel names, the merging of traced
// launches into one call's kernels, the decoding and attribution of (synthetic) CUPTI records, and
// the tracer's behaviour without a GPU. LocalGpuKernelTracer (label "gpu") traces real kernels and
// skips, saying why, where there is no GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../core/src/profiling/kernel_tracer_internal.h"
#include "trainscope/kernels/calibration.h"
#include "trainscope/kernels/device_query.h"

namespace ts::profiling {
namespace {

// Names as CUPTI, nsys and PyTorch's profiler report them (cuBLAS, cuBLASLt, cuDNN, CUTLASS,
// FlashAttention, PyTorch's memory-efficient attention, ATen), collected from public traces.
const char* const kTensorCoreKernels[] = {
    "volta_h884gemm_64x64_ldg8_nn",
    "volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn",
    "turing_fp16_s1688gemm_fp16_128x64_sliced1x2_ldg8_f2f_tn",
    "turing_fp16_s1688cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1",
    "ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x4_tn",
    "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_tn",
    "cutlass_tensorop_s16816gemm_f16_256x128_32x3_nn_align8",
    "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8>("
    "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8::Params)",
    "cutlass::Kernel2<cutlass_70_tensorop_h884gemm_128x128_tn_align8>(cutlass_70_tensorop_h884gemm_128x128_tn_align8::"
    "Params)",
    "cutlass_75_wmma_tensorop_s161616gemm_f16_16x16_128x1_tn_align8",
    "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize32x32x64_stage6_warpsize2x2x1_tensor16x8x16_execute_kernel__5x_"
    "cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
    "cublas",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
    "cublas",
    "sm80_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize256x64x32_stage3_warpsize4x2x1_g1_"
    "tensor16x8x8",
    "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32",
    "nvjet_tst_128x128_64x4_1x2_h_bz_coopA",
    "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT",
    "nvjet_sm100_tst_16x64_64x16_4x1_v_bz_TNN",
    "nvjet_sss_tf32_128x256_TNT",
    "pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
    "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, "
    "false, false, true, true, false>(pytorch_flash::Flash_fwd_params)",
    "flash_fwd_splitkv_kernel",
    "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, "
    "cutlass::bfloat16_t>, true, false, false, false, true, true, false, false>(Flash_bwd_params)",
    "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, "
    "true, 64, 64, 64, true, true>::Params)",
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x256_4x1x1_cga1x1x1_kernel0_0",
};

const char* const kCudaCoreKernels[] = {
    "ampere_sgemm_128x64_nn",
    "ampere_sgemm_32x32_sliced1x4_tn",
    "volta_sgemm_128x64_nn",
    "implicit_convolve_sgemm",
    "precomputed_convolve_sgemm",
    "cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nt_align1>(cutlass_80_simt_sgemm_128x64_8x5_nt_align1::Params)",
    "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x16x8_stage3_warpsize4x1x1_g1_ffma_"
    "aligna4_alignc4",
    "ampere_scudnn_128x64_relu_xregs_large_nn_v1",
    "maxwell_scudnn_winograd_128x128_ldg1_ldg4_relu_tile424n_nt_v1",
    "fmha_cutlassF_f32_aligned_64x64_rf_sm75",
    "flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, "
    "cutlass::bfloat16_t> >(Flash_bwd_params)",
    "flash_bwd_convert_dq_kernel",
    "pytorch_flash::flash_fwd_splitkv_combine_kernel<traits>(params)",
    "cutlass::device_kernel<flash::FlashAttnFwdCombine<...>>(...)",
    "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >("
    "int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
    "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned "
    "int, float, 4>)",
    "cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct, float const*, "
    "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, "
    "float)",
    "at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
    "namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>",
    "at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<4>"
    ", at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>, float*>",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    "cutlass_80_splitKreduce_kernel",
    "magma_sgemmEx_kernel",
    "nchwToNhwcKernel",
    "RowwiseMomentsCUDAKernel",
};

TEST(KernelTensorCore, RecognisesTensorCoreKernelsByName) {
    for (const char* name : kTensorCoreKernels) EXPECT_TRUE(isTensorCoreKernel(name)) << name;
}

TEST(KernelTensorCore, LeavesCudaCoreKernelsOut) {
    for (const char* name : kCudaCoreKernels) EXPECT_FALSE(isTensorCoreKernel(name)) << name;
    EXPECT_FALSE(isTensorCoreKernel(""));
}

TEST(KernelTensorCore, ReadsTheWordsOfTheNameNotStrayLetters) {
    // "imma" starts English words; "tensor" alone is no marker.
    EXPECT_FALSE(isTensorCoreKernel("immature_tensor_copy_kernel"));
    EXPECT_TRUE(isTensorCoreKernel("sm75_xmma_gemm_i8i8_i8i32_f32_tn_n_tilesize128x128x64_imma"));
    EXPECT_TRUE(isTensorCoreKernel("VOLTA_H884GEMM_64X64_LDG8_NN"));
}

KernelActivity launch(const std::string& name, int gridX, double us, int blockX = 256) {
    KernelActivity a;
    a.kernel.name = name;
    a.kernel.grid[0] = gridX;
    a.kernel.block[0] = blockX;
    a.kernel.registersPerThread = 32;
    a.kernel.durationUs = us;
    return a;
}

TEST(KernelSummary, MergesIdenticalLaunchesPerCallInFirstLaunchOrder) {
    // Two calls of one layer: gemm, bias add on two shapes, and the gemm's reduction twice.
    std::vector<KernelActivity> traced;
    for (int call = 0; call < 2; ++call) {
        const double extra = call;  // the second call is 1 us slower per kernel
        traced.push_back(launch("gemm", 80, 10 + extra, 128));
        traced.push_back(launch("add", 40, 2 + extra));
        traced.push_back(launch("reduce", 1, 1 + extra));
        traced.push_back(launch("add", 20, 1.5 + extra));
        traced.push_back(launch("reduce", 1, 3 + extra));
    }
    const std::vector<KernelRecord> kernels = summarizeKernels(traced, 2);
    ASSERT_EQ(kernels.size(), 4u);
    EXPECT_EQ(kernels[0].name, "gemm");
    EXPECT_EQ(kernels[0].block[0], 128);
    EXPECT_EQ(kernels[0].launches, 1);
    EXPECT_DOUBLE_EQ(kernels[0].durationUs, (10 + 11) / 2.0);
    EXPECT_EQ(kernels[0].registersPerThread, 32);
    // The same name on another grid stays apart.
    EXPECT_EQ(kernels[1].name, "add");
    EXPECT_EQ(kernels[1].grid[0], 40);
    EXPECT_DOUBLE_EQ(kernels[1].durationUs, (2 + 3) / 2.0);
    EXPECT_EQ(kernels[2].name, "reduce");
    EXPECT_EQ(kernels[2].launches, 2);
    EXPECT_DOUBLE_EQ(kernels[2].durationUs, (1 + 3 + 2 + 4) / 2.0);
    EXPECT_EQ(kernels[3].name, "add");
    EXPECT_EQ(kernels[3].grid[0], 20);
    EXPECT_DOUBLE_EQ(kernels[3].durationUs, (1.5 + 2.5) / 2.0);
}

TEST(KernelSummary, AKernelOfOnlySomeCallsCountsOncePerCall) {
    std::vector<KernelActivity> traced = {launch("gemm", 8, 4), launch("autotune_probe", 8, 9), launch("gemm", 8, 4),
                                          launch("gemm", 8, 4)};
    const std::vector<KernelRecord> kernels = summarizeKernels(traced, 3);
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0].launches, 1);
    EXPECT_DOUBLE_EQ(kernels[0].durationUs, 4);
    EXPECT_EQ(kernels[1].launches, 1);
    EXPECT_DOUBLE_EQ(kernels[1].durationUs, 3);
}

TEST(KernelSummary, RejectsFewerThanOneIteration) {
    EXPECT_TRUE(summarizeKernels({}, 1).empty());
    try {
        summarizeKernels({launch("gemm", 1, 1)}, 0);
        FAIL() << "0 iterations accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("iterations"), std::string::npos) << e.what();
    }
}

TEST(KernelRecordDecoding, DemanglesOnlyMangledNames) {
    using detail::readableKernelName;
    EXPECT_EQ(readableKernelName("_ZN2at6native6kernelIfEEvPT_i"), "at::native::kernel<float>(float*, int)");
    EXPECT_EQ(readableKernelName("_Z3fooi"), "foo(int)");
    EXPECT_EQ(readableKernelName("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
    // __cxa_demangle would read a bare "f" as the type float.
    EXPECT_EQ(readableKernelName("f"), "f");
    EXPECT_EQ(readableKernelName("_Z_not_a_valid_mangling"), "_Z_not_a_valid_mangling");
    EXPECT_EQ(readableKernelName(""), "");
}

TEST(KernelRecordDecoding, ShortensLongNamesParameterListFirst) {
    using detail::kMaxKernelNameLength;
    using detail::readableKernelName;
    // "<290 letters>(int, int, int, int)": dropping the parameters is enough.
    const std::string longName(290, 'k');
    EXPECT_EQ(readableKernelName("_Z290" + longName + "iiii"), longName);
    const std::string tooLong(400, 'k');
    const std::string shortened = readableKernelName("_Z400" + tooLong + "i");
    EXPECT_EQ(shortened.size(), kMaxKernelNameLength);
    EXPECT_EQ(shortened.substr(shortened.size() - 3), "...");
    EXPECT_EQ(readableKernelName(tooLong).size(), kMaxKernelNameLength);
}

detail::LaunchedKernel record(const std::string& name, uint32_t correlationId, uint64_t startNs, uint64_t endNs) {
    detail::LaunchedKernel k;
    k.name = name;
    k.correlationId = correlationId;
    k.startNs = startNs;
    k.endNs = endNs;
    k.grid[0] = 64;
    k.block[0] = 128;
    k.registersPerThread = 40;
    k.staticSharedBytes = 1024;
    k.dynamicSharedBytes = 2048;
    k.streamId = 7;
    return k;
}

TEST(KernelRecordDecoding, AttributesKernelsToThePushedIdOfTheirLaunch) {
    detail::Correlations known;
    known.externalIds = {{10, 5}};                                        // launched on the pushing thread
    known.apiStartNs = {{10, 1100}, {11, 1500}, {12, 2500}, {14, 3500}};  // 13: no API record
    known.ranges = {{7, 1000, 2000}, {8, 1400, 1600}, {9, 3000, detail::PushedRange::kOpen}};
    const std::vector<detail::LaunchedKernel> kernels = {
        record("late", 14, 9000, 9500),
        record("_ZN2at6native6kernelIfEEvPT_i", 10, 5000, 7500),
        record("volta_h884gemm_64x64_ldg8_nn", 11, 6000, 6001),
        record("outside", 12, 8000, 8100),
        record("unknown_call", 13, 8500, 8600),
        record("untimed", 15, 0, 0),
    };
    const std::vector<KernelActivity> activities = detail::attributeKernels(kernels, known);
    ASSERT_EQ(activities.size(), 6u);
    // Start-time order; an untimed kernel (0) comes first.
    EXPECT_EQ(activities[0].kernel.name, "untimed");
    EXPECT_EQ(activities[0].kernel.durationUs, 0);
    const KernelActivity& first = activities[1];
    EXPECT_EQ(first.kernel.name, "at::native::kernel<float>(float*, int)");
    EXPECT_EQ(first.externalId, 5u);
    EXPECT_DOUBLE_EQ(first.kernel.durationUs, 2.5);
    EXPECT_EQ(first.kernel.launches, 1);
    EXPECT_EQ(first.kernel.grid[0], 64);
    EXPECT_EQ(first.kernel.grid[1], 1);
    EXPECT_EQ(first.kernel.block[0], 128);
    EXPECT_EQ(first.kernel.registersPerThread, 40);
    EXPECT_EQ(first.kernel.staticSharedBytes, 1024);
    EXPECT_EQ(first.kernel.dynamicSharedBytes, 2048);
    EXPECT_EQ(first.startNs, 5000u);
    EXPECT_EQ(first.endNs, 7500u);
    EXPECT_EQ(first.streamId, 7u);
    EXPECT_FALSE(first.kernel.tensorCore);
    // Another thread's launch inside two nested ranges: the inner one.
    EXPECT_EQ(activities[2].externalId, 8u);
    EXPECT_TRUE(activities[2].kernel.tensorCore);
    EXPECT_DOUBLE_EQ(activities[2].kernel.durationUs, 0.001);
    EXPECT_EQ(activities[3].externalId, 0u);  // launched between ranges
    EXPECT_EQ(activities[4].externalId, 0u);  // launching call unknown
    EXPECT_EQ(activities[5].externalId, 9u);  // inside a range not yet popped
}

TEST(KernelRecordDecoding, DecidesTensorCoresOnTheFullName) {
    // A CUTLASS 3 kernel whose tensor-core mainloop is named past the shortening point.
    std::string name =
        "cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<" + std::string(400, 'x') +
        ", cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized>>>";
    const std::vector<KernelActivity> activities = detail::attributeKernels({record(name, 1, 10, 20)}, {});
    ASSERT_EQ(activities.size(), 1u);
    EXPECT_TRUE(activities[0].kernel.tensorCore);
    EXPECT_EQ(activities[0].kernel.name.size(), detail::kMaxKernelNameLength);
}

TEST(KernelTracerWithoutGpu, StartRefusesPromptlyWithAReason) {
    if (kernels::queryDevices().available) GTEST_SKIP() << "a GPU is present";
    KernelTracer tracer;
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_FALSE(tracer.start());
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), 1.0);
    EXPECT_FALSE(tracer.active());
    EXPECT_FALSE(tracer.reason().empty());
    EXPECT_EQ(tracer.reason().find('\n'), std::string::npos) << tracer.reason();
    RecordProperty("reason", tracer.reason());
    EXPECT_EQ(tracer.cuptiVersion(), "");
    EXPECT_FALSE(tracer.start());  // asking again is harmless and says the same
    EXPECT_FALSE(tracer.reason().empty());
}

TEST(KernelTracerWithoutGpu, InactiveTracerIgnoresPushPopAndCollect) {
    KernelTracer tracer;
    tracer.pop();  // nothing pushed
    tracer.push(3);
    tracer.push(4);
    tracer.pop();
    EXPECT_TRUE(tracer.collect().empty());
    EXPECT_EQ(tracer.timestampNs(), 0u);
    tracer.pop();
    tracer.pop();
    EXPECT_TRUE(tracer.collect().empty());
}

TEST(LocalGpuKernelTracer, RecordsTheKernelsLaunchedUnderAPushedId) {
    const DeviceQuery q = kernels::queryDevices();
    if (!q.available) GTEST_SKIP() << "no GPU: " << q.status;
    KernelTracer tracer;
    if (!tracer.start()) GTEST_SKIP() << "CUPTI unavailable: " << tracer.reason();
    EXPECT_NE(tracer.cuptiVersion().find("CUPTI"), std::string::npos);
    const uint64_t before = tracer.timestampNs();
    tracer.push(42);
    kernels::CalibrationOptions options;
    options.quick = true;
    int polls = 0;
    options.cancelled = [&] { return ++polls > 5; };  // a few repetitions of the first benchmarks
    kernels::calibrate(options);                      // synchronizes before it returns
    tracer.pop();
    const std::vector<KernelActivity> traced = tracer.collect();
    const uint64_t after = tracer.timestampNs();
    ASSERT_FALSE(traced.empty());
    for (const KernelActivity& a : traced) {
        SCOPED_TRACE(a.kernel.name);
        EXPECT_FALSE(a.kernel.name.empty());
        EXPECT_EQ(a.externalId, 42u);
        EXPECT_GE(a.startNs, before);
        EXPECT_LE(a.endNs, after);
        EXPECT_GT(a.kernel.durationUs, 0);
        EXPECT_GE(a.kernel.grid[0], 1);
        EXPECT_GE(a.kernel.block[0], 1);
        EXPECT_GT(a.kernel.registersPerThread, 0);
    }
    EXPECT_TRUE(tracer.collect().empty());  // each kernel is returned once
}

TEST(LocalGpuKernelTracer, OneTracerAtATime) {
    const DeviceQuery q = kernels::queryDevices();
    if (!q.available) GTEST_SKIP() << "no GPU: " << q.status;
    {
        KernelTracer first;
        if (!first.start()) GTEST_SKIP() << "CUPTI unavailable: " << first.reason();
        KernelTracer second;
        EXPECT_FALSE(second.start());
        EXPECT_NE(second.reason().find("another KernelTracer"), std::string::npos) << second.reason();
    }
    KernelTracer third;  // the first has stopped
    EXPECT_TRUE(third.start()) << third.reason();
}

}  // namespace
}  // namespace ts::profiling
