#include "trainscope/predictors/profile/profile_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "trainscope/core/errors.h"
#include "trainscope/core/occupancy.h"
#include "trainscope/predictors/memory/memory_model.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/iteration/prediction_errors.h"

namespace ts::predictors {
namespace {

const std::string kWhere = "profile";

// Linear interpolation of y over ascending x, held constant beyond the ends.
double interpolate(const std::vector<double>& x, const std::vector<double>& y, double n) {
    if (x.empty()) return 0;
    if (n <= x.front()) return y.front();
    if (n >= x.back()) return y.back();
    const size_t j = size_t(std::upper_bound(x.begin(), x.end(), n) - x.begin()) - 1;
    const double f = (n - x[j]) / (x[j + 1] - x[j]);
    return y[j] + (y[j + 1] - y[j]) * f;
}

struct Point {
    double batch = 0, ms = 0, cv = 0;
    const KernelRecord* dominant = nullptr;
    bool kernels = false;
};

const KernelRecord* dominantKernel(const std::vector<KernelRecord>& ks) {
    const KernelRecord* best = nullptr;
    for (const KernelRecord& k : ks)
        if (!best || k.durationUs * k.launches > best->durationUs * best->launches) best = &k;
    return best;
}

// The law of one pass from its measured points; units at the batches from the origin's rows.
MeasuredLaw makeLaw(std::vector<Point> pts, const GpuSpec& gpu, const TimeRow* row) {
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.batch < b.batch; });
    MeasuredLaw law;
    for (const Point& p : pts) {
        if (!law.batches.empty() && law.batches.back() == p.batch) continue;
        law.batches.push_back(p.batch);
        law.ms.push_back(p.ms);
        law.cv.push_back(p.cv);
    }
    // The dominant kernel, when every point recorded it under one name: its launch, its grid at
    // each batch, and (when the grid grows) its waves as the work units.
    bool same = pts.front().dominant != nullptr;
    for (const Point& p : pts) same = same && p.dominant != nullptr && p.dominant->name == pts.front().dominant->name;
    if (same) {
        const KernelRecord& k = *pts.front().dominant;
        law.hasKernel = true;
        law.launch.threadsPerBlock = k.block[0] * k.block[1] * k.block[2];
        law.launch.registersPerThread = k.registersPerThread;
        law.launch.staticSharedBytes = k.staticSharedBytes;
        law.launch.dynamicSharedBytes = k.dynamicSharedBytes;
        law.waveSize = ProfileFit::waveSizeOn(law, gpu);
        for (size_t i = 0; i < pts.size(); ++i)
            if (i == 0 || pts[i].batch != pts[i - 1].batch)
                law.grids.push_back(double(pts[i].dominant->grid[0]) * pts[i].dominant->grid[1] *
                                    pts[i].dominant->grid[2]);
        law.waves = law.waveSize > 0 && law.batches.size() >= 2;
        if (law.waves) {
            for (double b : law.batches) law.units.push_back(ProfileFit::unitsAt(law, b, 0));
            law.waves = law.units.back() > law.units.front();  // a grid that does not grow says nothing
        }
    }
    if (!law.waves) {
        law.units.clear();
        for (double b : law.batches) law.units.push_back(row ? row->kernelMs(b) : b);
    }
    for (double b : law.batches) law.analytic.push_back(row ? row->at(b) : 1.0);
    return law;
}

}  // namespace

double ProfileFit::gridAt(const MeasuredLaw& law, double n) {
    const std::vector<double>& b = law.batches;
    if (law.grids.empty()) return 0;
    // A grid that did not change is fixed; one that grew grows in proportion beyond the ends.
    if (law.grids.front() == law.grids.back()) return law.grids.front();
    if (n <= b.front()) return std::max(1.0, law.grids.front() * n / b.front());
    if (n >= b.back()) return law.grids.back() * n / b.back();
    return interpolate(b, law.grids, n);
}

double ProfileFit::waveSizeOn(const MeasuredLaw& law, const GpuSpec& gpu) {
    if (!law.hasKernel) return 0;
    try {
        return double(computeOccupancy(gpu, law.launch).waveSize);
    } catch (const ModelError&) {
        return 0;  // cannot run there as launched
    }
}

double ProfileFit::unitsAt(const MeasuredLaw& law, double n, double analyticKernelMs) {
    if (!law.waves) return analyticKernelMs;
    return std::ceil(gridAt(law, n) / law.waveSize - 1e-9);
}

