#pragma once
// A PyTorch profiler trace predicted on another GPU (issue 24, deliverable 3): every GPU activity
// moved by TraceKernelMover (trace_kernels.h), the steps recomposed by replayTrace
// (trace_replay.h), host time kept as measured. And the check of the kernel moves on two traces of
// different GPUs: the operators both ran with the same input shapes, each GPU's kernel time
// predicted from the other's, errors by kernel class.
#include <array>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/trace/trace_change.h"
#include "trainscope/predictors/trace/trace_kernels.h"
#include "trainscope/predictors/trace/trace_replay.h"

namespace ts::predictors {

inline constexpr size_t kKernelClassCount = size_t(KernelClass::Other) + 1;
inline constexpr size_t kMoveBasisCount = size_t(MoveBasis::Kept) + 1;

struct TraceClassTime {
    KernelClass kind = KernelClass::Other;
    int64_t activities = 0;  // over the steps
    double measuredMs = 0;   // per step: sum of durations on the traced GPU
    double predictedMs = 0;  // per step, on the target
};

// Where a changed batch size or precision applied, as measured GPU time per step on the traced GPU.
struct TraceChangeShares {
    double changedMs = 0;    // kernels whose work changed (new shapes, types or arithmetic)
    double keptMs = 0;       // kernels of operators with shapes whose work did not change (no batch dimension)
    double unknownMs = 0;    // kernels without an operator or without recorded shapes: kept
    double removedMs = 0;    // casts and grad-scaler kernels the new precision does not run
    double mathMovedMs = 0;  // GEMM, convolution and attention kernels moved to autocast's arithmetic
    double mathKeptMs = 0;   // such kernels whose operator autocast does not list (or lacks shapes): kept
    double addedMs = 0;      // predicted: casts and unscale added (on the target)
};

struct TracePrediction {
    std::string source;
    std::string originGpu, targetGpu;  // database ids
    Fp32Math math = Fp32Math::AsRecorded;
    TraceChange change;                                             // as asked
    TrainingPrecision recordedPrecision = TrainingPrecision::Fp32;  // recordedTracePrecision
    TrainingPrecision precision = TrainingPrecision::Fp32;          // the moved job's
    int64_t recordedBatch = 0;                                      // found (0: not asked for a batch change)
    std::string batchHow;                                           // how it was found (TraceBatch::how)
    std::string precisionHow;                 // how the recorded precision was read (TracePrecision::how)
    std::optional<TraceChangeShares> shares;  // when the batch size or autocast changed
    TraceReplay replay;                       // on the target
    double originReplayMedianMs = 0;          // the replay with the measured durations: reproduces the measured step
    std::vector<TraceClassTime> classes;      // by measured time, largest first
    std::array<double, kMoveBasisCount> measuredMsByBasis{};  // per step: how the GPU time was moved
    double floorOriginUs = 0, floorTargetUs = 0;
    std::vector<std::string> notes;
};

// Why `trace` cannot be predicted onto another GPU (AMD, CPU-only, no GPU activity on a known
// GPU); empty when it can. `origin` is matchTraceGpu's entry (nullptr: not matched).
std::string tracePredictionProblem(const KinetoTrace& trace, const GpuSpec* origin);

// Throws ModelError(trace.source, problem) where tracePredictionProblem says one or the change
// cannot be made (analyseTraceChange), and ModelError(gpu id, ...) for a GPU without the figures
// the model needs or that cannot run the changed precision (bf16 before Ampere).
// `work`: analyseTraceWork(trace, change) shared between the targets of one trace (built when null).
TracePrediction predictTrace(const KinetoTrace& trace, const GpuSpec& origin, const GpuSpec& target,
                             const TraceChange& change = {}, std::shared_ptr<const TraceWork> work = nullptr);

// "as-recorded", "fp32", "tf32", "fp32-strict" (the training precisions' names for the FP32 modes).
std::optional<Fp32Math> parseFp32Math(const std::string& name);
const char* fp32MathName(Fp32Math m);

struct TracePairClass {
    KernelClass kind = KernelClass::Other;
    int pairs = 0;            // operators (name and input shapes) with kernels of this class on both
    double meanAbsError = 0;  // of the per-call kernel time, |predicted / measured - 1|
    double medianAbsError = 0;
    double measuredMs = 0;  // per call, summed over the pairs
    double predictedMs = 0;
};

struct TraceComparisonDirection {
    std::string originGpu, targetGpu;
    std::vector<TracePairClass> classes;  // by measured time, largest first
    TracePairClass all;                   // every pair of every class (kind unused)
};

struct TraceComparison {
    int originOperators = 0, targetOperators = 0;  // distinct (name, shapes) that launched GPU work
    int sharedOperators = 0;
    std::array<TraceComparisonDirection, 2> directions;  // a -> b and b -> a
    std::vector<std::string> notes;
};

// Both traces need recorded shapes and their GPUs. The target's arithmetic for each pair is the
// one its own kernels ran in (the jobs' settings may differ: TF32 on one, FP32 on the other).
TraceComparison compareTraces(const KinetoTrace& a, const GpuSpec& gpuA, const KinetoTrace& b, const GpuSpec& gpuB);

}  // namespace ts::predictors
