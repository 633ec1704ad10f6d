// Layer times on a target GPU and precision from a fitted profile: the measured law on the
// measured GPU, moved through a precision both GPUs have (analytic ratio), across GPUs (the
// kernel-scaling cross path, as KernelScalingTable::predictCross computes it, or the clock for a
// kernel smaller than a wave on both), and to the target precision (analytic ratio). Layers the
// profile lacks take the analytic rows. Everything that depends only on the measured GPU is
// computed once per (batch size, precision) in ProfileFit::originAt and shared by every target.
#include <algorithm>
#include <cmath>
#include <limits>

#include "trainscope/predictors/kernel_scaling.h"
#include "trainscope/predictors/prediction_errors.h"
#include "trainscope/predictors/profile_fit.h"

namespace ts::predictors {
namespace {

// softMax, softInverse and pow for the softness and alpha values the table uses, without pow().
inline double soft(double a, double b, double p) {
    if (p == 4) {
        const double a2 = a * a, b2 = b * b;
        return std::sqrt(std::sqrt(a2 * a2 + b2 * b2));
    }
    if (p == 2) return std::sqrt(a * a + b * b);
    return softMax(a, b, p);
}
inline double inverseSoft(double t, double a, double p) {
    if (!(t > a * 1.02)) return std::numeric_limits<double>::quiet_NaN();
    if (p == 4) {
        const double t2 = t * t, a2 = a * a;
        return std::sqrt(std::sqrt(std::abs(t2 * t2 - a2 * a2)));
    }
    if (p == 2) return std::sqrt(std::abs(t * t - a * a));
    return softInverse(t, a, p);
}
inline double power(double r, double alpha) {
    if (alpha == 1) return r;
    if (alpha == 0.5) return std::sqrt(r);
    if (alpha == 0.75) return std::sqrt(r) * std::sqrt(std::sqrt(r));
    return std::pow(r, alpha);
}
inline double rowAt(const TimeRow& r, double n) {
    return soft(r.floorMs, r.kernelMs(n), r.softness) + r.castMs.at(n);
}

// Rows of one softness in single precision (as AnalyticLayerTimes keeps them).
struct FloatRows {
    std::vector<float> fp, c0, c1, c2, m0, m1, m2, fixed, k0, k1, k2;
    void add(const TimeRow& r) {
        fp.push_back(float(std::pow(r.floorMs, r.softness)));
        c0.push_back(float(r.computeMs.c0)), c1.push_back(float(r.computeMs.c1)), c2.push_back(float(r.computeMs.c2));
        m0.push_back(float(r.memoryMs.c0)), m1.push_back(float(r.memoryMs.c1)), m2.push_back(float(r.memoryMs.c2));
        fixed.push_back(float(r.fixedMs));
        k0.push_back(float(r.castMs.c0)), k1.push_back(float(r.castMs.c1)), k2.push_back(float(r.castMs.c2));
    }
};

template <int P>
[[gnu::always_inline]] inline float softOf(float fp, float k) {
    if constexpr (P == 4) {
        const float kk = k * k;
        return std::sqrt(std::sqrt(fp + kk * kk));
    } else {
        return std::sqrt(fp + k * k);
    }
}

// Target times of measured layers at batch n: the origin's time tY, moved by the cross path
// soft(floor, kernel x r) + cast (or by the clock where `clock` is set), then by the precision
// ratio when `p` rows are given. Softness 4 or 2 only; vectorised like the analytic rows.
template <int P>
[[gnu::always_inline]] inline void lawTimes(const FloatRows& x, const FloatRows* p, const float* __restrict tY,
                                            const float* __restrict r, const float* __restrict clock, bool cross,
                                            size_t count, float n, float* __restrict t) {
    const float n2 = n * n;
    const float *xf = x.fp.data(), *xc0 = x.c0.data(), *xc1 = x.c1.data(), *xc2 = x.c2.data(), *xm0 = x.m0.data(),
                *xm1 = x.m1.data(), *xm2 = x.m2.data(), *xfx = x.fixed.data(), *xk0 = x.k0.data(), *xk1 = x.k1.data(),
                *xk2 = x.k2.data();
    for (size_t i = 0; i < count; ++i) {
        const float compute = xc0[i] + n * xc1[i] + n2 * xc2[i], memory = xm0[i] + n * xm1[i] + n2 * xm2[i];
        const float kx = (compute > memory ? compute : memory) + xfx[i];
        const float k = kx < 1e9f ? kx : 1e9f;
        const float cast = xk0[i] + n * xk1[i] + n2 * xk2[i];
        const float moved = softOf<P>(xf[i], k * r[i]) + cast;
        const float scaled = clock[i] > 0 ? tY[i] * clock[i] : moved;
        t[i] = cross ? scaled : tY[i];
    }
    if (!p) return;
    const float *pf = p->fp.data(), *pc0 = p->c0.data(), *pc1 = p->c1.data(), *pc2 = p->c2.data(), *pm0 = p->m0.data(),
                *pm1 = p->m1.data(), *pm2 = p->m2.data(), *pfx = p->fixed.data(), *pk0 = p->k0.data(),
                *pk1 = p->k1.data(), *pk2 = p->k2.data();
    for (size_t i = 0; i < count; ++i) {
        const float cx = xc0[i] + n * xc1[i] + n2 * xc2[i], mx = xm0[i] + n * xm1[i] + n2 * xm2[i];
        const float kx = (cx > mx ? cx : mx) + xfx[i];
        const float cp = pc0[i] + n * pc1[i] + n2 * pc2[i], mp = pm0[i] + n * pm1[i] + n2 * pm2[i];
        const float kp = (cp > mp ? cp : mp) + pfx[i];
        const float atX = softOf<P>(xf[i], kx < 1e9f ? kx : 1e9f) + xk0[i] + n * xk1[i] + n2 * xk2[i];
        const float atP = softOf<P>(pf[i], kp < 1e9f ? kp : 1e9f) + pk0[i] + n * pk1[i] + n2 * pk2[i];
        t[i] *= atP / atX;
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)  // ifunc
#define TRAINSCOPE_LAW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TRAINSCOPE_LAW_CLONES
#endif
TRAINSCOPE_LAW_CLONES void lawTimes4(const FloatRows& x, const FloatRows* p, const float* tY, const float* r,
                                     const float* clock, bool cross, size_t count, float n, float* t) {
    lawTimes<4>(x, p, tY, r, clock, cross, count, n, t);
}
TRAINSCOPE_LAW_CLONES void lawTimes2(const FloatRows& x, const FloatRows* p, const float* tY, const float* r,
                                     const float* clock, bool cross, size_t count, float n, float* t) {
    lawTimes<2>(x, p, tY, r, clock, cross, count, n, t);
}

std::vector<const TimeRow*> indexRows(const OperationTimes& t, size_t ops) {
    std::vector<const TimeRow*> i(2 * ops, nullptr);
    for (const TimeRow& r : t.forward) i[2 * size_t(r.op)] = &r;
    for (const TimeRow& r : t.backward) i[2 * size_t(r.op) + 1] = &r;
    return i;
}

}  // namespace

const OperationTimes& ProfileFit::originRows(TrainingPrecision c) const {
    if (c == rowsPrecision_) return origin_;
    std::unique_ptr<OperationTimes>& rows = commonRows_[size_t(c)];
    if (!rows) rows = std::make_unique<OperationTimes>(prepareOperationTimes(m_, *gpu_, c, table_));
    return *rows;
}

std::shared_ptr<const ProfileFit::OriginAtBatch> ProfileFit::originAt(TrainingPrecision c, double n) const {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    const std::pair<int, double> key{int(c), n};
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    if (cache_.size() >= 4096) cache_.clear();  // a GUI sweeps a few hundred batch sizes; drop the rest
    std::shared_ptr<const OriginAtBatch>& slot = cache_[key];
    const size_t ops = m_.ops.size();
    const std::vector<const TimeRow*> ym = indexRows(origin_, ops), yc = indexRows(originRows(c), ops);
    auto o = std::make_shared<OriginAtBatch>();
    o->t.assign(2 * ops, 0);
    o->err.assign(2 * ops, 0);
    o->r.assign(2 * ops, 1);
    o->grid.assign(2 * ops, 0);
    for (size_t i = 0; i < 2 * ops; ++i) {
        const MeasuredLaw* law =
            (i % 2 ? backward_ : forward_)[i / 2] ? &*(i % 2 ? backward_ : forward_)[i / 2] : nullptr;
        if (!law) continue;
        const TimeRow* m = ym[i];
        double t = evaluate(*law, n, unitsAt(*law, n, m ? m->kernelMs(n) : n), m ? rowAt(*m, n) : 1.0, o->err[i]);
        if (law->hasKernel) o->grid[i] = gridAt(*law, n);
        if (m && yc[i]) {
            const TimeRow& y = *yc[i];
            if (yc[i] != m) t *= rowAt(y, n) / rowAt(*m, n);
            // The origin's efficiency relative to the model (predictCrossShaped), with the
            // origin's architecture factor removed.
            const double kernel = inverseSoft(std::max(t - y.castMs.at(n), 1e-12), y.floorMs, y.softness);
            const double model = y.kernelMs(n) / y.architectureFactor;
            const double r = std::isfinite(kernel) && model > 0 ? kernel / model : 1.0;
            o->r[i] = power(std::clamp(r, 1 / y.maxRatio, y.maxRatio), y.alpha) / y.architectureFactor;
        }
        o->t[i] = t;
    }
    slot = o;
    return slot;
}

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
        xc_ = prepareOperationTimes(m_, target, common_, fit.table_);
        if (p != common_) xp_ = prepareOperationTimes(m_, target, p, fit.table_);
        precisionChange_ = p != fit.precision_;
        const size_t ops = m_.ops.size();
        const std::vector<const TimeRow*> ym = indexRows(fit.origin_, ops), xc = indexRows(xc_, ops),
                                          xp = p != common_ ? indexRows(xp_, ops) : xc;
        if (cross_ && origin.boostClockMHz.known() && target.boostClockMHz.known())
            clockRatio_ = *origin.boostClockMHz / *target.boostClockMHz;
        for (size_t i = 0; i < 2 * ops; ++i) {
            const MeasuredLaw* law = fit.law(int(i / 2), i % 2 == 1);
            if (!law && !xp[i]) continue;
            Entry e;
            e.index = i;
            e.law = law;
            e.analytic = ym[i] != nullptr && xp[i] != nullptr;
            e.xc = xc[i];
            e.xp = xp[i] != xc[i] ? xp[i] : nullptr;
            e.group = i % 2 ? 2 + regions.regionOf(int(i / 2)) : int(i / 2) < regions.lastSegmentStart ? 0 : 1;
            e.crossError = errors::crossClassError(m_.ops[i / 2].opClass);
            if (law && clockRatio_ > 0) e.targetWave = ProfileFit::waveSizeOn(*law, target);
            if (cross_) e.movedErrorSq += e.crossError * e.crossError;
            if (precisionChange_) e.movedErrorSq += errors::kProfilePrecision * errors::kProfilePrecision;
            entries_.push_back(e);
        }
        // The sums: measured layers with an analytic model in vectorised blocks (by softness,
        // sorted by group), the other layers as analytic rows, the rest one by one.
        std::stable_sort(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.group < b.group; });
        OperationTimes unmeasured;
        for (const Entry& e : entries_) {
            if (!e.law) {
                (e.index % 2 ? unmeasured.backward : unmeasured.forward).push_back(*(e.xp ? e.xp : e.xc));
                continue;
            }
            if (!e.analytic || (e.xc->softness != 4 && e.xc->softness != 2)) {
                loose_.push_back(e);
                continue;
            }
            LawBlock* b = nullptr;
            for (LawBlock& candidate : blocks_)
                if (candidate.softness == e.xc->softness) b = &candidate;
            if (!b) {
                blocks_.push_back({});
                b = &blocks_.back();
                b->softness = e.xc->softness;
            }
            if (b->runs.empty() || b->runs.back().group != e.group)
                b->runs.push_back({e.group, uint32_t(b->entries.size()), uint32_t(b->entries.size())});
            b->entries.push_back(e);
            b->runs.back().end = uint32_t(b->entries.size());
            b->x.add(*e.xc);
            if (e.xp) b->p.add(*e.xp);
        }
        for (LawBlock& b : blocks_) b.hasP = b.p.fp.size() == b.entries.size() && !b.entries.empty();
        // Rows are in graph order inside each list; the groups only sum them.
        analytic_ = std::make_unique<AnalyticLayerTimes>(m_, std::move(unmeasured), regions);
    }

    int regions() const override { return regions_.regions(); }

    void sums(double n, LayerSums& out) const override {
        analytic_->sums(n, out);  // the unmeasured layers (resets `out`)
        out.calibratedMs = 0;
        const std::shared_ptr<const ProfileFit::OriginAtBatch> o = fit_.originAt(common_, n);
        auto add = [&](int group, double ms, double err) {
            if (group >= 2) {
                out.backwardByRegion[size_t(group - 2)] += ms;
                out.backwardError += err;
            } else {
                (group == 0 ? out.forwardCheckpointed : out.forwardLast) += ms;
                out.forwardError += err;
            }
            out.calibratedMs += ms;
        };
        std::vector<float>& buffer = out.rowTimes;
        for (const LawBlock& b : blocks_) {
            const size_t count = b.entries.size();
            buffer.resize(4 * count);
            float *tY = buffer.data(), *r = tY + count, *clock = r + count, *t = clock + count;
            for (size_t i = 0; i < count; ++i) {
                const Entry& e = b.entries[i];
                tY[i] = float(o->t[e.index]);
                r[i] = float(o->r[e.index]);
                const bool small = e.targetWave > 0 && e.law->waveSize > 0 &&
                                   o->grid[e.index] <= std::min(e.law->waveSize, e.targetWave);
                clock[i] = small ? float(clockRatio_) : 0.0f;
            }
            (b.softness == 4 ? lawTimes4 : lawTimes2)(b.x, b.hasP ? &b.p : nullptr, tY, r, clock, cross_, count,
                                                      float(n), t);
            for (const Run& run : b.runs) {
                double ms = 0, err = 0;
                for (uint32_t i = run.begin; i < run.end; ++i) {
                    const Entry& e = b.entries[i];
                    const double measured = o->err[e.index];
                    ms += t[i];
                    err += t[i] * std::sqrt(measured * measured + e.movedErrorSq);
                }
                add(run.group, ms, err);
            }
        }
        for (const Entry& e : loose_) {
            double err = 0;
            const double t = time(e, *o, n, err);
            add(e.group, t, t * err);
        }
        double cv = 0;
        out.otherMs = fit_.otherMs(n, cv);
        double e = errors::measuredSpread(cv);
        if (cross_ || precisionChange_) e = errors::combine(e, errors::kProfileOther);
        out.otherError = std::abs(out.otherMs) * e;
    }

    std::vector<LayerTime> layers(double n) const override {
        const std::shared_ptr<const ProfileFit::OriginAtBatch> o = fit_.originAt(common_, n);
        std::vector<Entry> byOp = entries_;
        std::sort(byOp.begin(), byOp.end(), [](const Entry& a, const Entry& b) { return a.index < b.index; });
        std::vector<LayerTime> out;
        for (const Entry& e : byOp) {
            const size_t op = e.index / 2;
            if (out.empty() || out.back().op != int(op)) {
                LayerTime l;
                l.op = int(op);
                l.name = m_.ops[op].name;
                l.opClass = m_.ops[op].opClass;
                l.source =
                    m_.ops[op].opClass.empty() ? PredictionSource::Analytic : PredictionSource::ShippedCalibration;
                out.push_back(std::move(l));
            }
            double err = 0;
            const double t = time(e, *o, n, err);
            (e.index % 2 ? out.back().backwardMs : out.back().forwardMs) = Interval::relative(t, err);
            if (e.law) out.back().source = PredictionSource::MeasuredProfile;
        }
        return out;
    }

