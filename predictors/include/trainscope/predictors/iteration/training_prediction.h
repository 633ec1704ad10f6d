#pragma once
// The answer for one GPU: time, throughput, per-layer times, memory by category, the largest batch
// that fits, data-parallel scaling, and where the figures came from.
#include <string>
#include <vector>

#include "trainscope/predictors/iteration/training_scenario.h"

namespace ts::predictors {

enum class PredictionSource {
    MeasuredProfile,     // per-layer times fitted on a measured profile (this or another GPU)
    ShippedCalibration,  // the kernel-scaling table fitted on public measurements (resources/)
    Analytic,            // roofline with datasheet figures only
};
const char* predictionSourceName(PredictionSource s);  // "measured profile", "shipped calibration", "analytic"

struct LayerTime {
    int op = -1;          // operation index in the graph
    std::string name;     // operation name
    std::string opClass;  // the scaling class it was timed as ("linear", "conv", ...; "" uncovered)
    Interval forwardMs;
    Interval backwardMs;  // 0 when nothing upstream needs a gradient
    // The host's time to dispatch the pass (eager PyTorch; docs/prediction.md, the stream model), which
    // runs ahead of the GPU; 0 where the layer times already hold it (a measured profile's).
    double hostForwardMs = 0;
    double hostBackwardMs = 0;
    PredictionSource source = PredictionSource::Analytic;
};

// What a per-layer prediction adds for drawing its iteration on a timeline: the parts of the
// iteration model (iteration_model.h) that are not a layer's.
struct IterationLayout {
    double optimizerHostMs = 0;         // the host's time to issue the optimizer step
    bool optimizerWaitsForGpu = false;  // the host waits for the GPU first (amp-fp16's GradScaler)
    // Data parallelism: each gradient bucket's collective (all-reduce, or ZeRO's reduce-scatter) on
    // the communication stream, ready once the backward of every op from firstOp on is done.
    struct Bucket {
        int firstOp = 0;
        double ms = 0;
    };
    std::vector<Bucket> buckets;  // in the order backward readies them
};

// Bytes on the GPU, by category (docs/prediction.md gives every rule).
struct MemoryBreakdown {
    double weights = 0;           // parameters and buffers, at their stored dtype
    double castWeightCopies = 0;  // autocast's 16-bit (fp8: 8-bit) copies of GEMM/conv weights
    double gradients = 0;         // one per parameter (two under DDP: its bucket buffers)
    double optimizerState = 0;
    double activations = 0;    // saved for backward (checkpointing: boundaries + one segment)
    double inputs = 0;         // the batch
    double workspace = 0;      // cuBLAS workspaces + the largest transient (a layer's backward, the step)
    double cudaContext = 0;    // outside the allocator: CUDA context and library kernels (estimate)
    double fragmentation = 0;  // reserved minus allocated in the caching allocator (estimate)
    double peakAllocated = 0;  // the allocator's peak over one iteration (<= the categories' sum)
    double peakReserved() const { return peakAllocated + fragmentation; }
    double peakOnDevice() const { return peakReserved() + cudaContext; }
};

struct TrainingPrediction {
    std::string gpuId;
    std::string gpuName;
    TrainingScenario scenario;
    bool supported = true;
    std::string reason;  // why not, when !supported (nothing else is then filled in)

    PredictionSource source = PredictionSource::Analytic;
    std::string sourceDetail;    // one sentence: which parts came from where
    double calibratedShare = 0;  // share of the time from calibrated classes (or measured layers)

    // One training iteration on each GPU (forward, backward, exposed all-reduce, step); with
    // gradient accumulation, one micro-batch's with the step and the gradients' reduction
    // counted once per scenario.accumulation micro-batches.
    Interval iterationMs;
    Interval stepMs;       // one optimizer step: accumulation x iterationMs
    Interval samplesPerS;  // over all GPUs
    Interval tokensPerS;   // sequence models: samplesPerS x the sequence length (0 otherwise)
    // Model FLOPs utilisation: the forward and backward FLOPs the set-up needs (no recomputation;
    // frozen weights' gradients not computed) / (iteration time x the GPU's dense peak at the
    // precision's math); 0 where the database lacks the peak.
    Interval mfu;
    double modelFlopsPerSample = 0;
    Interval forwardMs;
    Interval backwardMs;
    Interval recomputeMs;  // checkpointing's second forward (0 without)
    Interval optimizerMs;
    Interval communicationMs;        // all-reduce time not hidden under backward (0 on one GPU)
    Interval slowestGpuWaitMs;       // per micro-batch: each step waits for the slowest GPU (0 on one GPU)
    Interval otherMs;                // profile only: measured iteration time outside the layers
    Interval hostBoundMs;            // the GPU idle, waiting for the host's dispatch (small batches)
    Interval scalingEfficiency;      // iteration on one GPU (one tensor-parallel group) / iteration on N (1 on one)
    int tensorParallel = 1;          // GPUs of a tensor-parallel group (the model's shard); 1 without
    int expertParallel = 1;          // GPUs of an expert-parallel group (the routed experts' shard); 1 without
    std::string interconnect;        // the link the all-reduce runs over ("nvlink", ...); empty on one GPU
    std::string interconnectNotice;  // why it is not the one asked for (NVLink -> PCIe); empty when it is
    std::vector<LayerTime> layers;   // graph order; operations that do no work are absent
    IterationLayout layout;          // with the layers only

    MemoryBreakdown memory;
    Interval peakMemoryBytes;  // on the device, CUDA context included
    double capacityBytes = 0;
    Interval maxBatch;  // largest per-GPU batch whose peak fits (0: not even 1)
    bool fits = false;  // peakMemoryBytes.value <= capacityBytes
    std::vector<std::string> notes;
};

}  // namespace ts::predictors
