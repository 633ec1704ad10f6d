#include "trainscope/predictors/iteration/iteration_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "trainscope/predictors/iteration/prediction_errors.h"

namespace ts::predictors {

int LayerRegions::regionOf(int op) const {
    for (size_t j = 0; j < bucketFirstOp.size(); ++j)
        if (op >= bucketFirstOp[j]) return int(j);
    return int(bucketFirstOp.size());
}

void LayerSums::reset(int regions) {
    forwardCheckpointed = forwardLast = forwardError = backwardError = calibratedMs = otherMs = otherError = 0;
    hostForwardCheckpointed = hostForwardLast = 0;
    backwardByRegion.assign(size_t(regions), 0.0);
    hostBackwardByRegion.assign(size_t(regions), 0.0);
}

AnalyticLayerTimes::AnalyticLayerTimes(const ModelAnalysis& m, OperationTimes times, const LayerRegions& regions)
    : m_(m), times_(std::move(times)), regions_(regions.regions()) {
    using Key = std::array<double, 15>;
    struct Use {
        uint32_t group, row;
        double weight, error, calibrated;
    };
    std::map<double, size_t> blockIndex;  // by softness
    std::vector<std::map<Key, uint32_t>> rowIndex;
    std::vector<std::map<std::pair<uint32_t, uint32_t>, Use>> uses;  // (group, row) -> use
    auto add = [&](const TimeRow& r, uint32_t group) {
        auto [bi, newBlock] = blockIndex.try_emplace(r.softness, blocks_.size());
        if (newBlock) {
            blocks_.push_back({});
            blocks_.back().softness = r.softness;
            rowIndex.emplace_back();
            uses.emplace_back();
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
                         r.waveMs,
                         r.splitWaveMs,
                         r.castMs.c0,
                         r.castMs.c1,
                         r.castMs.c2,
                         r.relError,
                         r.calibrated ? 1.0 : 0.0};
        auto [ri, newRow] = rowIndex[bi->second].try_emplace(key, uint32_t(b.floorPow.size()));
        if (newRow) {
            b.floorPow.push_back(float(std::pow(r.floorMs, r.softness)));
            b.c0.push_back(float(r.computeMs.c0)), b.c1.push_back(float(r.computeMs.c1));
            b.c2.push_back(float(r.computeMs.c2));
            b.m0.push_back(float(r.memoryMs.c0)), b.m1.push_back(float(r.memoryMs.c1));
            b.m2.push_back(float(r.memoryMs.c2));
            b.fixed.push_back(float(r.fixedMs));
            b.wave.push_back(float(r.waveMs));
            b.split.push_back(float(r.splitWaveMs));
            b.k0.push_back(float(r.castMs.c0)), b.k1.push_back(float(r.castMs.c1)), b.k2.push_back(float(r.castMs.c2));
        }
        auto [ui, newUse] = uses[bi->second].try_emplace({group, ri->second}, Use{group, ri->second, 0, 0, 0});
        ui->second.weight += 1;
        ui->second.error += r.relError;
        ui->second.calibrated += r.calibrated ? 1 : 0;
        hostByGroup_[group] += r.hostMs;
    };
    hostByGroup_.assign(size_t(2 + regions_), 0.0);
    for (const TimeRow& r : times_.forward) add(r, uint32_t(regions.forwardGroup(r.op)));
    for (const TimeRow& r : times_.backward) add(r, 2 + uint32_t(regions.regionOf(r.op)));
    for (size_t bi = 0; bi < blocks_.size(); ++bi) {
        Block& b = blocks_[bi];
        for (const auto& [key, u] : uses[bi]) {  // ordered by group
            if (b.runs.empty() || b.runs.back().group != u.group)
                b.runs.push_back({u.group, uint32_t(b.useRow.size()), uint32_t(b.useRow.size())});
            b.useRow.push_back(u.row);
            b.useWeight.push_back(u.weight);
            b.useError.push_back(u.error);
            b.useCalibrated.push_back(u.calibrated);
            b.runs.back().end = uint32_t(b.useRow.size());
        }
    }
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
        l.hostForwardMs = f.hostMs;
        if (b < times_.backward.size() && times_.backward[b].op == f.op) {
            l.backwardMs = Interval::relative(times_.backward[b].at(n), times_.backward[b].relError);
            l.hostBackwardMs = times_.backward[b].hostMs;
            ++b;
        }
        out.push_back(std::move(l));
    }
    return out;
}

