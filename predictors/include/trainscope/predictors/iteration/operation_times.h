#pragma once
// Time of every operation's forward and backward pass on one GPU at one precision, without any
// measurement of the model: the kernel-scaling table's model-only form for the classes it has
// (soft(host floor, architecture factor x (roofline + fixed kernel time))), a roofline with the
// same sustained rates for the others, the compute part moved to the precision's tensor-core peak
// and the memory part to its element sizes, plus autocast's cast kernels. Each row is a closed
// form of the batch size, prepared once per (model, GPU, precision) and evaluated in nanoseconds.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/training_scenario.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"

namespace ts::predictors {

// One pass (forward or backward) of one operation, in milliseconds:
//   kernel(n) = max(tiled(n), memory(n)) + fixed
//   tiled(n)  = compute(n) + wave / 2              where compute(n) >= wave (the tiles fill the GPU)
//             = max(compute(n) + q / 2, splitWave) otherwise, q = max(compute(n), splitWave)
//   t(n)      = soft_p(floor, kernel(n)) + cast(n)
// With splitWave = wave (no split) tiled(n) = max(compute(n) + wave / 2, wave): at least one wave and
// half a wave of tail. A GEMM of few tiles and a long reduction is split (splitWave < wave).
// Two families of rows share this form. Isolated-operator rows (prepareOperationTimes: the
// kernel-scaling table's model-only prediction, what a profile's isolated layer measurements are
// compared with) have a host floor and no wave term. Iteration rows (prepareIterationTimes: GPU
// time in a training iteration, where the host's dispatch overlaps the GPU's work and is counted
// apart, in hostMs) have no floor and quantise GEMM/convolution work into waves of output tiles.
struct TimeRow {
    int op = -1;
    bool calibrated = false;  // its class is in the scaling table (false: plain roofline)
    double floorMs = 0;
    double softness = 4;
    BatchPoly computeMs;            // FLOPs / sustained rate at the precision (x architecture factor)
    BatchPoly memoryMs;             // bytes / achieved bandwidth (x architecture factor)
    double fixedMs = 0;             // per-kernel time that no GPU figure scales (x architecture factor)
    double waveMs = 0;              // one wave of output tiles per kernel, summed over the pass's kernels
    double splitWaveMs = 0;         // the same where the library splits a long reduction (<= waveMs)
    double hostMs = 0;              // iteration rows: the host's time to dispatch this pass
    BatchPoly castMs;               // autocast's cast kernels: bandwidth-bound, issued without a host floor
    double relError = 0;            // expected relative error of this row (prediction_errors.h)
    double architectureFactor = 1;  // already in computeMs, memoryMs and fixedMs
    double alpha = 1;               // the class's share of an origin's efficiency that transfers (cross path)
    double maxRatio = 10;           // the origin's efficiency ratio is clipped to [1 / maxRatio, maxRatio]
    bool link = false;              // a collective: memoryMs is its message over the interconnect, not DRAM

