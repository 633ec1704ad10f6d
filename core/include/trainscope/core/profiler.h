#pragma once
// Training execution and measurement of a model graph with LibTorch, behind plain C++ types
// (LibTorch's headers stay in core/src/torch/).
//
// The same binary runs on "cuda[:N]" where a GPU exists and on "cpu" everywhere.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/dtype.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profile.h"
#include "trainscope/core/training_vocabulary.h"

namespace ts {

// A problem while executing or measuring a model (an operator the executor cannot run, an
// attribute it does not support, a tensor LibTorch refuses). what() names the operation.
class ExecutionError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ProfileProgress {
    std::string stage;  // "batch 8: layers", "batch 8: iteration", ...
    int done = 0;
    int total = 0;
};

struct ProfileOptions {
    std::string device = "cpu";    // "cpu", "cuda", "cuda:N"
    std::vector<int64_t> batches;  // explicit batch sizes; empty with autoBatch: chosen
    bool autoBatch = false;        // --batch auto: grow until out of memory (or the cap)
    int64_t autoBatchCap = 0;      // largest batch auto may try; 0: 4096 on a GPU, 8 on a CPU
    int64_t seq = 0;               // 0: the model's default
    // The profiler runs every precision but fp8 and every optimizer but adam8bit (profileModel
    // refuses those with ExecutionError).
    TrainingPrecision precision = TrainingPrecision::Fp32;
    Optimizer optimizer = Optimizer::Sgd;
    bool perLayer = true;       // measure every layer in isolation
    bool recordKernels = true;  // CUPTI on a GPU
    int warmup = 3;             // iterations (and per-layer calls) before timing
    int minRepeats = 5;
    int maxRepeats = 50;
    double targetCv = 0.02;                 // stop repeating once the spread is below this
    double maxSecondsPerMeasurement = 2.0;  // and never spend longer than this on one figure
    uint64_t seed = 0;                      // parameters, inputs and labels are random from this
    std::function<void(const ProfileProgress&)> progress;
    // Called after each batch size with the profile so far (runs ascending), so that a caller can
    // show measured figures as they arrive. Called on the profiling thread.
    std::function<void(const Profile&)> runFinished;
    const std::atomic<bool>* cancelled = nullptr;  // set (e.g. by Ctrl-C): stop, return what was measured
    // Written into the profile: the model as the user named it, and the GPU's properties as
    // ts::kernels::queryDevices() reports them (the caller links kernels/, core does not).
    std::string modelSpec;
    std::optional<DeviceProperties> deviceProperties;
};

struct ProfileResult {
    Profile profile;
    Timeline timeline;  // one traced iteration of the last batch size that fitted
};

// Profiles `g` for training. Throws ExecutionError for a model it cannot run, DeviceError for an
// unusable device; running out of memory at one batch size is recorded in that run (fits=false)
// and does not throw. When cancelled, returns what was measured with profile.complete = false.
ProfileResult profileModel(const Graph& g, const ProfileOptions& options);

// Why the profiler cannot run this precision and optimizer (fp8, adam8bit: predicted only);
// nullopt when it can. profileModel throws ExecutionError with this text.
std::optional<std::string> unprofilableReason(TrainingPrecision p, Optimizer o);

// Whether this build can execute models (LibTorch linked).
bool executionSupported();

// A host tensor for feeding and reading the executor in tests and tools.
struct HostTensor {
    DType dtype = DType::Float32;
    std::vector<int64_t> shape;
    std::vector<double> values;  // row-major, converted to/from the dtype
};

// Runs the forward pass of `g` once on the CPU in fp32 at batch size `batch` and returns the
// graph outputs (in g.outputs order). Inputs named in `feeds` (by value name) take the given
// contents; other inputs, parameters and constants are generated as for profiling.
std::vector<HostTensor> runForward(const Graph& g, const std::map<std::string, HostTensor>& feeds, int64_t batch = 1,
                                   int64_t seq = 0);

}  // namespace ts