size_t AnalyticLayerTimes::distinctRows() const {
    size_t n = 0;
    for (const Block& b : blocks_) n += b.floorPow.size();
    return n;
}

namespace {

// t = soft_p(floor, max(tiled, memory) + fixed) + cast for every row of a block, written to `t`
// (tiled: TimeRow::tiledMs).
// Branch-free per softness so that the compiler vectorises it (this file is built with
// -fno-math-errno for that).
template <int P>
[[gnu::always_inline]] inline void rowTimes(const float* __restrict fp, const float* __restrict c0,
                                            const float* __restrict c1, const float* __restrict c2,
                                            const float* __restrict m0, const float* __restrict m1,
                                            const float* __restrict m2, const float* __restrict fixed,
                                            const float* __restrict wave, const float* __restrict split,
                                            const float* __restrict k0,
                                            const float* __restrict k1, const float* __restrict k2, size_t count,
                                            float n, float softness, float* __restrict t) {
    const float n2 = n * n;
    for (size_t i = 0; i < count; ++i) {
        const float compute = c0[i] + n * c1[i] + n2 * c2[i];
        const float memory = m0[i] + n * m1[i] + n2 * m2[i];
        // At least one wave, and half a wave of tail beyond the work at the full rate; a split
        // reduction's wave where the tiles do not fill the GPU.
        const float q = compute >= wave[i] ? wave[i] : (compute > split[i] ? compute : split[i]);
        const float tail = compute + 0.5f * q;
        const float quantised = tail > split[i] ? tail : split[i];
        // Capped so that k^4 stays finite in single precision (1e9 ms is 11 days).
        const float kernel = (quantised > memory ? quantised : memory) + fixed[i];
        const float k = kernel < 1e9f ? kernel : 1e9f;
        float soft;
        if constexpr (P == 4) {
            const float kk = k * k;
            soft = std::sqrt(std::sqrt(fp[i] + kk * kk));
        } else if constexpr (P == 2) {
            soft = std::sqrt(fp[i] + k * k);
        } else {
            soft = std::pow(fp[i] + std::pow(k, softness), 1.0f / softness);
        }
        t[i] = soft + k0[i] + n * k1[i] + n2 * k2[i];
    }
}

// One clone per instruction set, chosen when the library loads: AVX2 evaluates eight rows at once.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)  // ifunc
#define TRAINSCOPE_ROW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TRAINSCOPE_ROW_CLONES
#endif
#define TRAINSCOPE_ROW_ARGS                                                                                            \
    const float *fp, const float *c0, const float *c1, const float *c2, const float *m0, const float *m1,              \
        const float *m2, const float *fixed, const float *wave, const float *split, const float *k0, const float *k1, \
        const float *k2, \
        size_t count, float n, float softness, float *t
TRAINSCOPE_ROW_CLONES void rowTimes4(TRAINSCOPE_ROW_ARGS) {
    rowTimes<4>(fp, c0, c1, c2, m0, m1, m2, fixed, wave, split, k0, k1, k2, count, n, softness, t);
}
TRAINSCOPE_ROW_CLONES void rowTimes2(TRAINSCOPE_ROW_ARGS) {
    rowTimes<2>(fp, c0, c1, c2, m0, m1, m2, fixed, wave, split, k0, k1, k2, count, n, softness, t);
}
void rowTimesAny(TRAINSCOPE_ROW_ARGS) {
    rowTimes<0>(fp, c0, c1, c2, m0, m1, m2, fixed, wave, split, k0, k1, k2, count, n, softness, t);
}

// The weighted sums of each run of uses: time, time x error, calibrated time (3 per run in `out`).
TRAINSCOPE_ROW_CLONES void useSums(const float* __restrict t, const uint32_t* __restrict row,
                                   const float* __restrict weight, const float* __restrict error,
                                   const float* __restrict calibratedWeight, const RowUseRun* runs, size_t runCount,
                                   double* __restrict out) {
    for (size_t r = 0; r < runCount; ++r) {
        const size_t begin = runs[r].begin, end = runs[r].end;
        float m = 0, e = 0, c = 0;
        if (end - begin < 64) {  // short (a gradient bucket's few distinct rows): vector set-up costs more
            for (size_t j = begin; j < end; ++j) {
                const float tj = t[row[j]];
                m += weight[j] * tj;
                e += error[j] * tj;
                c += calibratedWeight[j] * tj;
            }
        } else {  // reassociated (omp simd): the order of a sum of layer times does not matter
#pragma omp simd reduction(+ : m, e, c)
            for (size_t j = begin; j < end; ++j) {
                const float tj = t[row[j]];
                m += weight[j] * tj;
                e += error[j] * tj;
                c += calibratedWeight[j] * tj;
            }
        }
        out[3 * r] = m, out[3 * r + 1] = e, out[3 * r + 2] = c;
    }
}

}  // namespace

