#pragma once
// Fitting the scaling models to measurements: each GPU's own statistics (host floor, achieved
// bandwidth) and the shared parameters of a class, grid-searched on ordered GPU pairs. Every
// function takes the set of GPUs it may learn from, so leave-one-GPU-out is the caller's choice
// of that set: the prediction for GPU X never sees X's rows.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "trainscope/predictors/scaling/kernel_measurements.h"
#include "trainscope/predictors/scaling/kernel_scaling.h"

namespace ts::predictors {

// numpy.quantile's default (linear interpolation between order statistics). v must not be empty.
double quantileOf(std::vector<double> v, double q);

// The candidate parameter sets of a class, in search order (ties go to the earlier one).
std::vector<ScalingParams> parameterGrid(WorkKind kind);

// One class's measurements with everything that does not depend on fitted parameters computed
// once: per-GPU statistics and the tile-and-wave shape of every (configuration, origin, GPU).
class PreparedOperator {
public:
    // `set` supplies other classes' rows where a statistic borrows them (conv's floor is bmm's).
    PreparedOperator(const OperatorMeasurements& op, const MeasurementSet& set);

    const OperatorMeasurements& data() const { return op_; }
    size_t gpuCount() const { return op_.gpus.size(); }
    // GPU g's statistics from its own rows only.
    const GpuOpStats& ownStats(size_t g) const { return own_[g]; }
    // A GPU outside `known`: floor = floorQuantile of theirs, efficiency = their median.
    GpuOpStats estimateFrom(const std::vector<size_t>& known, double floorQuantile) const;

    bool measured(size_t config, size_t g) const { return op_.configs[config].byGpu[g].has_value(); }
    double latency(size_t config, size_t g) const { return op_.configs[config].byGpu[g]->latencyMs; }

    // Target `target` of configuration `config` from origin's measurement (both measured on origin).
    double predictCross(size_t config, size_t origin, const GpuOpStats& originStats, size_t target,
                        const GpuOpStats& targetStats, const ScalingParams& p) const;
    double predictModelOnly(size_t config, size_t target, const GpuOpStats& targetStats, const ScalingParams& p) const;

    // Grid search over parameterGrid() on every ordered pair Y -> Z of `train` (Z's statistics
    // estimated from train minus Z, as an unseen GPU's would be). Loss: mean over pairs of
    // mean(min(|ln(pred / actual)|, 1)). Classes of more than 5000 configurations search on every
    // third. With fewer than two GPUs in train there is nothing to fit: the defaults come back.
    ScalingParams fit(const std::vector<size_t>& train) const;

    // ln kernel-time factor per architecture of `train` (see ScalingParams), for parameters `p`:
    // ridge least squares of clip(ln(actual / predicted), -1, 1) on a_Z / a_Y over the same pairs
    // Y -> Z as fit(). Only architectures of `train` get an entry, so a GPU is corrected only by
    // what other GPUs of its architecture showed. fit() calls it on the parameters it chose.
    std::map<std::string, double> fitArchitectureOffsets(const std::vector<size_t>& train,
                                                         const ScalingParams& p) const;
    // Per architecture of `train` and GEMM shape class (gemmShapeClass), the ln factor on top of p's
    // constant architecture factors: the same ridge fit on the same pairs, one per shape class, of
    // what the constant factors leave. fit() calls it after fitArchitectureOffsets.
    std::map<std::string, std::map<std::string, double>> fitShapeOffsets(const std::vector<size_t>& train,
                                                                         const ScalingParams& p) const;

private:
    // The distinct architectures of `train`, and each GPU's index among them.
    std::vector<std::string> trainingArchitectures(const std::vector<size_t>& train, std::vector<size_t>& archOf) const;
    // fn(config, y, z, ln(actual / predicted)) for every prediction Y -> Z among `train` with
    // parameters p (Z's statistics estimated without Z), as in fit().
    template <typename Fn>
    void forEachTrainingPrediction(const std::vector<size_t>& train, const ScalingParams& p, Fn&& fn) const;

    const KernelShape& shape(size_t config, size_t origin, size_t g) const {
        return shapes_[(config * gpuCount() + origin) * gpuCount() + g];
    }
    const OperatorMeasurements& op_;
    std::vector<GpuOpStats> own_;
    std::vector<KernelShape> shapes_;  // origin's launch on each GPU
    std::vector<KernelShape> bare_;    // no launch (model-only), per (config, GPU)
};

}  // namespace ts::predictors
