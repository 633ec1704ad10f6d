// Layer times on a target GPU and precision from a fitted profile: the measured law on the
// measured GPU, moved through a precision both GPUs have (analytic ratio), across GPUs (the
// kernel-scaling cross path, as KernelScalingTable::predictCross computes it, or the clock for a
// kernel smaller than a wave on both), and to the target precision (analytic ratio). Layers the
// profile lacks take the analytic rows. Everything that depends only on the measured GPU is
// computed once per (batch size, precision) in ProfileFit::originAt and shared by every target;
// what depends only on the target GPU once per (GPU, batch size) and shared by its precisions.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "iteration/law_kernels.h"
#include "trainscope/predictors/scaling/kernel_scaling.h"
#include "trainscope/predictors/iteration/prediction_errors.h"
#include "trainscope/predictors/profile/profile_fit.h"

namespace ts::predictors {
namespace {

// pow for the alpha values the table uses, without pow().
inline double power(double r, double alpha) {
    if (alpha == 1) return r;
    if (alpha == 0.5) return std::sqrt(r);
    if (alpha == 0.75) return std::sqrt(r) * std::sqrt(std::sqrt(r));
    return std::pow(r, alpha);
}
inline double rowAt(const TimeRow& r, double n) {
    return softMax(r.floorMs, r.kernelMs(n), r.softness) + r.castMs.at(n);
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
            const double kernel = softInverse(std::max(t - y.castMs.at(n), 1e-12), y.floorMs, y.softness);
            const double model = y.kernelMs(n) / y.architectureFactor;
            const double r = std::isfinite(kernel) && model > 0 ? kernel / model : 1.0;
            o->r[i] = power(std::clamp(r, 1 / y.maxRatio, y.maxRatio), y.alpha) / y.architectureFactor;
        }
        o->t[i] = t;
    }
    o->tf.assign(o->t.begin(), o->t.end());
    o->rf.assign(o->r.begin(), o->r.end());
    o->gridf.assign(o->grid.begin(), o->grid.end());
    for (double e : o->err) o->errSqf.push_back(float(e * e));
    slot = o;
    return slot;
}

