#include "trainscope/predictors/iteration_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "trainscope/predictors/prediction_errors.h"

namespace ts::predictors {

int LayerRegions::regionOf(int op) const {
    for (size_t j = 0; j < bucketFirstOp.size(); ++j)
        if (op >= bucketFirstOp[j]) return int(j);
    return int(bucketFirstOp.size());
}

void LayerSums::reset(int regions) {
    forwardCheckpointed = forwardLast = forwardError = backwardError = calibratedMs = otherMs = otherError = 0;
    backwardByRegion.assign(size_t(regions), 0.0);
}

AnalyticLayerTimes::AnalyticLayerTimes(const ModelAnalysis& m, OperationTimes times, const LayerRegions& regions)
    : m_(m), times_(std::move(times)), regions_(regions.regions()) {
    const OperationTimes& t = times_;
    using Key = std::array<double, 13>;
    std::map<std::pair<int, double>, size_t> blockIndex;  // (group, softness)
    std::vector<std::map<Key, size_t>> rowIndex;
    auto add = [&](const TimeRow& r, int group) {
        auto [bi, newBlock] = blockIndex.try_emplace({group, r.softness}, blocks_.size());
        if (newBlock) {
            blocks_.push_back({});
            blocks_.back().group = group;
            blocks_.back().softness = r.softness;
            rowIndex.emplace_back();
        }
        Block& b = blocks_[bi->second];
        const Key key = {r.floorMs,
                         r.computeMs.c0,
                         r.computeMs.c1,
                         r.computeMs.c2,
                         r.memoryMs.c0,
                         r.memoryMs.c1,
                         r.memoryMs.c2,
                         r.fixedMs,
                         r.castMs.c0,
                         r.castMs.c1,
                         r.castMs.c2,
                         r.relError,
                         r.calibrated ? 1.0 : 0.0};
        auto [ri, newRow] = rowIndex[bi->second].try_emplace(key, b.weight.size());
        if (newRow) {
            b.floorPow.push_back(std::pow(r.floorMs, r.softness));
            b.c0.push_back(r.computeMs.c0), b.c1.push_back(r.computeMs.c1), b.c2.push_back(r.computeMs.c2);
            b.m0.push_back(r.memoryMs.c0), b.m1.push_back(r.memoryMs.c1), b.m2.push_back(r.memoryMs.c2);
            b.fixed.push_back(r.fixedMs);
            b.k0.push_back(r.castMs.c0), b.k1.push_back(r.castMs.c1), b.k2.push_back(r.castMs.c2);
            b.weight.push_back(0), b.weightError.push_back(0), b.weightCalibrated.push_back(0);
        }
        const size_t i = ri->second;
        b.weight[i] += 1;
        b.weightError[i] += r.relError;
        b.weightCalibrated[i] += r.calibrated ? 1 : 0;
    };
    for (const TimeRow& r : t.forward) add(r, r.op < regions.lastSegmentStart ? 0 : 1);
    for (const TimeRow& r : t.backward) add(r, 2 + regions.regionOf(r.op));
}

std::vector<LayerTime> AnalyticLayerTimes::layers(double n) const {
    std::vector<LayerTime> out;
    out.reserve(times_.forward.size());
    size_t b = 0;
    for (const TimeRow& f : times_.forward) {
        const AnalyzedOp& op = m_.ops[size_t(f.op)];
        LayerTime l;
        l.op = f.op;
        l.name = op.name;
        l.opClass = op.opClass;
        l.source = f.calibrated ? PredictionSource::ShippedCalibration : PredictionSource::Analytic;
        l.forwardMs = Interval::relative(f.at(n), f.relError);
        if (b < times_.backward.size() && times_.backward[b].op == f.op) {
            l.backwardMs = Interval::relative(times_.backward[b].at(n), times_.backward[b].relError);
            ++b;
        }
        out.push_back(std::move(l));
    }
    return out;
}

size_t AnalyticLayerTimes::distinctRows() const {
    size_t n = 0;
    for (const Block& b : blocks_) n += b.weight.size();
    return n;
}

namespace {

// Sum of w t, w e t and w_cal t over a block, t = soft_p(floor, max(compute, memory) + fixed) + cast.
// The loops are branch-free per softness so that the compiler vectorises them.
template <int P>
void sumBlock(const double* fp, const double* c0, const double* c1, const double* c2, const double* m0,
              const double* m1, const double* m2, const double* fixed, const double* k0, const double* k1,
              const double* k2, const double* w, const double* we, const double* wc, size_t count, double n,
              double softness, double& total, double& error, double& calibrated) {
    double t0 = 0, t1 = 0, t2 = 0;
    const double n2 = n * n;
    for (size_t i = 0; i < count; ++i) {
        const double compute = c0[i] + n * c1[i] + n2 * c2[i];
        const double memory = m0[i] + n * m1[i] + n2 * m2[i];
        const double k = (compute > memory ? compute : memory) + fixed[i];
        double soft;
        if constexpr (P == 4) {
            const double k2v = k * k;
            soft = std::sqrt(std::sqrt(fp[i] + k2v * k2v));
        } else if constexpr (P == 2) {
            soft = std::sqrt(fp[i] + k * k);
        } else {
            soft = std::pow(fp[i] + std::pow(k, softness), 1.0 / softness);
        }
        const double t = soft + k0[i] + n * k1[i] + n2 * k2[i];
        t0 += w[i] * t;
        t1 += we[i] * t;
        t2 += wc[i] * t;
    }
    total += t0;
    error += t1;
    calibrated += t2;
}

}  // namespace

void AnalyticLayerTimes::sums(double n, LayerSums& out) const {
    out.reset(regions_);
    for (const Block& b : blocks_) {
        double total = 0, error = 0, calibrated = 0;
        const size_t count = b.weight.size();
        auto run = [&](auto tag) {
            sumBlock<decltype(tag)::value>(b.floorPow.data(), b.c0.data(), b.c1.data(), b.c2.data(), b.m0.data(),
                                           b.m1.data(), b.m2.data(), b.fixed.data(), b.k0.data(), b.k1.data(),
                                           b.k2.data(), b.weight.data(), b.weightError.data(),
                                           b.weightCalibrated.data(), count, n, b.softness, total, error, calibrated);
        };
        if (b.softness == 4)
            run(std::integral_constant<int, 4>{});
        else if (b.softness == 2)
            run(std::integral_constant<int, 2>{});
        else
            run(std::integral_constant<int, 0>{});
        out.calibratedMs += calibrated;
        if (b.group == 0)
            out.forwardCheckpointed += total, out.forwardError += error;
        else if (b.group == 1)
            out.forwardLast += total, out.forwardError += error;
        else
            out.backwardByRegion[size_t(b.group - 2)] += total, out.backwardError += error;
    }
}

IterationTimes evaluateIteration(const LayerTimeSource& source, const IterationSetup& setup, double n, LayerSums& s) {
    source.sums(n, s);
    IterationTimes it;
    const double forward = s.forwardCheckpointed + s.forwardLast;
    double backward = 0;
    for (double b : s.backwardByRegion) backward += b;
    const double recompute = setup.checkpointing ? s.forwardCheckpointed : 0;
    const double forwardE = forward > 0 ? s.forwardError / forward : 0;
    const double backwardE = backward > 0 ? s.backwardError / backward : 0;

    double exposed = 0;
    if (setup.gpus > 1 && !setup.bucketCommMs.empty()) {
        // Recomputation happens inside backward, segment by segment: spread it in proportion.
        const double stretch = backward > 0 ? (backward + recompute) / backward : 1;
        std::vector<double> ready(setup.bucketCommMs.size());
        double done = 0;
        for (size_t j = 0; j < ready.size(); ++j) {
            done += s.backwardByRegion[j] * stretch;
            ready[j] = done;
        }
        exposed = exposedCommunicationMs(ready, setup.bucketCommMs, backward + recompute);
    }
    const double iteration = forward + backward + recompute + exposed + setup.optimizerMs + s.otherMs;
    const double absError = s.forwardError + s.backwardError + recompute * forwardE +
                            setup.optimizerMs * errors::kOptimizerStep + exposed * errors::kCommunication +
                            s.otherError;
    it.forwardMs = Interval::relative(forward, forwardE);
    it.backwardMs = Interval::relative(backward, backwardE);
    it.recomputeMs = Interval::relative(recompute, forwardE);
    it.optimizerMs = Interval::relative(setup.optimizerMs, errors::kOptimizerStep);
    it.communicationMs = Interval::relative(exposed, errors::kCommunication);
    it.otherMs = Interval::relative(s.otherMs, s.otherMs != 0 ? std::abs(s.otherError / s.otherMs) : 0);
    it.iterationMs = Interval::relative(iteration, iteration > 0 ? absError / iteration : 0);
    it.calibratedShare = iteration > 0 ? s.calibratedMs / iteration : 0;
    return it;
}

}  // namespace ts::predictors