double ProfileFit::evaluate(const MeasuredLaw& law, double n, double u, double analyticAtN, double& relError) {
    const std::vector<double>& analyticAtBatches = law.analytic;
    const std::vector<double>& b = law.batches;
    const size_t k = b.size(), last = k - 1;
    auto ratio = [&](size_t j) {
        return analyticAtBatches[j] > 0 ? law.ms[j] * analyticAtN / analyticAtBatches[j] : law.ms[j];
    };
    auto slope = [&](size_t j) {  // of segment j..j+1 in units; negative when unusable
        const double du = law.units[j + 1] - law.units[j];
        const double s = du > 0 ? (law.ms[j + 1] - law.ms[j]) / du : -1;
        return s >= 0 ? s : -1.0;
    };
    using namespace errors;
    if (k == 1 || n >= b[last] || n <= b[0]) {
        const size_t j = n <= b[0] ? 0 : last;
        const double doublings = std::abs(std::log2(n / b[j]));
        relError = combine(measuredSpread(law.cv[j]), kProfileExtrapolationPerDoubling * doublings);
        if (k == 1) return ratio(0);
        const double s = slope(j == 0 ? 0 : last - 1);
        const double affine = s >= 0 ? law.ms[j] + s * (u - law.units[j]) : -1;
        if (j == last) return s >= 0 ? affine : ratio(j);
        return std::max(affine, ratio(0));  // never falls faster than the analytic model says
    }
    const size_t j = size_t(std::upper_bound(b.begin(), b.end(), n) - b.begin()) - 1;
    const double du = law.units[j + 1] - law.units[j];
    const double fn = (n - b[j]) / (b[j + 1] - b[j]);
    const double f = std::clamp(du != 0 ? (u - law.units[j]) / du : fn, 0.0, 1.0);
    const double cv = law.cv[j] + (law.cv[j + 1] - law.cv[j]) * fn;
    relError = combine(measuredSpread(cv), kProfileInterpolation * 4 * fn * (1 - fn));
    return law.ms[j] + (law.ms[j + 1] - law.ms[j]) * f;
}