private:
    struct Entry {
        size_t index = 0;  // 2 op + pass
        const MeasuredLaw* law = nullptr;
        bool analytic = false;        // the op has analytic rows (it does work the model sees)
        const TimeRow* xc = nullptr;  // target at the common precision
        const TimeRow* xp = nullptr;  // target at the asked precision, when it differs
        int group = 0;                // as in LayerSums: 0, 1 forward; 2 + r backward region r
        double crossError = 0;
        double movedErrorSq = 0;  // squared relative error of moving it (cross path, precision)
        double targetWave = 0;
    };

    double time(const Entry& e, const ProfileFit::OriginAtBatch& o, double n, double& err) const {
        const TimeRow* xp = e.xp ? e.xp : e.xc;
        if (!e.law) {
            err = xp->relError;
            return rowAt(*xp, n);
        }
        double t = o.t[e.index];
        err = o.err[e.index];
        if (!e.analytic) return t;  // no analytic model of it (host-only work): as measured
        if (cross_) {
            if (e.targetWave > 0 && e.law->waveSize > 0 && o.grid[e.index] <= std::min(e.law->waveSize, e.targetWave))
                t *= clockRatio_;  // smaller than a wave on both: only the SM clock matters (Habitat)
            else
                t = soft(e.xc->floorMs, e.xc->kernelMs(n) * o.r[e.index], e.xc->softness) + e.xc->castMs.at(n);
            err = errors::combine(err, e.crossError);
        }
        if (e.xp) t *= rowAt(*e.xp, n) / rowAt(*e.xc, n);
        if (precisionChange_) err = errors::combine(err, errors::kProfilePrecision);
        return t;
    }

    const ProfileFit& fit_;
    const ModelAnalysis& m_;
    LayerRegions regions_;
    bool cross_ = false;
    bool precisionChange_ = false;
    TrainingPrecision common_ = TrainingPrecision::Fp32;
    OperationTimes xc_, xp_;
    double clockRatio_ = 0;       // measured GPU's boost clock / the target's (0: unknown, no clock rule)
    std::vector<Entry> entries_;  // every layer pass with a time, sorted by group

    struct Run {
        int group = 0;
        uint32_t begin = 0, end = 0;
    };
    struct LawBlock {  // measured passes with an analytic model, of one softness
        double softness = 4;
        std::vector<Entry> entries;
        std::vector<Run> runs;
        FloatRows x, p;  // the target's rows at the common and (hasP) at the asked precision
        bool hasP = false;
    };
    std::vector<LawBlock> blocks_;
    std::vector<Entry> loose_;                      // measured passes without an analytic model
    std::unique_ptr<AnalyticLayerTimes> analytic_;  // the passes the profile did not measure
};

std::unique_ptr<LayerTimeSource> ProfileFit::source(const GpuSpec& target, TrainingPrecision p,
                                                    const LayerRegions& regions) const {
    return std::make_unique<ProfileLayerTimes>(*this, target, p, regions);
}

}  // namespace ts::predictors
