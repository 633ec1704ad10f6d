// Layer times on a target GPU and precision from a fitted profile: the measured law on the
// measured GPU, moved through a precision both GPUs have (analytic ratio), across GPUs (the
// kernel-scaling cross path, as KernelScalingTable::predictCross computes it), and to the target
// precision (analytic ratio). Layers the profile lacks take the analytic rows.
#include <algorithm>
#include <cmath>

#include "trainscope/predictors/kernel_scaling.h"
#include "trainscope/predictors/prediction_errors.h"
#include "trainscope/predictors/profile_fit.h"

namespace ts::predictors {

class ProfileLayerTimes : public LayerTimeSource {
public:
    ProfileLayerTimes(const ProfileFit& fit, const GpuSpec& target, TrainingPrecision p, const LayerRegions& regions)
        : fit_(fit), m_(fit.m_), regions_(regions), cross_(!fit.sameGpu(target)) {
        const GpuSpec& origin = *fit.gpu_;
        const TrainingPrecision measured = fit.rowsPrecision_;
        // A precision both GPUs model: the measured one, else the target's, else fp32.
        common_ = measured;
        if (cross_ && unsupportedReason(target, measured))
            common_ = !unsupportedReason(origin, p) ? p : TrainingPrecision::Fp32;
        yc_ = common_ == measured ? fit.origin_ : prepareOperationTimes(m_, origin, common_, fit.table_);
        xc_ = cross_ ? prepareOperationTimes(m_, target, common_, fit.table_) : yc_;
        xp_ = p == common_ ? xc_ : prepareOperationTimes(m_, target, p, fit.table_);
        precisionChange_ = p != fit.precision_;
        index(fit.origin_, ym_);
        index(yc_, ycI_);
        index(xc_, xcI_);
        index(xp_, xpI_);
        // Kernels smaller than one wave on both GPUs: only the SM clock matters (Habitat's rule).
        targetWave_.assign(2 * m_.ops.size(), 0.0);
        if (cross_ && origin.boostClockMHz.known() && target.boostClockMHz.known()) {
            clockRatio_ = *origin.boostClockMHz / *target.boostClockMHz;
            for (size_t op = 0; op < m_.ops.size(); ++op)
                for (int pass = 0; pass < 2; ++pass)
                    if (const MeasuredLaw* law = fit.law(int(op), pass == 1))
                        targetWave_[2 * op + size_t(pass)] = ProfileFit::waveSizeOn(*law, target);
        }
    }

    int regions() const override { return regions_.regions(); }

    void sums(double n, LayerSums& out) const override {
        out.reset(regions_.regions());
        for (size_t op = 0; op < m_.ops.size(); ++op)
            for (int pass = 0; pass < 2; ++pass) {
                double e = 0;
                bool measured = false;
                const double t = time(op, pass == 1, n, e, measured);
                if (t == 0) continue;
                if (measured) out.calibratedMs += t;
                if (pass == 1) {
                    out.backwardByRegion[size_t(regions_.regionOf(int(op)))] += t;
                    out.backwardError += t * e;
                } else {
                    (int(op) < regions_.lastSegmentStart ? out.forwardCheckpointed : out.forwardLast) += t;
                    out.forwardError += t * e;
                }
            }
        double cv = 0;
        out.otherMs = fit_.otherMs(n, cv);
        double e = errors::measuredSpread(cv);
        if (cross_ || precisionChange_) e = errors::combine(e, errors::kProfileOther);
        out.otherError = std::abs(out.otherMs) * e;
    }

