#pragma once
// Predictions from a measured profile: per layer, the measured forward and backward medians at
// the profiled batch sizes, joined piecewise (in "work units": the waves of the layer's dominant
// kernel when its launches are recorded and it keeps its name, the analytic kernel time
// otherwise, so that wave steps and kernel changes between measured sizes are respected),
// extended beyond them by the last segment's slope in those units, and moved to another precision
// by the analytic ratio and to another GPU by the kernel-scaling cross path. The measured
// iteration time outside the layers (optimizer aside) and the measured memory (minus the analytic
// accounting) are interpolated the same way.
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/occupancy.h"
#include "trainscope/core/profile.h"
#include "trainscope/predictors/iteration/iteration_model.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"
#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/operation_times.h"

namespace ts::predictors {

// One measured layer pass as a function of the batch size on the measured GPU and precision.
struct MeasuredLaw {
    std::vector<double> batches;  // ascending
    std::vector<double> ms;       // median at each
    std::vector<double> cv;
    std::vector<double> units;     // work units at each batch
    std::vector<double> analytic;  // the analytic time (with host floor) at each batch, measured GPU
    bool hasKernel = false;        // the dominant kernel was recorded at every batch, under one name
    KernelLaunch launch;           // its block, registers and shared memory
    std::vector<double> grids;     // its grid (blocks) at each batch
    double waveSize = 0;           // its blocks per wave on the measured GPU (0: unknown)
    bool waves = false;            // units are its waves (its grid grows with the batch)
};

class ProfileFit {
public:
    // Throws ModelError when the profile is not of this model (operation names differ), was
    // measured at another sequence length, names an unknown precision or optimizer, or has no
    // completed run.
    ProfileFit(const ModelAnalysis& m, const Profile& profile, const GpuDatabase& db, const KernelScalingTable& table);
    ~ProfileFit();

    // A CPU profile cannot be moved to a GPU: predictions then stay analytic (with a note).
    bool onGpu() const { return gpu_ != nullptr; }
    const GpuSpec& measuredGpu() const { return *gpu_; }
    TrainingPrecision measuredPrecision() const { return precision_; }
    Optimizer measuredOptimizer() const { return optimizer_; }
    bool sameGpu(const GpuSpec& g) const { return gpu_ && g.id == gpu_->id; }
    std::string describe() const;
    const std::vector<std::string>& notes() const { return notes_; }

    // Layer times on `target` at `p`. `sameGpu`, a source this made for the same target and
    // regions at another precision, shares with it what does not depend on the precision.
    std::unique_ptr<LayerTimeSource> source(const GpuSpec& target, TrainingPrecision p, const LayerRegions& regions,
                                            const LayerTimeSource* sameGpu = nullptr) const;
    // Bytes to add to the analytic device peak: measured minus analytic at the measured scenario
    // (allocated; and on the measured GPU fragmentation and context), interpolated in the batch
    // size and held beyond the measured ones. 0 when the profile has no memory figures.
    double memoryCorrection(double n, const GpuSpec& target) const;
    // Device memory of the measured GPU as CUDA reported it (0 unknown).
    double measuredCapacity() const { return capacity_; }
    // Smallest batch that ran out of memory in the profile (0: none did).
    int64_t smallestFailedBatch() const { return failedBatch_; }

    // The measured law of op `op` (forward or backward); nullptr when it was not measured.
    const MeasuredLaw* law(int op, bool backward) const;
    // The law's time at batch n (on the measured GPU and precision) and its relative error:
    // between measured batches, interpolated in work units; beyond the largest, the last
    // segment's slope in work units (the analytic ratio when it has none); below the smallest,
    // the larger of that and the analytic ratio; with one batch, the analytic ratio.
    static double evaluate(const MeasuredLaw& law, double n, double unitsAtN, double analyticAtN, double& relError);
    // The measured iteration time outside the layers and the optimizer step, and its CV.
    double otherMs(double n, double& cv) const;
    // Work units of a law at batch n: waves, or the analytic kernel time passed in.
    static double unitsAt(const MeasuredLaw& law, double n, double analyticKernelMs);
    // The dominant kernel's grid at batch n (interpolated; in proportion beyond the measured ones).
    static double gridAt(const MeasuredLaw& law, double n);
    // Its wave size on `gpu` (occupancy of its launch there); 0 when it cannot run there.
    static double waveSizeOn(const MeasuredLaw& law, const GpuSpec& gpu);

    // What depends only on the measured GPU at batch n, moved to precision c there; per 2 op + pass.
    struct OriginAtBatch {
        std::vector<double> t;     // the law's time (0: no law), at c
        std::vector<double> err;   // its relative error
        std::vector<double> r;     // efficiency against the model^alpha / architecture factor (cross path)
        std::vector<double> grid;  // the dominant kernel's grid (0: not recorded)
        std::vector<float> tf, rf, gridf, errSqf;  // t, r, grid and err^2 as floats (the vectorised sums)
    };
    // Computed once and kept (thread-safe): every target of a sweep shares it.
    std::shared_ptr<const OriginAtBatch> originAt(TrainingPrecision c, double n) const;

private:
    friend class ProfileLayerTimes;
    const OperationTimes& originRows(TrainingPrecision c) const;  // the measured GPU's rows at c (under the lock)
    const ModelAnalysis& m_;
    const KernelScalingTable& table_;
    std::unique_ptr<GpuSpec> gpu_;
    TrainingPrecision precision_ = TrainingPrecision::Fp32;
    TrainingPrecision rowsPrecision_ = TrainingPrecision::Fp32;  // of origin_
    Optimizer optimizer_ = Optimizer::Sgd;
    OperationTimes origin_;                                       // analytic rows of the measured GPU
    std::vector<std::optional<MeasuredLaw>> forward_, backward_;  // per op
    std::vector<double> runBatches_, otherMs_, otherCv_;          // iteration outside the layers
    std::vector<double> memoryBatches_, allocatedDelta_, deviceDelta_;
    double capacity_ = 0;
    int64_t failedBatch_ = 0;
    std::string description_;
    std::vector<std::string> notes_;
    mutable std::mutex cacheMutex_;
    mutable std::map<std::pair<int, double>, std::shared_ptr<const OriginAtBatch>> cache_;
    mutable std::array<std::unique_ptr<OperationTimes>, kTrainingPrecisionCount> commonRows_;
};

}  // namespace ts::predictors
