#include "trainscope/predictors/profile/measured_device.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "trainscope/core/errors.h"

namespace ts::predictors {
namespace {

// Linear in the batch between the given points, held beyond the ends.
double interpolate(const std::vector<double>& x, const std::vector<double>& y, double n) {
    if (x.empty()) return 0;
    if (n <= x.front()) return y.front();
    if (n >= x.back()) return y.back();
    const size_t j = size_t(std::upper_bound(x.begin(), x.end(), n) - x.begin()) - 1;
    return y[j] + (y[j + 1] - y[j]) * (n - x[j]) / (x[j + 1] - x[j]);
}

// A law whose work units and analytic shape are the batch itself: without a device model, a
// pass's work is taken to grow in proportion to the samples.
MeasuredLaw batchLaw(std::vector<std::pair<double, TimingStat>> points) {
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    MeasuredLaw law;
    for (const auto& [b, t] : points) {
        if (!law.batches.empty() && law.batches.back() == b) continue;
        law.batches.push_back(b);
        law.ms.push_back(t.medianMs);
        law.cv.push_back(t.cv);
        law.units.push_back(b);
        law.analytic.push_back(b);
    }
    return law;
}

}  // namespace

bool isFittedRun(const ProfileRun& r) {
    return r.fits && r.complete && r.iteration.measured() && r.batch > 0;
}

double measuredPeakBytes(const MemoryProfile& m) {
    return std::max(m.peakReserved, m.peakAllocated) + m.cudaContext;
}

MeasuredDeviceFit::MeasuredDeviceFit(const Profile& profile) {
    std::vector<const ProfileRun*> runs;
    for (const ProfileRun& r : profile.runs)
        if (isFittedRun(r)) runs.push_back(&r);
    if (runs.empty()) throw ModelError("profile", "no batch size completed, so there is nothing to predict from");
    std::sort(runs.begin(), runs.end(), [](const ProfileRun* a, const ProfileRun* b) { return a->batch < b->batch; });

    // Per (op, pass): the measured points over the runs.
    std::map<std::pair<int, bool>, std::vector<std::pair<double, TimingStat>>> passes;
    for (const ProfileRun* r : runs)
        for (const LayerProfile& l : r->layers) {
            if (l.forward.measured()) passes[{l.op, false}].push_back({double(r->batch), l.forward});
            if (l.hasBackward && l.backward.measured()) passes[{l.op, true}].push_back({double(r->batch), l.backward});
        }
    for (auto& [key, points] : passes) layers_.push_back(batchLaw(std::move(points)));

    std::vector<std::pair<double, TimingStat>> memoryPoints;
    for (const ProfileRun* r : runs) {
        const double b = double(r->batch);
        if (!batches_.empty() && batches_.back() == b) continue;
        double layers = 0;
        for (const MeasuredLaw& law : layers_) {
            double e = 0;
            layers += ProfileFit::evaluate(law, b, b, b, e);
        }
        batches_.push_back(b);
        otherMs_.push_back(r->iteration.medianMs - layers);
        otherCv_.push_back(r->iteration.cv);
        const double peak = measuredPeakBytes(r->memory);
        if (peak > 0) {
            TimingStat t;
            t.medianMs = peak;  // the law's "ms" carries bytes here
            t.repeats = 1;
            memoryPoints.push_back({b, t});
        }
    }
    if (!memoryPoints.empty()) {
        memory_ = batchLaw(std::move(memoryPoints));
        hasMemory_ = true;
    }
}

MeasuredDevicePrediction MeasuredDeviceFit::predict(double n) const {
    if (!(n >= 1)) throw ModelError("batch", "expected a batch size of at least 1");
    MeasuredDevicePrediction p;
    double layers = 0, errorMs = 0;
    for (const MeasuredLaw& law : layers_) {
        double e = 0;
        const double ms = ProfileFit::evaluate(law, n, n, n, e);
        layers += ms;
        errorMs += ms * e;  // correlated: the relative errors add in proportion
    }
    const double other = interpolate(batches_, otherMs_, n);
    const double otherCv = interpolate(batches_, otherCv_, n);
    p.iterationMs = layers + other;  // exact at every measured batch
    p.iterationRelError = p.iterationMs > 0 ? (errorMs + std::abs(other) * otherCv) / p.iterationMs : 0;
    if (hasMemory_) {
        double e = 0;
        p.peakBytes = ProfileFit::evaluate(memory_, n, n, n, e);
    }
    return p;
}

}  // namespace ts::predictors
