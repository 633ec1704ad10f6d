#pragma once
// One training iteration from its layers' times: forward, backward (with checkpointing's
// recomputation), the optimizer step and the all-reduce not hidden under backward. PyTorch
// queues kernels asynchronously: the GPU runs a stretch's kernels as soon as the host has issued
// them, so an iteration is bound, stretch by stretch, by the GPU's work or the host's dispatch. The layer
// times come from a LayerTimeSource (analytic rows, or a fitted profile), which sums them per
// group so that a batch size costs one pass over the rows.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "trainscope/predictors/iteration/data_parallel.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/iteration/training_prediction.h"
#include "trainscope/predictors/iteration/training_scenario.h"

namespace ts::predictors {

// Which group a layer's time is summed into: forward of the checkpointed segments or of the last
// one (checkpointing recomputes the former), and backward by gradient bucket (bucket j is ready
// when the backward of every op >= bucketFirstOp[j] is done; the last region holds the ops below
// every bucket).
struct LayerRegions {
    // Per op: forward group 0 (checkpointing recomputes it) or 1; null: all in group 1. Without
    // checkpointing the sqrt(L) plan still splits the forward (its two groups sum to the same).
    const std::vector<char>* recomputed = nullptr;
    int forwardGroup(int op) const { return recomputed && (*recomputed)[size_t(op)] ? 0 : 1; }
    std::vector<int> bucketFirstOp;  // descending; empty on one GPU
    int regions() const { return int(bucketFirstOp.size()) + 1; }
    int regionOf(int op) const;
};

struct RowUseRun {
    uint32_t group = 0;
    uint32_t begin = 0, end = 0;
};

struct LayerSums {
    double forwardCheckpointed = 0;
    double forwardLast = 0;
    std::vector<double> backwardByRegion;
    // The host's time to dispatch the same groups (iteration rows; 0 where the times already
    // include it, as a profile's measured layers do).
    double hostForwardCheckpointed = 0;
    double hostForwardLast = 0;
    std::vector<double> hostBackwardByRegion;
    double forwardError = 0;  // sum of time x relative error
    double backwardError = 0;
    double calibratedMs = 0;  // time in rows of a calibrated (or measured) class
    double otherMs = 0;       // measured iteration time outside the layers (profiles)
    double otherError = 0;
    std::vector<double> scratch;  // reused between calls: sums per run of rows, bucket ready times
    std::vector<float> rowTimes;  // reused between calls: one block's row times
    // Reused between calls: values that the sources of one GPU at several precisions share at
    // one batch size (a profile's cross path), named by their owner's id; reset() keeps them.
    struct SharedValues {
        uint64_t owner = 0;
        double n = 0;
        unsigned ready = 0;  // bit per part computed
        std::vector<float> values;
    } shared;
    void reset(int regions);
};

class LayerTimeSource {
public:
    virtual ~LayerTimeSource() = default;
    virtual void sums(double n, LayerSums& out) const = 0;
    virtual int regions() const = 0;
    // Every layer's forward and backward time at batch n, graph order.
    virtual std::vector<LayerTime> layers(double n) const = 0;
};

// The analytic rows, de-duplicated (a transformer's layers repeat) and laid out for a tight loop:
// each distinct row is evaluated once per batch size, then added to every group it occurs in.
class AnalyticLayerTimes : public LayerTimeSource {
public:
    AnalyticLayerTimes(const ModelAnalysis& m, OperationTimes times, const LayerRegions& regions);
    void sums(double n, LayerSums& out) const override;
    int regions() const override { return regions_; }
    std::vector<LayerTime> layers(double n) const override;
    size_t distinctRows() const;

private:
    // Consecutive uses of one group (0: forward checkpointed, 1: forward last segment, 2 + r:
    // backward region r), as the row kernels read them.
    using Run = RowUseRun;
    struct Block {  // distinct rows of one softness, structure of arrays
        double softness = 4;
        // Single precision: four rows per SSE vector (eight with AVX2), and the model is good to
        // 10%, not to 1e-7.
        std::vector<float> floorPow, c0, c1, c2, m0, m1, m2, fixed, wave, split, k0, k1, k2;
        // Where each distinct row is used, sorted by group: row, and weights for its time, its
        // error (count x relative error) and its calibrated time (count, or 0).
        std::vector<uint32_t> useRow;
        std::vector<float> useWeight, useError, useCalibrated;
        std::vector<Run> runs;
    };
    const ModelAnalysis& m_;
    OperationTimes times_;
    std::vector<Block> blocks_;
    std::vector<double> hostByGroup_;  // host dispatch per group: constant in the batch size
    int regions_ = 1;
};

struct IterationSetup {
    int gpus = 1;
    bool checkpointing = false;
    double optimizerMs = 0;
    double optimizerHostMs = 0;
    // The host waits for the GPU before the optimizer step (autocast's grad scaler reads its inf
    // check with .item()), so the step's dispatch cannot overlap backward.
    bool syncBeforeOptimizer = false;
    std::vector<double> bucketCommMs;  // all-reduce of each bucket (empty on one GPU); ZeRO: reduce-scatter
    // ZeRO stage 3 (FSDP): all-gathers of the parameters before each block's forward (prefetched one
    // block ahead: only the first waits) and backward, on the link beside the gradients'
    // reduce-scatter. Stages 1 and 2: the all-gather of the updated parameters after the step.
    double firstGatherMs = 0;
    double forwardGatherMs = 0;
    double backwardGatherMs = 0;
    double afterStepGatherMs = 0;
};

struct IterationTimes {
    Interval forwardMs, backwardMs, recomputeMs, optimizerMs, communicationMs, otherMs, iterationMs;
    Interval hostBoundMs;  // the GPU idle, waiting for the host to dispatch (small batches)
    double calibratedShare = 0;
    double gatherExposedMs = 0;  // the part of communicationMs every micro-batch repeats (stage-3 gathers)
    Interval slowestGpuWaitMs;   // per micro-batch, after accumulation: the step's wait for the slowest GPU
};

IterationTimes evaluateIteration(const LayerTimeSource& source, const IterationSetup& setup, double n,
                                 LayerSums& scratch);

}  // namespace ts::predictors
