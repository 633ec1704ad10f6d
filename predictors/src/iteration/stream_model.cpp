// The whole-iteration model's constants (StreamModel::shipped), each labelled with its provenance, and
// the rates they give by architecture and precision; operation_times.cpp turns them into time rows.
#include <map>
#include <string>

#include "trainscope/predictors/iteration/operation_times.h"

namespace ts::predictors {

const StreamModel& StreamModel::shipped() {
    static const StreamModel m = [] {
        StreamModel s;
        // Fitted on cuBLAS GEMM rates measured on H100 and B200 (XLA's tables, 375 shapes per GPU and
        // operand type, 256-4096 per dimension) with this file's GEMM form (waves of 128 x 64 tiles,
        // 5 us per kernel): the rate that best explains each table (docs/prediction.md, "GEMM rates").
        // Other architectures get the mean of the measured ones.
        s.tensorCoreEfficiency16 = {{"Hopper", 0.86}, {"Blackwell", 0.68}};
        s.tensorCoreEfficiencyTf32 = {{"Hopper", 0.68}, {"Blackwell", 0.68}};
        s.defaultTensorCoreEfficiency16 = 0.77;
        s.defaultTensorCoreEfficiencyTf32 = 0.68;
        // Published, not fitted here: the rates above are short bursts' (XLA's H100 bf16 table peaks at
        // 805 TFLOP/s, the H100's boost-clock "maximum achievable matmul FLOPS"), a training run holds
        // its GPU at the power limit. Measured with mamf-finder.py (Stas Bekman, ml-engineering,
        // compute/accelerator/benchmarks/README.md, "alone vs all-8 concurrent", five runs of one GPU):
        // an H200 sustains 702.9 bf16 TFLOP/s at 1,440-1,465 MHz against 828.0 in bursts (0.849), a B200
        // 1,455.7 against 1,732.6 (0.840). The other architectures' efficiency is the default, which the
        // whole-run fit on V100 and A100 runs was made with: no burst to correct.
        s.sustainedTensorRate = {{"Hopper", 0.849}, {"Blackwell", 0.840}};
        // Fitted on NVIDIA's published training throughput (validate-published --fit: 263 rows of
        // 13 model families on V100 and A100; coordinate descent, loss mean |ln(predicted / published)|):
        // convolutions run at 0.90 of a GEMM's rate, bandwidth-bound kernels in an iteration reach
        // 0.90 of the bandwidth large isolated ones do, grouped and depthwise convolutions (cuDNN's
        // kernels for them: ResNeXt, EfficientNet; depthwise ones apart since step 24, below) 0.25 of a
        // dense convolution's rate and bandwidth,
        // FP32 GEMMs on CUDA cores 1.25 of the scaling table's sustained rate (0.94 of the FP32 peak;
        // the table's rate was fitted on isolated operators, host floors included), FP32 3x3 stride-1
        // convolutions 2.4 times their FLOP rate (cuDNN's Winograd kernels: F(4x4, 3x3) needs 4 times
        // fewer multiplications, less its transforms; fitted at step 11 and held until step 23, which
        // measured it by channel count: below), and one GPU's
        // step time spreads by 4% (standard deviation), which synchronous data parallelism pays as
        // the wait for the slowest GPU. Leave-one-model-out mean error 9.7%, leave one GPU out 11.2%
        // (docs/prediction.md, step 14); the constants chosen with each model family or GPU
        // architecture left out stay within 0.85-1.0, 0.85-0.90, 0.20-1.0 (0.25 but with the
        // V100 rows alone, which fit 1.0 or, without them, 0.20), 1.25 and 0.02-0.06.
        s.convEfficiency = 0.90;
        s.memoryEfficiency = 0.90;
        s.groupedConvEfficiency = 0.25;
        // Fitted on the same rows with every other constant held (step 24): a depthwise convolution's
        // FLOPs at 0.05 of the FP32 CUDA-core rate above (0.05 x 0.94 of the peak: 0.9 TFLOP/s on an A100), its bytes
        // at the full bandwidth, whatever the precision: no tensor core takes a convolution without a reduction over
        // channels, and PyTorch's channels-first kernels spend a load and index arithmetic on every multiply-add of the
        // k x k taps (their weight gradient reads the input once per tap). EfficientNet's 28 rows are the only
        // depthwise ones: left out with B0 0.07, with B4 0.05; without the V100 rows or the A100 rows 0.05. Before it,
        // depthwise convolutions ran at groupedConvEfficiency of a tensor core's rate and bandwidth, and EfficientNet's
        // V100 FP32 rows were 24-31% slow where its A100 TF32 rows were within 9%.
        s.depthwiseConvEfficiency = 0.05;
        s.fp32Efficiency = 1.25;
        s.winogradSpeedup = 2.8;
        // Measured, not fitted on the published rows (step 23): the stored V100 ResNet-50 trace (FP32,
        // batch 32) runs its 3x3 stride-1 convolutions of 64 and 512 channels 1.74 and 2.6 times faster
        // per FLOP than the model's other convolutions; S / (1 + k (1 / C_in + 1 / C_out)) through both
        // gives S = 2.8 and k = 19.5 (128 and 256 channels then within 4%). Refitted on the published rows
        // with k = 19.5, the speedup's optimum is 2.8 too (it was 2.4 with every channel count alike).
        s.winogradTransformChannels = 19.5;
        s.stepTimeSpread = 0.04;
        // Measured on real training hosts (scripts/measure_host_dispatch.py on the stored PyTorch
        // profiler traces, the profiler's own cost per event removed): a forward operator that is not
        // a view takes the host 30 us (V100 ResNet DDP job, its one host-bound forward) to 67-71 us
        // (A100 recommendation job); backward operators 64-190 us with DDP's per-parameter hooks and
        // compiled regions in them. Qwen's host-bound 1.8B LoRA steps (validate_lora_runs.py) need
        // about 26 us at this graph's granularity. Taken at the low end: 27 us forward, 30 us
        // backward; casts 8 us (assumed: dispatched inside their operator, no Python).
        s.hostForwardUs = 27;
        s.hostBackwardUs = 30;
        s.hostCastUs = 8;
        // Fitted with the tensor-core rates above (the same tables): back-to-back kernels on one
        // stream are a few microseconds apart, and a kernel's first blocks start on an idle GPU.
        s.kernelOverheadUs = 5;
        // Fitted on the same tables (H100 and B200, bf16 and TF32; mean |ln| over the four 0.136
        // unsplit, 0.141, 0.134, 0.132, 0.127 splitting beyond 1024, 1536, 2048, 3072; 4096 is their
        // longest reduction): a GEMM of few output tiles and a long reduction is not one tile's whole
        // reduction long (LoRA's rank-64 products, a small batch's layers).
        s.splitReduction = 3072;
        // Assumed: foreach optimizers issue one Python call per pass and a launch per ~64 tensors.
        s.hostOptimizerPassUs = 40;
        // Published, not fitted here: FlashAttention-2 (Dao 2023, arXiv:2307.08691, its A100 forward +
        // backward benchmarks, head dimension 64-128, sequences of 512-16k) reaches 50-73% of the
        // A100's 16-bit peak where cuBLAS GEMMs reach about 75-80%: 0.75 of a GEMM's rate. The
        // memory-efficient (xFormers/CUTLASS) kernels run at about 60% of FlashAttention-2's speed in
        // the same benchmarks: 0.45. The math backend's products are ordinary GEMMs (1.0).
        s.flashAttentionEfficiency = 0.75;
        s.efficientAttentionEfficiency = 0.45;
        // Published, not fitted here: PyTorch's fused attention kernels (FlashAttention-2's and the
        // CUTLASS memory-efficient ones, which sdpa picks before cuDNN's) are Ampere's: on Hopper they
        // do not use its warpgroup tensor-core instructions, and FlashAttention-2 reaches 35% of an
        // H100's dense 16-bit peak (Shah et al. 2024, "FlashAttention-3", arXiv:2407.08608, abstract),
        // against 0.86 for cuBLAS's GEMMs in bursts (above): 0.35 / 0.86 of a GEMM's rate for the flash
        // kernel there, the memory-efficient one at the same 60% of it. Blackwell: not known, the
        // default stands.
        s.flashAttentionEfficiencyByArchitecture = {{"Hopper", 0.35 / 0.86}};
        return s;
    }();
    return m;
}

double StreamModel::attentionEfficiency(AttentionBackend backend, const GpuSpec& gpu) const {
    const auto it = flashAttentionEfficiencyByArchitecture.find(gpu.architecture);
    const double flash = it == flashAttentionEfficiencyByArchitecture.end() ? flashAttentionEfficiency : it->second;
    switch (backend) {
        case AttentionBackend::Flash:
            return flash;
        case AttentionBackend::Efficient:  // the same share of the flash kernel's rate on every architecture
            return flashAttentionEfficiency > 0 ? flash * efficientAttentionEfficiency / flashAttentionEfficiency
                                                : efficientAttentionEfficiency;
        case AttentionBackend::Math:
            break;
    }
    return 1;
}

double StreamModel::burstTensorCoreEfficiency(const GpuSpec& gpu, TrainingPrecision p) const {
    const bool tf32 = p == TrainingPrecision::Tf32;
    const auto& byArchitecture = tf32 ? tensorCoreEfficiencyTf32 : tensorCoreEfficiency16;
    const auto it = byArchitecture.find(gpu.architecture);
    if (it != byArchitecture.end()) return it->second;
    return tf32 ? defaultTensorCoreEfficiencyTf32 : defaultTensorCoreEfficiency16;
}

double StreamModel::tensorCoreEfficiency(const GpuSpec& gpu, TrainingPrecision p) const {
    const auto sustained = sustainedTensorRate.find(gpu.architecture);
    return burstTensorCoreEfficiency(gpu, p) * (sustained == sustainedTensorRate.end() ? 1.0 : sustained->second);
}

}  // namespace ts::predictors
