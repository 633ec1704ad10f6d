#pragma once
// A measured training profile: what `trainscope-cli profile` records on a GPU or a CPU and every
// later part of TrainScope (predictors, GUI, validate) reads. Plain C++ types only, so that the
// GUI and the predictors use it without LibTorch. Its file format is in profile_file.h and
// docs/profile-format.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_device.h"

namespace ts {

// A repeated timing: median and spread over the repeats kept after warm-up.
struct TimingStat {
    double medianMs = 0;
    double cv = 0;        // coefficient of variation (stddev / mean) of the kept repeats
    double minMs = 0;
    double maxMs = 0;
    int repeats = 0;      // kept repeats; 0 means not measured
    bool measured() const { return repeats > 0; }
};

// One GPU kernel recorded by CUPTI and attributed to a layer.
struct KernelRecord {
    std::string name;            // demangled where possible
    int grid[3] = {1, 1, 1};
    int block[3] = {1, 1, 1};
    int registersPerThread = 0;
    int staticSharedBytes = 0;
    int dynamicSharedBytes = 0;
    double durationUs = 0;       // time of all `launches` in one call of the layer (mean over the traced calls)
    int launches = 1;            // identical launches (same name, grid, block) per call, merged into one record
    bool tensorCore = false;     // kernel name marks tensor-core (HMMA/GMMA/IMMA) use; see docs
};

enum class Pass : uint8_t { Forward, Backward };

// One operation of the graph, measured in isolation (forward, and backward for its inputs and
// parameters that need a gradient).
struct LayerProfile {
    int op = -1;                       // operation index in the graph
    std::string name;                  // operation name, e.g. "layer1.0.conv1/Conv"
    std::string type;                  // ONNX operator type
    std::string modulePath;            // module path, "" for top level
    std::vector<int64_t> outputShape;  // first output at the profiled batch size
    TimingStat forward;
    TimingStat backward;               // not measured when nothing upstream needs a gradient
    bool hasBackward = false;
    double savedBytes = 0;             // activations this layer keeps alive for backward (measured)
    double outputBytes = 0;            // bytes of its outputs
    std::vector<KernelRecord> forwardKernels;
    std::vector<KernelRecord> backwardKernels;
    std::string note;                  // why something is missing, "" when complete
};

// Memory of one training iteration, by category, in bytes. Every category is measured: from the
// CUDA caching allocator's counters on the GPU, from TrainScope's counting allocator on the CPU.
struct MemoryProfile {
    double weights = 0;              // parameters and buffers
    double gradients = 0;
    double optimizerState = 0;
    double activations = 0;          // saved for backward at the end of the forward pass
    double inputs = 0;               // the batch (and labels)
    double workspace = 0;            // transient peak beyond the above during the iteration
    double peakAllocated = 0;        // allocator's peak of a real iteration
    double peakReserved = 0;         // GPU: bytes the caching allocator reserved at peak; CPU: = peakAllocated
    double cudaContext = 0;          // GPU: device memory used outside the allocator (context, cuBLAS, cuDNN); CPU: 0
    // weights + gradients + optimizerState + activations + inputs + workspace
    double accounted() const { return weights + gradients + optimizerState + activations + inputs + workspace; }
};

// A named share of the whole iteration, e.g. "layers forward", "optimizer step",
// "unattributed (launch gaps, synchronization, allocator)".
struct IterationPart {
    std::string name;
    double ms = 0;
};

// Everything measured at one batch size.
struct ProfileRun {
    int64_t batch = 0;
    bool fits = true;                  // false: ran out of memory (see error)
    std::string error;                 // why it did not complete, "" when it did
    bool complete = true;              // false when cancelled during this run
    TimingStat iteration;              // one whole training iteration (forward, loss, backward, step)
    std::vector<IterationPart> parts;  // the iteration broken down; parts sum to iteration.medianMs
    MemoryProfile memory;
    std::vector<LayerProfile> layers;  // graph order; operations that do no work may be absent
    double wallSeconds = 0;            // time spent profiling this batch size
    double samplesPerSecond() const { return iteration.medianMs > 0 ? batch * 1000.0 / iteration.medianMs : 0; }
};

struct SoftwareVersions {
    std::string trainscope;
    std::string libtorch;
    std::string cudaRuntime;  // "" on a CPU-only run or build
    std::string cudnn;
    std::string driver;       // CUDA driver version
    std::string cupti;
};

struct ProfileEnvironment {
    std::string device;        // "cpu", "cuda:0"
    std::string deviceName;    // "NVIDIA H100 80GB HBM3", or the CPU model
    std::optional<DeviceProperties> gpu;  // present on a GPU run
    int cpuThreads = 0;        // intra-op threads LibTorch used
    std::string host;
    std::string startedAt;     // ISO 8601, UTC
    SoftwareVersions software;
};

struct ProfileScenario {
    std::string model;         // the spec as given: "zoo:resnet50?image=64", a file path
    std::string modelName;
    int64_t seq = 0;           // sequence length, 0 when the model has none
    std::string precision;     // fp32 | tf32 | amp-fp16 | amp-bf16
    std::string optimizer;     // sgd | sgd-momentum | adam | adamw
    std::string loss;          // how the loss was formed, e.g. "cross-entropy on random labels"
    bool cudnnBenchmark = false;
};

struct Profile {
    static constexpr int kFormatVersion = 1;
    int formatVersion = kFormatVersion;
    ProfileEnvironment environment;
    ProfileScenario scenario;
    std::vector<ProfileRun> runs;      // one per batch size, ascending
    bool complete = true;              // false when cancelled (Ctrl-C) or stopped by an error
    std::string incompleteReason;
    bool kernelsRecorded = false;      // CUPTI recorded kernels
    std::string kernelsMissingReason;  // why not (CPU run, CUPTI refused: insufficient privileges, ...)
    std::vector<std::string> notes;    // anything else the reader should know
};

// One span of a Chrome/Perfetto trace of one iteration.
struct TraceSpan {
    std::string name;
    std::string category;  // "forward", "backward", "optimizer", "kernel", ...
    std::string track;     // row on the timeline: "host", "gpu stream 7", ...
    double startUs = 0;    // from the start of the iteration
    double durationUs = 0;
    std::string layer;     // operation name it belongs to, "" when none
};

struct Timeline {
    std::vector<TraceSpan> spans;
};

}  // namespace ts
