#pragma once
// Training predictions for a model: iteration time, throughput, per-layer times, memory by
// category, the largest batch that fits, and data-parallel scaling, on any GPU of the database,
// at any precision, optimizer and batch size, with intervals. The source is a measured profile
// when one is given (useProfile), otherwise the shipped kernel-scaling calibration and the model's
// analytic costs. docs/prediction.md describes every rule.
//
//   TrainingPredictor p(graph);                       // analyses the model once
//   TrainingPrediction r = p.predict(gpu, scenario);  // one GPU, one scenario, per layer
//   SweepPlan plan(p, gpus, precisions, scenario);    // per (GPU, precision) coefficients, once
//   plan.evaluate(batches);                           // many batch sizes, microseconds each
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profile.h"
#include "trainscope/predictors/iteration/iteration_model.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"
#include "trainscope/predictors/memory/memory_model.h"
#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/training_prediction.h"

namespace ts::predictors {

class ProfileFit;

class TrainingPredictor {
public:
    // Throws ModelError naming the model when its costs cannot be computed.
    explicit TrainingPredictor(const Graph& g, int64_t seq = 0,
                               const KernelScalingTable& table = KernelScalingTable::builtin());
    ~TrainingPredictor();
    TrainingPredictor(const TrainingPredictor&) = delete;
    TrainingPredictor& operator=(const TrainingPredictor&) = delete;

    // PROFILE INPUT HOOK: predictions from now on start from this measured profile of the same
    // model (per-layer times at its batch sizes, its precision, its GPU). The CLI reads the file
    // with ts::readProfile (core/include/trainscope/core/profile_file.h) and passes it here.
    // Throws ModelError when the profile is not of this model or has nothing usable.
    void useProfile(const Profile& profile, const GpuDatabase& db);
    bool hasProfile() const { return profile_ != nullptr; }
    // The database GPU the profile was measured on; null without a profile or for a CPU profile
    // (whose measurements cannot move to a GPU: predictions then stay the calibrated ones).
    const GpuSpec* measuredGpu() const;

    const ModelAnalysis& analysis() const { return analysis_; }
    const KernelScalingTable& table() const { return table_; }
    // The whole-iteration model's constants (default: StreamModel::shipped()); for fitting them.
    void setStreamModel(const StreamModel& model) { stream_ = model; }
    const StreamModel& streamModel() const { return stream_; }

    // One GPU, one scenario. An unsupported precision or interconnect comes back with
    // supported = false and the reason. Throws ModelError for an invalid scenario (batch < 1...).
    TrainingPrediction predict(const GpuSpec& gpu, const TrainingScenario& scenario, bool perLayer = true) const;

private:
    friend class SweepPlan;
    struct Target;  // one (GPU, precision) prepared for evaluation
    // `sameGpu`: a target prepared for the same GPU and scenario at another precision, whose
    // precision-independent parts the new one may share.
    std::unique_ptr<Target> prepare(const GpuSpec& gpu, TrainingPrecision p, const TrainingScenario& s,
                                    const Target* sameGpu = nullptr) const;
    // Device bytes at batch n from the allocator's part (the same on every GPU).
    double memoryNeed(const Target& t, double allocatorBytes, double n, MemoryBound bound) const;
    using AllocatorBytes = std::function<double(int64_t n, MemoryBound bound)>;
    Interval maxBatchOf(const Target& t, const AllocatorBytes& allocator) const;

    ModelAnalysis analysis_;
    const KernelScalingTable& table_;
    StreamModel stream_ = StreamModel::shipped();
    std::unique_ptr<ProfileFit> profile_;
};

struct SweepPoint {
    int64_t batch = 0;
    Interval iterationMs;
    Interval samplesPerS;
    Interval peakMemoryBytes;
    bool fits = false;
};

struct GpuSweep {
    std::string gpuId;
    TrainingPrecision precision = TrainingPrecision::Fp32;
    bool supported = true;
    std::string reason;
    Interval maxBatch;
    std::vector<SweepPoint> points;
};

// Everything that does not depend on the batch size, prepared once for many GPUs and precisions
// at one optimizer, checkpointing and data-parallel setting; evaluate() then costs one pass over
// the (de-duplicated) layers per batch size and GPU.
class SweepPlan {
public:
    SweepPlan(const TrainingPredictor& predictor, const std::vector<const GpuSpec*>& gpus,
              const std::vector<TrainingPrecision>& precisions, const TrainingScenario& base);
    ~SweepPlan();
    // One GpuSweep per (GPU, precision), GPUs outermost. Batches must be >= 1.
    std::vector<GpuSweep> evaluate(const std::vector<int64_t>& batches) const;

private:
    const TrainingPredictor& predictor_;
    TrainingScenario base_;
    std::vector<std::unique_ptr<TrainingPredictor::Target>> targets_;
    std::vector<std::unique_ptr<MemoryModel>> memory_;  // per precision
    std::vector<int> memoryIndex_;                      // per target
    std::vector<Interval> maxBatch_;                    // per target
};

}  // namespace ts::predictors
