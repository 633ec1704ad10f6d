#pragma once
// A PyTorch profiler (Kineto) trace: the Chrome-trace JSON that torch.profiler writes
// (`export_chrome_trace`, tensorboard_trace_handler), plain or gzip. Read in one streaming pass
// (nlohmann-json's SAX interface over an inflating stream), keeping only compact records of the
// events TrainScope uses, so memory grows with the number of kept events, never with the text.
// What is read and what is not: docs/traces.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_device.h"
#include "trainscope/core/profile.h"

namespace ts {

class GpuDatabase;
struct GpuSpec;

// What a GPU-side activity is, from its category and, for kernels, its name.
enum class KernelClass : uint8_t {
    Gemm,
    Conv,
    Attention,
    Elementwise,
    Reduction,
    Normalization,
    Embedding,
    Optimizer,
    Communication,
    Memcpy,
    Memset,
    Other
};
const char* kernelClassName(KernelClass c);
KernelClass classifyKernelName(const std::string& name);

// One CPU operator (`cat: cpu_op`) of the trace.
struct TraceOperator {
    int32_t name = -1;         // index into KinetoTrace::strings
    int32_t inputShapes = -1;  // "Input Dims" as compact text "[[4,3,16,16],[8,3,3,3]]", -1 when not recorded
    int32_t inputTypes = -1;   // "Input type" as text, -1 when not recorded
    int32_t scope = -1;        // enclosing record_function labels and nn.Module names, "a/b/c"; -1 when none
    int32_t thread = 0;        // index into KinetoTrace::threads
    int32_t step = -1;         // index into KinetoTrace::steps, -1 outside every step
    int32_t depth = 0;         // 0 for a top-level operator of its thread
    double startUs = 0;        // from KinetoTrace::originUs
    double durationUs = 0;
};

// One GPU activity: a kernel, a memory copy or a memory set.
struct TraceKernel {
    int32_t name = -1;
    KernelClass kind = KernelClass::Other;
    int32_t device = 0;
    int32_t stream = 0;
    int32_t op = -1;    // index into KinetoTrace::operators (the innermost one that launched it), -1 when unknown
    int32_t step = -1;  // step of its launch
    int64_t correlation = -1;  // -1 when the trace gives none
    double startUs = 0;
    double durationUs = 0;
    double launchUs = -1;  // start of the runtime call that launched it, -1 when unknown
    // Launch configuration (kernels only; zero where the trace does not record it).
    int32_t grid[3] = {0, 0, 0};
    int32_t block[3] = {0, 0, 0};
    int32_t registersPerThread = 0;
    int32_t sharedMemoryBytes = 0;
    float blocksPerSm = -1;  // as Kineto estimates them; -1 when absent
    float warpsPerSm = -1;
    float occupancyPercent = -1;  // "est. achieved occupancy %"
    // Copies and sets: bytes moved; collectives: elements per rank.
    double bytes = 0;
    int32_t collective = -1;  // index into KinetoTrace::collectives for an NCCL kernel
};

// An NCCL collective's arguments, as Kineto records them on the kernel.
struct TraceCollective {
    std::string name;  // "allreduce", from "Collective name" (or the kernel's name)
    int64_t inElements = 0;
    int64_t outElements = 0;
    int groupSize = 0;
    std::string dtype;
};

// One ProfilerStep#N: an iteration as the training loop marked it.
struct TraceStep {
    int64_t number = 0;  // N of ProfilerStep#N
    double startUs = 0;  // CPU span of the step
    double durationUs = 0;
};

// A CUDA runtime or driver call long enough that the host may have waited in it for the GPU
// (a synchronisation, a blocking copy, a launch into a full queue): what lets a prediction move
// the host's timeline when the GPU gets faster or slower (predictors/trace/trace_replay.h).
struct TraceHostCall {
    int32_t thread = 0;
    double startUs = 0;
    double durationUs = 0;
};
inline constexpr double kHostCallMinUs = 20;  // shorter calls cannot hide a wait worth modelling

struct TraceThread {
    std::string pid;
    std::string tid;
};

struct KinetoTrace {
    std::string source;  // the path, for messages
    int schemaVersion = 0;
    double originUs = 0;               // the first timestamp read; every time is relative to it
    std::vector<std::string> strings;  // interned names, shapes and scopes
    std::vector<TraceThread> threads;
    std::vector<TraceOperator> operators;  // in start order per thread
    std::vector<TraceKernel> kernels;      // GPU activities in start order
    std::vector<TraceCollective> collectives;
    std::vector<TraceStep> steps;           // in start order
    std::vector<TraceHostCall> hostCalls;   // runtime calls of kHostCallMinUs or more, in start order
    std::vector<DeviceProperties> devices;  // deviceProperties
    int gpuDevice = -1;                     // device index of the kernels (the busiest), -1 without any
    bool recordShapes = false;              // operators carry Input Dims
    bool withStack = false;                 // python_function events present
    bool rocm = false;                      // HIP runtime calls or a non-NVIDIA device: AMD
    int64_t eventsRead = 0;                 // every trace event, kept or not
    int64_t unjoinedKernels = 0;            // kernels whose launch (correlation) was not found
    std::vector<std::string> notes;         // what the trace cannot give, in sentences

    const std::string& str(int32_t i) const;  // "" for -1
    const DeviceProperties* gpu() const;      // the properties of gpuDevice, if recorded
};

// Hard limits against hostile and enormous files.
namespace tracelimits {
inline constexpr int64_t kMaxEvents = 20'000'000;  // operator, launch and GPU events kept (50-120 bytes each)
inline constexpr int64_t kMaxDecompressedBytes = int64_t(16) << 30;
inline constexpr size_t kMaxStringBytes = 1 << 20;  // one name or shape text
}  // namespace tracelimits

// Whether `path` is a Kineto trace: a .json or .json.gz (or .pt.trace.json[.gz]) whose opening
// holds "traceEvents" or "schemaVersion". False for a missing or unreadable file.
bool isKinetoTraceFile(const std::string& path);

// Reads, joins (launch -> kernel by correlation id; kernel -> operator by nesting on the launching
// thread) and assigns steps. Throws ModelError(path, problem) for anything malformed, truncated,
// hostile or too large.
KinetoTrace readKinetoTrace(const std::string& path);
// The same from text already in memory (tests, fuzzing); `source` names it in errors.
KinetoTrace readKinetoTraceText(const std::string& text, const std::string& source);

// The database entry for the trace's GPU: by its device name, else by compute capability, SMs and
// memory (the PG509-200 is an A100 the database lists under another name). `how` says which.
const GpuSpec* matchTraceGpu(const KinetoTrace& trace, const GpuDatabase& db, std::string* how = nullptr);

// Why report and the explorer cannot take a trace yet (predict can): one sentence. Read the trace first,
// so that a damaged one is refused for what is wrong with it.
std::string tracePredictionUnavailable(const KinetoTrace& trace);

// The trace as TrainScope's measured-profile types, as far as they fit: the environment (device,
// GPU properties), one run whose iteration is the median step and whose parts are GPU busy and
// idle time, and one LayerProfile per distinct operator (name + input shapes) with its kernels
// and their launch configuration. Steps, streams and collectives do not fit a Profile: they stay
// in KinetoTrace (and the summary of trace_summary.h).
Profile profileFromKinetoTrace(const KinetoTrace& trace);

}  // namespace ts
