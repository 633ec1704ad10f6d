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
    PredictionSource source = PredictionSource::Analytic;
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
    Interval communicationMs;       // all-reduce time not hidden under backward (0 on one GPU)
    Interval otherMs;               // profile only: measured iteration time outside the layers
    Interval hostBoundMs;           // the GPU idle, waiting for the host's dispatch (small batches)
    Interval scalingEfficiency;     // iteration on one GPU / iteration on N (1 on one GPU)
    std::string interconnect;       // the link the all-reduce runs over ("nvlink", ...); empty on one GPU
    std::string interconnectNotice; // why it is not the one asked for (NVLink -> PCIe); empty when it is
    std::vector<LayerTime> layers;  // graph order; operations that do no work are absent

    MemoryBreakdown memory;
    Interval peakMemoryBytes;  // on the device, CUDA context included
    double capacityBytes = 0;
    Interval maxBatch;  // largest per-GPU batch whose peak fits (0: not even 1)
    bool fits = false;  // peakMemoryBytes.value <= capacityBytes
    std::vector<std::string> notes;
};

}  // namespace ts::predictors