void AnalyticLayerTimes::sums(double n, LayerSums& out) const {
    out.reset(regions_);
    out.hostForwardCheckpointed = hostByGroup_[0];
    out.hostForwardLast = hostByGroup_[1];
    for (int r = 0; r < regions_; ++r) out.hostBackwardByRegion[size_t(r)] = hostByGroup_[size_t(2 + r)];
    for (const Block& b : blocks_) {
        const size_t count = b.floorPow.size();
        if (out.rowTimes.size() < count) out.rowTimes.resize(count);
        float* t = out.rowTimes.data();
        const auto rows = b.softness == 4 ? rowTimes4 : b.softness == 2 ? rowTimes2 : rowTimesAny;
        rows(b.floorPow.data(), b.c0.data(), b.c1.data(), b.c2.data(), b.m0.data(), b.m1.data(), b.m2.data(),
             b.fixed.data(), b.wave.data(), b.split.data(), b.k0.data(), b.k1.data(), b.k2.data(), count, float(n), float(b.softness),
             t);
        double forwardCk = 0, forwardLast = 0, forwardErr = 0, backwardErr = 0, calibrated = 0;
        std::vector<double>& runSums = out.scratch;
        runSums.resize(3 * b.runs.size());
        useSums(t, b.useRow.data(), b.useWeight.data(), b.useError.data(), b.useCalibrated.data(), b.runs.data(),
                b.runs.size(), runSums.data());
        for (size_t r = 0; r < b.runs.size(); ++r) {
            const Run& run = b.runs[r];
            const double ms = runSums[3 * r], err = runSums[3 * r + 1], cal = runSums[3 * r + 2];
            calibrated += cal;
            if (run.group == 0)
                forwardCk += ms, forwardErr += err;
            else if (run.group == 1)
                forwardLast += ms, forwardErr += err;
            else
                out.backwardByRegion[run.group - 2] += ms, backwardErr += err;
        }
        out.forwardCheckpointed += forwardCk;
        out.forwardLast += forwardLast;
        out.forwardError += forwardErr;
        out.backwardError += backwardErr;
        out.calibratedMs += calibrated;
    }
}

namespace {

// When the last kernel of a sequence of stretches ends, for a host that issues stretch k in
// host[k] and a GPU that runs it in gpu[k], starting together with an idle GPU and a deep launch
// queue: the GPU starts a kernel once it is issued and the previous one is done, so the end is
// max over k of (host time to issue stretches before k) + (stretch k, bound by the slower of the
// two) + (GPU time of the stretches after k). Exact for one kernel per stretch; for longer ones
// it assumes host and GPU work are spread evenly within a stretch.
double streamEndMs(const double* host, const double* gpu, size_t count) {
    double after = 0;
    for (size_t k = 0; k < count; ++k) after += gpu[k];
    double before = 0, end = 0;
    for (size_t k = 0; k < count; ++k) {
        after -= gpu[k];
        end = std::max(end, before + std::max(host[k], gpu[k]) + after);
        before += host[k];
    }
    return end;
}

}  // namespace

