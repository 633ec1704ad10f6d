#pragma once
// Predictions on the device a profile was measured on (a CPU or a GPU), at its precision and
// optimizer, from its measurements alone: no GPU database and no analytic model, so that CPU
// profiles (which ProfileFit cannot move to a GPU) can still be validated across batch sizes.
// Each layer pass is a MeasuredLaw in the batch size evaluated by ProfileFit::evaluate
// (interpolated between measured batches, the last segment's slope beyond them, never below
// proportional under the smallest); the iteration time outside the layers is interpolated and
// held beyond the ends, as ProfileFit::otherMs does; the peak memory is a law like a layer's.
#include <cstdint>
#include <vector>

#include "trainscope/core/profile.h"
#include "trainscope/predictors/profile/profile_fit.h"

namespace ts::predictors {

struct MeasuredDevicePrediction {
    double iterationMs = 0;
    double iterationRelError = 0;  // from the measured spread and the interpolation distance
    double peakBytes = 0;          // 0 when the profile has no memory figures
};

// A run a prediction can start from: it fitted, completed and its iteration was timed.
bool isFittedRun(const ProfileRun& r);
// The device peak of a run: what the allocator reserved (CPU: allocated) plus the CUDA context.
double measuredPeakBytes(const MemoryProfile& m);

class MeasuredDeviceFit {
public:
    // Throws ModelError when no run of the profile can be fitted.
    explicit MeasuredDeviceFit(const Profile& profile);
    // Batch n >= 1 on the measured device at the measured precision and optimizer.
    MeasuredDevicePrediction predict(double n) const;
    const std::vector<double>& batches() const { return batches_; }

private:
    std::vector<MeasuredLaw> layers_;  // one per measured layer pass
    std::vector<double> batches_, otherMs_, otherCv_;
    MeasuredLaw memory_;
    bool hasMemory_ = false;
};

}  // namespace ts::predictors