    double tiledMs(double n) const;   // the compute term with its waves
    double kernelMs(double n) const;  // without the host floor and casts
    double at(double n) const;
};

struct OperationTimes {
    std::string gpuId;
    TrainingPrecision precision = TrainingPrecision::Fp32;
    std::vector<TimeRow> forward;            // operations with work, graph order
    std::vector<TimeRow> backward;           // operations with a backward pass, graph order
    double calibratedShare(double n) const;  // share of the time in calibrated rows at batch n
};

// Why `gpu` cannot train at `p` (bf16 before Ampere, anything but fp32 without tensor cores, fp8
// before Ada/Hopper, a figure the database lacks); nullopt when it can.
std::optional<std::string> unsupportedReason(const GpuSpec& gpu, TrainingPrecision p);
// The precision a GEMM-like op's arithmetic runs at under p: p itself, except that PyTorch's fp32
// default runs convolutions on TF32 tensor cores where the GPU has them (cudnn.allow_tf32), and
// fp32-strict is plain FP32.
TrainingPrecision mathPrecisionOf(const AnalyzedOp& op, const GpuSpec& gpu, TrainingPrecision p);

// Tensor-core peak over the FP32 peak for GEMM-like work at `p` (1 for fp32); fp8 applies to
// linear layers only (Transformer Engine), other GEMMs run at bf16.
double precisionRateRatio(const GpuSpec& gpu, TrainingPrecision p, bool linearLayer);

// DRAM bytes an op's backward kernels move, as the backward rows count them: a GEMM-like op reads
// and writes about its forward traffic once per gradient kernel (data and weight gradient); the
// others write their input's gradient and read their output's gradient and what they saved.
BatchPoly backwardBytes(const AnalyzedOp& op, const OpBytes& b);
// The backward traffic of the whole-iteration (stream) model: backwardBytes, except that Add only
// reduces gradients of broadcast inputs, plus autograd's sums where the op's outputs fan out.
BatchPoly streamBackwardBytes(const AnalyzedOp& op, const OpBytes& b);

// Throws ModelError naming the GPU when it is unsupported at `p` (call unsupportedReason first), or
// when the model is a tensor- or expert-parallel shard and the database lacks the GPU's link figures.
// A collective (OpKind::Collective) is timed as an all-reduce of its message over the group's link
// (inNodeGroupLink, allReduceCost) in the pass that reduces, the other pass launching nothing;
// under sequence parallelism as half of it in each pass (an all-gather and a reduce-scatter); an
// all-to-all (allToAllCost) in both passes.
OperationTimes prepareOperationTimes(const ModelAnalysis& m, const GpuSpec& gpu, TrainingPrecision p,
                                     const KernelScalingTable& table = KernelScalingTable::builtin());

// The whole-iteration model's constants. Each is labelled where it is defined (stream_model.cpp)
// as measured, fitted (on what, validated how) or assumed; docs/prediction.md has the table.
struct StreamModel {
    // Achieved fraction of the dense tensor-core peak by large GEMMs, by architecture ("Hopper"),
    // for 16-bit (and fp8) and TF32 operands; an architecture without an entry gets the default.
    std::map<std::string, double> tensorCoreEfficiency16, tensorCoreEfficiencyTf32;
    double defaultTensorCoreEfficiency16 = 0, defaultTensorCoreEfficiencyTf32 = 0;
    // The tensor-core rate a training run sustains against the one short bursts reach (the GPU at its
    // power limit clocks lower than at boost), by architecture, where the efficiencies above were fitted
    // on bursts; 1 where absent. tensorCoreEfficiency includes it.
    std::map<std::string, double> sustainedTensorRate;
    double convEfficiency = 0;    // a convolution's achieved rate relative to a GEMM's
    double fp32Efficiency = 1;    // FP32 GEMMs on CUDA cores in an iteration against the scaling table's sustained rate
    double winogradSpeedup = 1;   // FP32 3x3 stride-1 convolutions (Winograd) against their FLOP rate
    // Winograd's input and output transforms against its products: a convolution of C_in -> C_out
    // channels runs at winogradSpeedup / (1 + k (1 / C_in + 1 / C_out)) (k = 0: at winogradSpeedup).
    double winogradTransformChannels = 0;
    double memoryEfficiency = 0;  // bandwidth-bound kernels in an iteration against large isolated ones
    double groupedConvEfficiency = 1;  // grouped convolutions' rate and bandwidth against dense ones
    // A depthwise convolution's FLOP rate against the FP32 CUDA-core rate: its kernels spend loads and
    // index arithmetic on every multiply-add (no GEMM to tile), its bytes move at the full bandwidth.
    double depthwiseConvEfficiency = 1;
    double hostForwardUs = 0;          // host time to dispatch one operator's forward (eager PyTorch)
    double hostBackwardUs = 0;         // host time of one autograd node in backward
    double hostCastUs = 0;             // one autocast cast (a separate operator)
    double kernelOverheadUs = 0;       // GPU time per kernel beyond its work: launch gap, ramp, tail
    double tensorTileRows = 128;       // output tile of tensor-core GEMM kernels (rows x up to 64 columns)
    double tensorTileColumns = 64;
    double simtTileRows = 128;  // output tile of FP32 (CUDA-core) GEMM kernels
    double simtTileColumns = 64;
    // GEMM libraries split reductions longer than this over several tiles (split-K, stream-K): one
    // wave covers at most this much of a GEMM's reduction.
    double splitReduction = 0;  // 0: no split
    double hostOptimizerPassUs = 0;  // host time of one foreach optimizer pass (Python + launches)
    // Relative spread (standard deviation) of one GPU's step time in a real run: synchronous data
    // parallelism waits for the slowest GPU at every step (slowestGpuWaitShare).
    double stepTimeSpread = 0;
    // A fused attention kernel's rate relative to a GEMM's at the same precision, by backend; the flash
    // kernel's by architecture where it differs (the memory-efficient one keeps its share of the flash one's).
    double flashAttentionEfficiency = 1;
    double efficientAttentionEfficiency = 1;
    std::map<std::string, double> flashAttentionEfficiencyByArchitecture;
    double tensorCoreEfficiency(const GpuSpec& gpu, TrainingPrecision p) const;  // sustained
    double burstTensorCoreEfficiency(const GpuSpec& gpu, TrainingPrecision p) const;
    double attentionEfficiency(AttentionBackend backend, const GpuSpec& gpu) const;  // 1 for the math backend
    static const StreamModel& shipped();
};

// Iteration rows of every operation on `gpu` at `p` (see TimeRow), with the activations channels-last
// or not (TrainingScenario::channelsLast). Throws ModelError like prepareOperationTimes.
OperationTimes prepareIterationTimes(const ModelAnalysis& m, const GpuSpec& gpu, TrainingPrecision p,
                                     const StreamModel& model = StreamModel::shipped(),
                                     const KernelScalingTable& table = KernelScalingTable::builtin(),
                                     bool channelsLast = false);

// The layout conversions around an op: cuDNN's around a tensor-core convolution on channels-first
// tensors (its nchwToNhwc and nhwcToNchw kernels), and PyTorch's around an instance norm on
// channels-last ones (AnalyzedOp::needsChannelsFirst): DRAM bytes (read + write) and kernels, forward
// and backward; nothing for other ops, FP32 (CUDA-core) convolutions and depthwise ones (PyTorch's own
// kernels).
struct LayoutTransposes {
    BatchPoly forwardBytes, backwardBytes;
    int forwardKernels = 0, backwardKernels = 0;
};
LayoutTransposes layoutTransposes(const AnalyzedOp& op, const OpBytes& b, TrainingPrecision math, bool channelsLast);

// One optimizer step in a training iteration: GPU time of its kernels (foreach: a pass per
// operation of the update over every tensor; for-loop: the same passes, a kernel per tensor each;
// fused: one pass) and the host's time to issue them, in ms. masterWeights: as
// TrainingScenario::masterWeights.
struct OptimizerStepTimes {
    double gpuMs = 0;
    double hostMs = 0;
};
OptimizerStepTimes optimizerStepTimes(const ModelAnalysis& m, const GpuSpec& gpu, Optimizer o, TrainingPrecision p,
                                      OptimizerImplementation implementation,
                                      const StreamModel& model = StreamModel::shipped(),
                                      const KernelScalingTable& table = KernelScalingTable::builtin(),
                                      bool masterWeights = true);

// One optimizer step, bandwidth-bound, in ms.
double optimizerStepMs(const ModelAnalysis& m, const GpuSpec& gpu, Optimizer o, TrainingPrecision p,
                       const KernelScalingTable& table = KernelScalingTable::builtin(),
                       OptimizerImplementation implementation = OptimizerImplementation::Foreach,
                       bool masterWeights = true);

}  // namespace ts::predictors