IterationTimes evaluateIteration(const LayerTimeSource& source, const IterationSetup& setup, double n, LayerSums& s) {
    source.sums(n, s);
    IterationTimes it;
    const double forward = s.forwardCheckpointed + s.forwardLast;
    double backward = 0;
    for (double b : s.backwardByRegion) backward += b;
    const double recompute = setup.checkpointing ? s.forwardCheckpointed : 0;
    const double recomputeHost = setup.checkpointing ? s.hostForwardCheckpointed : 0;
    const double forwardE = forward > 0 ? s.forwardError / forward : 0;
    const double backwardE = backward > 0 ? s.backwardError / backward : 0;

    // Stretches in execution order: the forward's two groups, backward region by region
    // (recomputation happens inside backward, segment by segment: spread in proportion), the step.
    const size_t regions = s.backwardByRegion.size();
    double host[64], gpu[64];
    std::vector<double> hostMore, gpuMore;
    double* h = host;
    double* g = gpu;
    if (regions + 3 > 64) {
        hostMore.resize(regions + 3), gpuMore.resize(regions + 3);
        h = hostMore.data(), g = gpuMore.data();
    }
    size_t count = 0;
    h[count] = s.hostForwardCheckpointed, g[count++] = s.forwardCheckpointed;
    h[count] = s.hostForwardLast, g[count++] = s.forwardLast;
    for (size_t r = 0; r < regions; ++r) {
        const double share = backward > 0 ? s.backwardByRegion[r] / backward : 1.0 / double(regions);
        h[count] = s.hostBackwardByRegion[r] + recomputeHost * share;
        g[count++] = s.backwardByRegion[r] + recompute * share;
    }
    double stream;
    if (setup.syncBeforeOptimizer) {
        stream = streamEndMs(h, g, count) + std::max(setup.optimizerHostMs, setup.optimizerMs);
    } else {
        h[count] = setup.optimizerHostMs, g[count++] = setup.optimizerMs;
        stream = streamEndMs(h, g, count);
    }
    const double gpuWork = forward + backward + recompute + setup.optimizerMs;
    const double hostBound = std::max(0.0, stream - gpuWork);

    double exposed = 0;
    if (setup.gpus > 1 && !setup.bucketCommMs.empty()) {
        const double stretch = backward > 0 ? (backward + recompute) / backward : 1;
        std::vector<double>& ready = s.scratch;
        ready.resize(setup.bucketCommMs.size());
        double done = 0;
        for (size_t j = 0; j < ready.size(); ++j) {
            done += s.backwardByRegion[j] * stretch;
            ready[j] = done;
        }
        exposed = exposedCommunicationMs(ready, setup.bucketCommMs, backward + recompute);
    }
    double gathers = 0;
    if (setup.forwardGatherMs > 0 || setup.backwardGatherMs > 0) {
        // The gathers share the link with the reduce-scatters: together they hide under backward.
        double reduced = 0;
        for (double c : setup.bucketCommMs) reduced += c;
        const double backwardExposed = std::max(exposed, reduced + setup.backwardGatherMs - (backward + recompute));
        gathers = setup.firstGatherMs + std::max(0.0, setup.forwardGatherMs - setup.firstGatherMs - (forward)) +
                  backwardExposed - exposed;
        exposed += gathers;
    }
    exposed += setup.afterStepGatherMs;
    const double iteration = gpuWork + hostBound + exposed + s.otherMs;
    const double absError = s.forwardError + s.backwardError + recompute * forwardE +
                            setup.optimizerMs * errors::kOptimizerStep + exposed * errors::kCommunication +
                            hostBound * errors::kHostDispatch + s.otherError;
    it.forwardMs = Interval::relative(forward, forwardE);
    it.backwardMs = Interval::relative(backward, backwardE);
    it.recomputeMs = Interval::relative(recompute, forwardE);
    it.optimizerMs = Interval::relative(setup.optimizerMs, errors::kOptimizerStep);
    it.communicationMs = Interval::relative(exposed, errors::kCommunication);
    it.hostBoundMs = Interval::relative(hostBound, errors::kHostDispatch);
    it.otherMs = Interval::relative(s.otherMs, s.otherMs != 0 ? std::abs(s.otherError / s.otherMs) : 0);
    it.iterationMs = Interval::relative(iteration, iteration > 0 ? absError / iteration : 0);
    // Of the time spent on work: waiting for the host is no operator class's.
    const double worked = iteration - hostBound;
    it.calibratedShare = worked > 0 ? s.calibratedMs / worked : 0;
    it.gatherExposedMs = gathers;
    return it;
}

}  // namespace ts::predictors
