#pragma once
// "Profile on this GPU": whether this build and machine can, and the work that records a profile
// of the open model at batch sizes around the current one, on a worker thread. Each batch size's
// measurements reach the GUI as soon as they exist, so measured figures replace estimates while
// the rest is still being measured.
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "background_job.h"
#include "trainscope/core/gpu_device.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profile.h"
#include "trainscope/predictors/iteration/training_scenario.h"

namespace ts::gui {

struct ProfilingAvailability {
    bool available = false;
    QString reason;      // why not, as a tooltip sentence; or which GPU
    std::string device;  // "cuda:0"
    std::optional<DeviceProperties> properties;
};
// LibTorch linked and a usable CUDA GPU present (asks the CUDA runtime once per call).
ProfilingAvailability gpuProfilingAvailability();

struct ProfileRequest {
    std::string modelSpec;
    Graph graph;  // a copy: the explorer may show another model while this runs
    std::string device = "cuda:0";
    std::optional<DeviceProperties> properties;
    std::vector<int64_t> batches;
    predictors::TrainingPrecision precision = predictors::TrainingPrecision::Fp32;
    predictors::Optimizer optimizer = predictors::Optimizer::Sgd;
    bool quick = false;  // fewer repeats (tests, a first look)
};

// The current batch first (its figures are the ones on screen), then half and double.
std::vector<int64_t> batchesAround(int64_t batch, int64_t maxBatch);

// Overall fraction done from the profiler's stage ("batch 8: layers", done, total) and the
// order of the batch sizes; negative when the stage says nothing about it.
double profilingFraction(const std::string& stage, int done, int total, const std::vector<int64_t>& batches);

// The job's work. `measured` runs on the GUI thread after each batch size with the profile so far;
// `result` holds the final profile (also when cancelled: what was measured) once the job ends.
// Throws ModelError for a precision the profiler cannot run (fp8) or a model it cannot execute.
BackgroundJob::Work profilingWork(ProfileRequest request, std::function<void(const Profile&)> measured,
                                  std::shared_ptr<Profile> result);

}  // namespace ts::gui
