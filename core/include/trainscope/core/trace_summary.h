#pragma once
// What a Kineto trace says about its training job, measured from its events (no model involved):
// per step the GPU's busy and idle time, exposed communication and host-bound stretches; the
// operators, kernels and kernel classes that take the GPU's time. Definitions: docs/traces.md.
#include <string>
#include <vector>

#include "trainscope/core/kineto_trace.h"

namespace ts {

struct TraceStepSummary {
    int64_t number = 0;
    double cpuMs = 0;                   // the ProfilerStep span on the host
    double gpuWindowMs = 0;             // from the first to the last moment the step or its GPU work is running
    double busyMs = 0;                  // union of the step's GPU activities (every stream) on the traced GPU
    double idleMs = 0;                  // window - busy
    double kernelMs = 0;                // sum of the step's activity durations (streams overlap: may exceed busy)
    double communicationMs = 0;         // union of NCCL kernels
    double exposedCommunicationMs = 0;  // NCCL time when no other kernel runs
    double hostBoundMs = 0;             // idle stretches that ended only when the host launched the next work
    int kernels = 0;
};

// An idle stretch of the GPU that ended when the host launched the next activity: the GPU waited
// for the host (Python, dispatch, a synchronisation).
struct HostBoundStretch {
    int64_t step = 0;
    double startMs = 0;  // from the step's start
    double durationMs = 0;
    std::string nextOperator;  // the operator whose launch ended it, "" when unknown
};

struct TraceOperatorTotal {
    std::string name;
    int64_t calls = 0;  // operator calls that launched GPU work (all calls without a GPU)
    double gpuMs = 0;   // sum of their GPU activities
    double cpuMs = 0;   // inclusive host time of those calls
    int64_t kernels = 0;
};

struct TraceKernelTotal {
    std::string name;
    KernelClass kind = KernelClass::Other;
    int64_t calls = 0;
    double gpuMs = 0;
    int grid[3] = {0, 0, 0};  // of its first call
    int block[3] = {0, 0, 0};
    int registersPerThread = 0;
    int sharedMemoryBytes = 0;
    double occupancyPercent = -1;
};

struct TraceClassTotal {
    KernelClass kind = KernelClass::Other;
    int64_t calls = 0;
    double gpuMs = 0;
};

struct TraceSummary {
    std::string source;
    std::string gpuName;   // from deviceProperties, "" when none
    std::string gpuId;     // matched database entry, "" when none
    std::string gpuMatch;  // how it was matched, or why not
    bool rocm = false;
    bool recordShapes = false;
    bool withStack = false;
    int64_t events = 0;
    int64_t operators = 0;
    int64_t gpuActivities = 0;
    std::vector<TraceStepSummary> steps;  // one per ProfilerStep; one pseudo-step (-1) without them
    double medianStepMs = 0;
    std::vector<TraceOperatorTotal> topOperators;  // by GPU time, then CPU time; all steps
    std::vector<TraceKernelTotal> topKernels;      // by GPU time
    std::vector<TraceClassTotal> classes;          // by GPU time
    std::vector<HostBoundStretch> hostBound;       // the longest, longest first
    std::vector<std::string> notes;
};

class GpuDatabase;
// `top` bounds the operator and kernel lists and the stretches listed (the totals cover everything).
TraceSummary summarizeTrace(const KinetoTrace& trace, const GpuDatabase& db, size_t top = 15);

}  // namespace ts