    std::vector<LayerTime> layers(double n) const override {
        std::vector<LayerTime> out;
        for (size_t op = 0; op < m_.ops.size(); ++op) {
            double ef = 0, eb = 0;
            bool mf = false, mb = false;
            const double f = time(op, false, n, ef, mf), b = time(op, true, n, eb, mb);
            if (f == 0 && b == 0) continue;
            LayerTime l;
            l.op = int(op);
            l.name = m_.ops[op].name;
            l.opClass = m_.ops[op].opClass;
            l.forwardMs = Interval::relative(f, ef);
            l.backwardMs = Interval::relative(b, eb);
            l.source = mf || mb                     ? PredictionSource::MeasuredProfile
                       : m_.ops[op].opClass.empty() ? PredictionSource::Analytic
                                                    : PredictionSource::ShippedCalibration;
            out.push_back(std::move(l));
        }
        return out;
    }

private:
    struct Index {
        std::vector<const TimeRow*> forward, backward;
    };
    void index(const OperationTimes& t, Index& i) const {
        i.forward.assign(m_.ops.size(), nullptr);
        i.backward.assign(m_.ops.size(), nullptr);
        for (const TimeRow& r : t.forward) i.forward[size_t(r.op)] = &r;
        for (const TimeRow& r : t.backward) i.backward[size_t(r.op)] = &r;
    }
    static const TimeRow* row(const Index& i, size_t op, bool backward) {
        return backward ? i.backward[op] : i.forward[op];
    }

    // The kernel-scaling cross path of one row (predictCrossShaped for roofline classes).
    static double crossGpu(double t, const TimeRow& y, const TimeRow& x, double n) {
        const double core = std::max(t - y.castMs.at(n), 1e-12);
        const double kernelY = softInverse(core, y.floorMs, y.softness);
        const double modelY = y.kernelMs(n) / y.architectureFactor;
        double r = std::isfinite(kernelY) && modelY > 0 ? kernelY / modelY : 1.0;
        r = std::pow(std::clamp(r, 0.1, 10.0), x.alpha);
        const double modelX = x.kernelMs(n) / x.architectureFactor;
        return softMax(x.floorMs, modelX * r * x.architectureFactor / y.architectureFactor, x.softness) +
               x.castMs.at(n);
    }

    double time(size_t op, bool backward, double n, double& e, bool& measured) const {
        const TimeRow* xp = row(xpI_, op, backward);
        const MeasuredLaw* law = fit_.law(int(op), backward);
        measured = law != nullptr;
        if (!law) {
            e = xp ? xp->relError : 0;
            return xp ? xp->at(n) : 0;
        }
        const TimeRow* ym = row(ym_, op, backward);
        double t = ProfileFit::evaluate(*law, n, ProfileFit::unitsAt(*law, n, ym ? ym->kernelMs(n) : n),
                                        ym ? ym->at(n) : 1.0, e);
        if (!ym || !xp) return t;  // no analytic model of it (host-only work): as measured
        const TimeRow* yc = row(ycI_, op, backward);
        const TimeRow* xc = row(xcI_, op, backward);
        if (yc != ym) t *= yc->at(n) / ym->at(n);
        if (cross_) {
            const double targetWave = targetWave_[2 * op + (backward ? 1 : 0)];
            if (clockRatio_ > 0 && law->waveSize > 0 && targetWave > 0 &&
                ProfileFit::gridAt(*law, n) <= std::min(law->waveSize, targetWave))
                t *= clockRatio_;
            else
                t = crossGpu(t, *yc, *xc, n);
            e = errors::combine(e, errors::crossClassError(m_.ops[op].opClass));
        }
        if (xp != xc) t *= xp->at(n) / xc->at(n);
        if (precisionChange_) e = errors::combine(e, errors::kProfilePrecision);
        return t;
    }

    const ProfileFit& fit_;
    const ModelAnalysis& m_;
    LayerRegions regions_;
    bool cross_ = false;
    bool precisionChange_ = false;
    TrainingPrecision common_ = TrainingPrecision::Fp32;
    OperationTimes yc_, xc_, xp_;
    Index ym_, ycI_, xcI_, xpI_;
    double clockRatio_ = 0;           // measured GPU's boost clock / the target's (0: unknown)
    std::vector<double> targetWave_;  // per (op, pass): the dominant kernel's wave size on the target
};

std::unique_ptr<LayerTimeSource> ProfileFit::source(const GpuSpec& target, TrainingPrecision p,
                                                    const LayerRegions& regions) const {
    return std::make_unique<ProfileLayerTimes>(*this, target, p, regions);
}

}  // namespace ts::predictors
