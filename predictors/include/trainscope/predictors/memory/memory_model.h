#pragma once
// GPU memory of one training iteration, by category, hand-checkable (docs/prediction.md):
//   weights        parameters + buffers at their dtype (fp32: 4 B per parameter)
//   gradients      one per parameter (4 B); DDP adds its bucket buffers (another 4 B)
//   optimizer      sgd 0, sgd-momentum 4 B, adam/adamw 8 B, adam8bit 2 B per trainable parameter
//                  (frozen parameters have no gradient and no state: see ModelStates for sharding)
//   cast copies    autocast's 16-bit (fp8: 8-bit) weight copies of the layers it casts
//   activations    autograd's saved tensors at each layer's element size, each counted once;
//                  checkpointing: what the policy keeps, its regions' inputs + the largest region
//   inputs         the batch
//   workspace      PyTorch's cuBLAS workspaces + the largest transient: one layer's backward
//                  gradient buffers, or the optimizer step's temporaries (foreach Adam: one
//                  parameter-sized tensor)
//   fragmentation  the caching allocator's rounding (512 B blocks, 20 MiB segments for 1-10 MiB
//                  tensors, 2 MiB rounding above) + one freed block of the largest transient
//   CUDA context   an estimate per architecture
// The peak follows backward (activations freed, gradients created layer by layer) and the
// optimizer step (its temporaries), with zero_grad(set_to_none=True), PyTorch's default.
#include <cstdint>
#include <functional>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/training_prediction.h"

namespace ts::predictors {

// Device memory used outside the caching allocator (CUDA context, kernel images of PyTorch,
// cuBLAS and cuDNN loaded lazily): an estimate by compute capability, see docs/prediction.md.
double cudaContextBytes(const GpuSpec& gpu);
// PyTorch's default cuBLAS workspaces: CUBLAS_WORKSPACE_CONFIG ":4096:2:16:8" (8320 KiB) before
// compute capability 9.0, ":4096:8" (32 MiB) from 9.0, plus the 1 MiB cuBLASLt workspace.
double cublasWorkspaceBytes(const GpuSpec& gpu);
// The memory a prediction may fill: the database's size in GiB (CUDA reports a little less).
double gpuCapacityBytes(const GpuSpec& gpu);

// What each GPU keeps of the model's states (bytes), after freezing and ZeRO sharding:
//   ZeRO 1 divides the optimizer states by the GPUs, 2 the gradients too, 3 the weights too; under
//   autocast ZeRO keeps 16-bit weights and gradients and an fp32 master copy with the optimizer
//   states (DeepSpeed's layout: 2 + 2 + K bytes per parameter, K = 12 for Adam).
struct ModelStates {
    double weights = 0;          // parameters at their stored size (stage 3: a shard + gatheredWeights)
    double gatheredWeights = 0;  // stage 3: the root unit + two blocks (current, prefetched) gathered
    double gradients = 0;        // trainable parameters' gradients kept on the GPU
    double gradientScale = 0;    // gradients / the trainable parameters' bytes
    double optimizerState = 0;
    double ddpBuckets = 0;       // DDP's bucket copies of the gradients (ZeRO reduces in place)
    double stepTemporaries = 0;  // the optimizer step's temporaries
    bool castCopies = false;     // autocast's cached 16-bit copies of the trainable weights
};
// masterWeights (bf16-params only): false trains the bf16 parameters as they are, without an fp32
// copy, with bf16 optimizer states (TrainingScenario::masterWeights).
ModelStates modelStates(const ModelAnalysis& m, TrainingPrecision p, Optimizer o, int gpus, int zeroStage,
                        OptimizerImplementation implementation = OptimizerImplementation::Foreach,
                        bool masterWeights = true);

// Which end of each estimated category's range to take.
enum class MemoryBound { Low, Value, High };

// The largest n in [1, limit] with fits(n), for a fits() that holds up to some n and not beyond
// (0 when fits(1) fails): doubling, then bisection.
int64_t largestFitting(const std::function<bool(int64_t)>& fits, int64_t limit);

class MemoryModel {
public:
    // gradientsPersist: every gradient is allocated through the forward and backward, as with
    // gradient accumulation (the micro-batches after the first add to them) or with zero_grad that
    // zeroes rather than frees them (PyTorch before 2.0); otherwise backward allocates them as it goes.
    // masterWeights: as modelStates.
    MemoryModel(const ModelAnalysis& m, TrainingPrecision p, Optimizer o, Checkpointing checkpointing, int dataParallelGpus,
                int zeroStage = 0, OptimizerImplementation implementation = OptimizerImplementation::Foreach,
                bool gradientsPersist = false, bool masterWeights = true);

    // Every category at per-GPU batch n on `gpu`.
    MemoryBreakdown at(double n, const GpuSpec& gpu, MemoryBound bound = MemoryBound::Value) const;
    // Peak on the device (reserved + context) at batch n: what has to fit. It is the sum of the
    // allocator's part (peak allocated + fragmentation, the same on every GPU) and the GPU's part
    // (context, cuBLAS workspaces), so that a sweep over GPUs computes the first once.
    double deviceBytes(double n, const GpuSpec& gpu, MemoryBound bound = MemoryBound::Value) const;
    double allocatorBytes(double n, MemoryBound bound = MemoryBound::Value) const;
    // allocatorBytes at Value, Low and High in one pass.
    void allocatorBytesAll(double n, double out[3]) const;
    static double gpuBytes(const GpuSpec& gpu, MemoryBound bound = MemoryBound::Value);
    // The largest batch whose deviceBytes fits `capacity` (0 when batch 1 does not), at most kMaxBatch.
    int64_t maxBatch(double capacity, const GpuSpec& gpu, MemoryBound bound = MemoryBound::Value) const;

    static constexpr int64_t kMaxBatch = int64_t(1) << 24;

private:
    struct Scale {
        double activations = 1, transient = 1, fragmentation = 1, context = 1;
    };
    static Scale scaleFor(MemoryBound b);
    // Allocator peak and fragmentation without the GPU-specific constants, for up to 3 scales at
    // once; `parts` gets the categories at scales[0].
    void allocatorPeaks(double n, const Scale* scales, int count, double* peak, double* fragmentation,
                        MemoryBreakdown* parts) const;

    const ModelAnalysis& m_;
    TrainingPrecision precision_;
    Optimizer optimizer_;
    Checkpointing checkpointing_;
    int gpus_;
    bool gradientsPersist_ = false;
    ModelStates states_;
    std::vector<BatchPoly> savedByOp_;   // saved tensors freed after each op's backward
    std::vector<BatchPoly> transient_;   // gradient buffers alive during each op's backward
    std::vector<double> gradientsFrom_;  // gradients of ops >= i
    double parameterWaste_ = 0;
};

}  // namespace ts::predictors
