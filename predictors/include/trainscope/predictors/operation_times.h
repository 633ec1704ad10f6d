#pragma once
// Time of every operation's forward and backward pass on one GPU at one precision, without any
// measurement of the model: the kernel-scaling table's model-only form for the classes it has
// (soft(host floor, architecture factor x (roofline + fixed kernel time))), a roofline with the
// same sustained rates for the others, the compute part moved to the precision's tensor-core peak
// and the memory part to its element sizes, plus autocast's cast kernels. Each row is a closed
// form of the batch size, prepared once per (model, GPU, precision) and evaluated in nanoseconds.
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/kernel_scaling_table.h"
#include "trainscope/predictors/model_analysis.h"
#include "trainscope/predictors/training_scenario.h"

namespace ts::predictors {

//   t(n) = soft_p(floor, max(compute(n), memory(n)) + fixed) + cast(n)      (milliseconds)
struct TimeRow {
    int op = -1;
    bool calibrated = false;  // its class is in the scaling table (false: plain roofline)
    double floorMs = 0;
    double softness = 4;
    BatchPoly computeMs;            // FLOPs / sustained rate at the precision (x architecture factor)
    BatchPoly memoryMs;             // bytes / achieved bandwidth (x architecture factor)
    double fixedMs = 0;             // per-kernel time that no GPU figure scales (x architecture factor)
    BatchPoly castMs;               // autocast's cast kernels: bandwidth-bound, issued without a host floor
    double relError = 0;            // expected relative error of this row (prediction_errors.h)
    double architectureFactor = 1;  // already in computeMs, memoryMs and fixedMs
    double alpha = 1;               // the class's share of an origin's efficiency that transfers (cross path)
    double maxRatio = 10;           // the origin's efficiency ratio is clipped to [1 / maxRatio, maxRatio]

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

// Tensor-core peak over the FP32 peak for GEMM-like work at `p` (1 for fp32); fp8 applies to
// linear layers only (Transformer Engine), other GEMMs run at bf16.
double precisionRateRatio(const GpuSpec& gpu, TrainingPrecision p, bool linearLayer);

// DRAM bytes an op's backward kernels move, as the backward rows count them: a GEMM-like op reads
// and writes about its forward traffic once per gradient kernel (data and weight gradient); the
// others write their input's gradient and read their output's gradient and what they saved.
BatchPoly backwardBytes(const AnalyzedOp& op, const OpBytes& b);

// Throws ModelError naming the GPU when it is unsupported at `p` (call unsupportedReason first).
OperationTimes prepareOperationTimes(const ModelAnalysis& m, const GpuSpec& gpu, TrainingPrecision p,
                                     const KernelScalingTable& table = KernelScalingTable::builtin());

// One optimizer step (PyTorch's default foreach kernels), bandwidth-bound, in ms.
double optimizerStepMs(const ModelAnalysis& m, const GpuSpec& gpu, Optimizer o, TrainingPrecision p,
                       const KernelScalingTable& table = KernelScalingTable::builtin());

}  // namespace ts::predictors