ProfileFit::ProfileFit(const ModelAnalysis& m, const Profile& profile, const GpuDatabase& db,
                       const KernelScalingTable& table)
    : m_(m), table_(table) {
    const ProfileScenario& sc = profile.scenario;
    if (!sc.precision.empty()) {
        auto p = parseTrainingPrecision(sc.precision);
        if (!p) throw ModelError(kWhere, "unknown precision '" + sc.precision + "'");
        precision_ = *p;
    }
    if (!sc.optimizer.empty()) {
        auto o = parseOptimizer(sc.optimizer);
        if (!o) throw ModelError(kWhere, "unknown optimizer '" + sc.optimizer + "'");
        optimizer_ = *o;
    }
    if (sc.seq > 0 && sc.seq != m.seq)
        throw ModelError(kWhere, "measured at sequence length " + std::to_string(sc.seq) + ", predictions asked at " +
                                     std::to_string(m.seq) + " (use --seq " + std::to_string(sc.seq) + ")");
    std::vector<const ProfileRun*> runs;
    for (const ProfileRun& r : profile.runs) {
        if (!r.fits && r.batch > 0) failedBatch_ = failedBatch_ ? std::min(failedBatch_, r.batch) : r.batch;
        if (r.fits && r.complete && r.iteration.measured() && r.batch > 0) runs.push_back(&r);
        for (const LayerProfile& l : r.layers)
            if (l.op < 0 || size_t(l.op) >= m.ops.size() || m.ops[size_t(l.op)].name != l.name)
                throw ModelError(kWhere, "layer '" + l.name + "' (operation " + std::to_string(l.op) +
                                             ") is not an operation of " + m.modelName +
                                             ": the profile was recorded for another model");
    }
    if (runs.empty()) throw ModelError(kWhere, "no batch size completed, so there is nothing to predict from");
    std::sort(runs.begin(), runs.end(), [](const ProfileRun* a, const ProfileRun* b) { return a->batch < b->batch; });
    std::ostringstream d;
    if (profile.environment.gpu) {
        const DeviceProperties& props = *profile.environment.gpu;
        const GpuSpec* known = db.matchDevice(props.name);
        gpu_ = std::make_unique<GpuSpec>(known ? *known : db.specFromDevice(props, nullptr));
        capacity_ = double(props.totalMemoryBytes);
        d << "the profile measured on " << gpu_->name;
    } else {
        notes_.push_back("the profile was measured on a CPU (" + profile.environment.deviceName +
                         "): GPU predictions are analytic");
        return;
    }
    d << " at " << trainingPrecisionName(precision_) << ", " << optimizerName(optimizer_) << ", batch";
    for (size_t i = 0; i < runs.size(); ++i) d << (i ? ", " : " ") << runs[i]->batch;
    description_ = d.str();

    // Analytic rows of the measured GPU (units, ratios); fp32 when the model lacks its precision.
    TrainingPrecision rowsPrecision = precision_;
    if (unsupportedReason(*gpu_, precision_)) {
        rowsPrecision = TrainingPrecision::Fp32;
        notes_.push_back(std::string("the measured precision ") + trainingPrecisionName(precision_) +
                         " is not modelled on " + gpu_->name + ": its analytic shape is taken at fp32");
    }
    if (auto why = unsupportedReason(*gpu_, TrainingPrecision::Fp32)) throw ModelError(kWhere, *why);
    rowsPrecision_ = rowsPrecision;
    origin_ = prepareOperationTimes(m, *gpu_, rowsPrecision, table);
    std::vector<const TimeRow*> fwdRow(m.ops.size(), nullptr), bwdRow(m.ops.size(), nullptr);
    for (const TimeRow& r : origin_.forward) fwdRow[size_t(r.op)] = &r;
    for (const TimeRow& r : origin_.backward) bwdRow[size_t(r.op)] = &r;

    std::vector<std::vector<Point>> fwd(m.ops.size()), bwd(m.ops.size());
    for (const ProfileRun* r : runs)
        for (const LayerProfile& l : r->layers) {
            const double b = double(r->batch);
            if (l.forward.measured())
                fwd[size_t(l.op)].push_back({b, l.forward.medianMs, l.forward.cv, dominantKernel(l.forwardKernels)});
            if (l.hasBackward && l.backward.measured())
                bwd[size_t(l.op)].push_back({b, l.backward.medianMs, l.backward.cv, dominantKernel(l.backwardKernels)});
        }
    forward_.resize(m.ops.size());
    backward_.resize(m.ops.size());
    for (size_t i = 0; i < m.ops.size(); ++i) {
        if (!fwd[i].empty()) forward_[i] = makeLaw(fwd[i], *gpu_, fwdRow[i]);
        if (!bwd[i].empty()) backward_[i] = makeLaw(bwd[i], *gpu_, bwdRow[i]);
    }

    // The iteration outside the layers: measured minus the layers (as predicted at that batch)
    // minus the optimizer step the analytic model gives the measured optimizer.
    const double step = optimizerStepMs(m, *gpu_, optimizer_, rowsPrecision, table);
    auto layerMs = [&](const std::optional<MeasuredLaw>& law, const TimeRow* row, double b) {
        if (law) {
            for (size_t j = 0; j < law->batches.size(); ++j)
                if (law->batches[j] == b) return law->ms[j];
            double e;
            return evaluate(*law, b, unitsAt(*law, b, row ? row->kernelMs(b) : b), row ? row->at(b) : 1.0, e);
        }
        return row ? row->at(b) : 0.0;
    };
    const MemoryModel analyticMemory(m, rowsPrecision, optimizer_, Checkpointing::None, 1);
    for (const ProfileRun* r : runs) {
        const double b = double(r->batch);
        double layers = 0;
        for (size_t i = 0; i < m.ops.size(); ++i)
            layers += layerMs(forward_[i], fwdRow[i], b) + layerMs(backward_[i], bwdRow[i], b);
        runBatches_.push_back(b);
        otherMs_.push_back(r->iteration.medianMs - layers - step);
        otherCv_.push_back(r->iteration.cv);
        const MemoryProfile& mp = r->memory;
        if (mp.peakAllocated <= 0) continue;
        const MemoryBreakdown a = analyticMemory.at(b, *gpu_);
        memoryBatches_.push_back(b);
        allocatedDelta_.push_back(mp.peakAllocated - a.peakAllocated);
        const double reserved = std::max(mp.peakReserved, mp.peakAllocated);
        const double context = mp.cudaContext > 0 ? mp.cudaContext - a.cudaContext : 0;
        deviceDelta_.push_back((reserved - mp.peakAllocated) - a.fragmentation + context);
    }
}

ProfileFit::~ProfileFit() = default;

std::string ProfileFit::describe() const {
    return description_;
}

const MeasuredLaw* ProfileFit::law(int op, bool backward) const {
    const auto& v = backward ? backward_ : forward_;
    if (op < 0 || size_t(op) >= v.size() || !v[size_t(op)]) return nullptr;
    return &*v[size_t(op)];
}

double ProfileFit::memoryCorrection(double n, const GpuSpec& target) const {
    if (memoryBatches_.empty()) return 0;
    double c = interpolate(memoryBatches_, allocatedDelta_, n);
    if (sameGpu(target)) c += interpolate(memoryBatches_, deviceDelta_, n);
    return c;
}

double ProfileFit::otherMs(double n, double& cv) const {
    cv = interpolate(runBatches_, otherCv_, n);
    return interpolate(runBatches_, otherMs_, n);
}

}  // namespace ts::predictors