class ProfileLayerTimes : public LayerTimeSource {
public:
    ProfileLayerTimes(const ProfileFit& fit, const GpuSpec& target, TrainingPrecision p, const LayerRegions& regions,
                      const ProfileLayerTimes* sameGpu)
        : fit_(fit), m_(fit.m_), regions_(regions), cross_(!fit.sameGpu(target)) {
        const GpuSpec& origin = *fit.gpu_;
        const TrainingPrecision measured = fit.rowsPrecision_;
        // A precision both GPUs model: the measured one, else the target's, else fp32.
        common_ = measured;
        if (cross_ && unsupportedReason(target, measured))
            common_ = !unsupportedReason(origin, p) ? p : TrainingPrecision::Fp32;
        if (sameGpu && &sameGpu->fit_ == &fit && sameGpu->shared_->targetId == target.id &&
            sameGpu->common_ == common_ && sameGpu->cross_ == cross_ && sameRegions(sameGpu->regions_, regions))
            shared_ = sameGpu->shared_;
        else
            shared_ = buildShared(fit, target, common_, regions, cross_);
        if (p != common_) xp_ = prepareOperationTimes(m_, target, p, fit.table_);
        precisionChange_ = p != fit.precision_;
        const size_t ops = m_.ops.size();
        const std::vector<const TimeRow*> ym = indexRows(fit.origin_, ops), &xc = shared_->xcIndex,
                                          xp = p != common_ ? indexRows(xp_, ops) : xc;
        for (size_t i = 0; i < 2 * ops; ++i) {
            const MeasuredLaw* law = fit.law(int(i / 2), i % 2 == 1);
            if (!law && !xp[i]) continue;
            Entry e;
            e.index = i;
            e.law = law;
            e.analytic = ym[i] != nullptr && xc[i] != nullptr;
            e.xc = xc[i] ? xc[i] : xp[i];
            e.xp = xp[i] && xp[i] != e.xc ? xp[i] : nullptr;
            e.group = groupOf(i, regions);
            e.crossError = errors::crossClassError(m_.ops[i / 2].opClass);
            if (law && shared_->clockRatio > 0) e.targetWave = ProfileFit::waveSizeOn(*law, target);
            if (cross_) e.movedErrorSq += e.crossError * e.crossError;
            if (precisionChange_) e.movedErrorSq += errors::kProfilePrecision * errors::kProfilePrecision;
            entries_.push_back(e);
        }
        std::stable_sort(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.group < b.group; });
        // Measured passes outside the shared blocks go one by one; the unmeasured ones are
        // analytic rows at the asked precision.
        OperationTimes unmeasured;
        for (const Entry& e : entries_) {
            if (!e.law)
                (e.index % 2 ? unmeasured.backward : unmeasured.forward).push_back(*(e.xp ? e.xp : e.xc));
            else if (!inBlock(e))
                loose_.push_back(e);
        }
        analytic_ = std::make_unique<AnalyticLayerTimes>(m_, std::move(unmeasured), regions);
        // The blocks' rows at the asked precision (the common one's where the op has none there).
        if (p != common_)
            for (const TargetRows::Block& b : shared_->blocks) {
                FloatRows& rows = precisionRows_.emplace_back();
                for (uint32_t i : b.index) rows.add(*(xp[i] ? xp[i] : xc[i]));
            }
    }

    int regions() const override { return regions_.regions(); }

    void sums(double n, LayerSums& out) const override {
        analytic_->sums(n, out);  // the unmeasured layers (resets `out`)
        out.calibratedMs = 0;
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
        const TargetRows& s = *shared_;
        const float* common = values(kCommon, n, out);
        const float* errors = values(precisionChange_ ? kErrorMoved : kErrorKept, n, out);
        const float* inverseAtCommon = precisionRows_.empty() ? nullptr : values(kInverseAtCommon, n, out);
        std::vector<float>& buffer = out.rowTimes;
        for (size_t bi = 0; bi < s.blocks.size(); ++bi) {
            const TargetRows::Block& b = s.blocks[bi];
            const float* t = common + b.offset;
            if (inverseAtCommon) {
                buffer.resize(b.index.size());
                precisionMovedTimes(precisionRows_[bi], b.softness, t, inverseAtCommon + b.offset, b.index.size(),
                                    float(n), buffer.data());
                t = buffer.data();
            }
            std::vector<double>& runSums = out.scratch;
            runSums.resize(2 * b.runs.size());
            sumsWithError(t, errors + b.offset, b.runs.data(), b.runs.size(), runSums.data());
            for (size_t r = 0; r < b.runs.size(); ++r) add(int(b.runs[r].group), runSums[2 * r], runSums[2 * r + 1]);
        }
        if (!loose_.empty()) {
            const std::shared_ptr<const ProfileFit::OriginAtBatch> o = fit_.originAt(common_, n);
            for (const Entry& e : loose_) {
                double err = 0;
                const double t = time(e, *o, n, err);
                add(e.group, t, t * err);
            }
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
        bool analytic = false;        // the op has analytic rows on both GPUs (it does work the model sees)
        const TimeRow* xc = nullptr;  // target at the common precision
        const TimeRow* xp = nullptr;  // target at the asked precision, when it differs
        int group = 0;                // as in LayerSums: 0, 1 forward; 2 + r backward region r
        double crossError = 0;
        double movedErrorSq = 0;  // squared relative error of moving it (cross path, precision)
        double targetWave = 0;
    };

    // What the precisions of one target GPU share: its rows at the common precision and the
    // measured passes with an analytic model of softness 4 or 2, in blocks of one softness sorted
    // by group. Per batch size, their times at the common precision (one soft each) are computed
    // once into LayerSums::shared and reused by every precision of the GPU.
    struct TargetRows {
        uint64_t id = 0;  // names its values in LayerSums::shared
        std::string targetId;
        double clockRatio = 0;  // measured GPU's boost clock / the target's (0: unknown, no clock rule)
        OperationTimes xc;
        std::vector<const TimeRow*> xcIndex;  // per 2 op + pass
        using Run = RowUseRun;
        struct Block {
            int softness = 4;
            size_t offset = 0;             // of its passes in the per-batch values
            std::vector<uint32_t> index;   // 2 op + pass
            std::vector<float> crossSq;    // squared relative error of the cross path (0 on the measured GPU)
            std::vector<float> waveLimit;  // grid at or below which it is smaller than a wave on both (-1: none)
            std::vector<Run> runs;
            FloatRows x;
        };
        std::vector<Block> blocks;
        size_t passes = 0;
    };
    // The per-batch values, each `passes` long, in LayerSums::shared.values.
    enum Part : unsigned { kCommon, kErrorSq, kInverseAtCommon, kErrorKept, kErrorMoved, kParts };

    static int groupOf(size_t index, const LayerRegions& regions) {
        const int op = int(index / 2);
        return index % 2 ? 2 + regions.regionOf(op) : regions.forwardGroup(op);
    }
    static bool sameRegions(const LayerRegions& a, const LayerRegions& b) {
        return a.recomputed == b.recomputed && a.bucketFirstOp == b.bucketFirstOp;
    }
    bool inBlock(const Entry& e) const { return e.analytic && (e.xc->softness == 4 || e.xc->softness == 2); }

    static std::shared_ptr<const TargetRows> buildShared(const ProfileFit& fit, const GpuSpec& target,
                                                         TrainingPrecision common, const LayerRegions& regions,
                                                         bool cross) {
        static std::atomic<uint64_t> nextId{1};
        auto s = std::make_shared<TargetRows>();
        s->id = nextId++;
        s->targetId = target.id;
        const GpuSpec& origin = *fit.gpu_;
        if (cross && origin.boostClockMHz.known() && target.boostClockMHz.known())
            s->clockRatio = *origin.boostClockMHz / *target.boostClockMHz;
        s->xc = prepareOperationTimes(fit.m_, target, common, fit.table_);
        const size_t ops = fit.m_.ops.size();
        s->xcIndex = indexRows(s->xc, ops);
        const std::vector<const TimeRow*> ym = indexRows(fit.origin_, ops);
        struct Pass {
            int group;
            uint32_t index;
        };
        std::vector<Pass> passes;
        for (size_t i = 0; i < 2 * ops; ++i) {
            const TimeRow* x = s->xcIndex[i];
            if (fit.law(int(i / 2), i % 2 == 1) && ym[i] && x && (x->softness == 4 || x->softness == 2))
                passes.push_back({groupOf(i, regions), uint32_t(i)});
        }
        std::stable_sort(passes.begin(), passes.end(), [](const Pass& a, const Pass& b) { return a.group < b.group; });
        for (const Pass& pass : passes) {
            const TimeRow& x = *s->xcIndex[pass.index];
            TargetRows::Block* b = nullptr;
            for (TargetRows::Block& candidate : s->blocks)
                if (candidate.softness == int(x.softness)) b = &candidate;
            if (!b) {
                b = &s->blocks.emplace_back();
                b->softness = int(x.softness);
            }
            const uint32_t at = uint32_t(b->index.size());
            if (b->runs.empty() || int(b->runs.back().group) != pass.group)
                b->runs.push_back({uint32_t(pass.group), at, at});
            b->runs.back().end = at + 1;
            b->index.push_back(pass.index);
            const double crossError = cross ? errors::crossClassError(fit.m_.ops[pass.index / 2].opClass) : 0;
            b->crossSq.push_back(float(crossError * crossError));
            const MeasuredLaw& law = *fit.law(int(pass.index / 2), pass.index % 2 == 1);
            const double targetWave = s->clockRatio > 0 ? ProfileFit::waveSizeOn(law, target) : 0;
            b->waveLimit.push_back(targetWave > 0 && law.waveSize > 0 ? float(std::min(law.waveSize, targetWave))
                                                                      : -1.0f);
            b->x.add(x);
        }
        for (TargetRows::Block& b : s->blocks) {
            b.offset = s->passes;
            s->passes += b.index.size();
        }
        return s;
    }

    // Part `part` of the shared values at batch n, computed unless this GPU's source of another
    // precision already did at this batch size.
    const float* values(Part part, double n, LayerSums& out) const {
        const TargetRows& s = *shared_;
        LayerSums::SharedValues& sh = out.shared;
        if (sh.owner != s.id || sh.n != n) {
            sh.owner = s.id;
            sh.n = n;
            sh.ready = 0;
            sh.values.resize(kParts * s.passes);
        }
        float* v = sh.values.data();
        auto at = [&](Part p) { return v + p * s.passes; };
        if (sh.ready & (1u << part)) return at(part);
        if (part == kCommon || part == kErrorSq) {
            const std::shared_ptr<const ProfileFit::OriginAtBatch> o = fit_.originAt(common_, n);
            const OriginFigures origin{o->tf.data(), o->rf.data(), o->gridf.data()};
            for (const TargetRows::Block& b : s.blocks) {
                movedTimes(b.x, b.softness, b.index.data(), origin, b.waveLimit.data(), float(s.clockRatio), cross_,
                           b.index.size(), float(n), at(kCommon) + b.offset);
                gather(o->errSqf.data(), b.index.data(), b.index.size(), at(kErrorSq) + b.offset);
            }
            sh.ready |= (1u << kCommon) | (1u << kErrorSq);
        } else if (part == kInverseAtCommon) {
            for (const TargetRows::Block& b : s.blocks)
                inverseRowTimes(b.x, b.softness, float(n), at(kInverseAtCommon) + b.offset);
            sh.ready |= 1u << kInverseAtCommon;
        } else {
            const float* errSq = values(kErrorSq, n, out);
            const float precision =
                part == kErrorMoved ? float(errors::kProfilePrecision * errors::kProfilePrecision) : 0;
            for (const TargetRows::Block& b : s.blocks)
                quadrature(errSq + b.offset, b.crossSq.data(), precision, b.index.size(), at(part) + b.offset);
            sh.ready |= 1u << part;
        }
        return at(part);
    }

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
            const double clockRatio = shared_->clockRatio;
            if (e.targetWave > 0 && e.law->waveSize > 0 && o.grid[e.index] <= std::min(e.law->waveSize, e.targetWave))
                t *= clockRatio;  // smaller than a wave on both: only the SM clock matters (Habitat)
            else
                t = softMax(e.xc->floorMs, e.xc->kernelMs(n) * o.r[e.index], e.xc->softness) + e.xc->castMs.at(n);
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
    std::shared_ptr<const TargetRows> shared_;
    OperationTimes xp_;
    std::vector<FloatRows> precisionRows_;          // per shared block, at the asked precision (when not common)
    std::vector<Entry> entries_;                    // every layer pass with a time, sorted by group
    std::vector<Entry> loose_;                      // measured passes outside the shared blocks
    std::unique_ptr<AnalyticLayerTimes> analytic_;  // the passes the profile did not measure
};

std::unique_ptr<LayerTimeSource> ProfileFit::source(const GpuSpec& target, TrainingPrecision p,
                                                    const LayerRegions& regions, const LayerTimeSource* sameGpu) const {
    return std::make_unique<ProfileLayerTimes>(*this, target, p, regions,
                                               dynamic_cast<const ProfileLayerTimes*>(sameGpu));
}

}  // namespace ts::predictors
