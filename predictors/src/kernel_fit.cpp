#include "trainscope/predictors/kernel_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ts::predictors {
namespace {

constexpr size_t kSubsampleAbove = 5000;  // configurations; beyond this the search uses every third

// Host floor of one class on GPU g: the 3rd percentile of its latencies. Convolutions never get
// down to their floor (their smallest configurations run 60-100 us), so theirs is the floor of
// bmm on the same machine, when the set has it, else 0.
double floorOf(const OperatorMeasurements& op, size_t g, const MeasurementSet& set) {
    if (op.opClass == "conv") {
        const OperatorMeasurements* bmm = set.find("bmm");
        if (!bmm) return 0;
        for (size_t i = 0; i < bmm->gpus.size(); ++i)
            if (bmm->gpus[i].id == op.gpus[g].id) return floorOf(*bmm, i, set);
        return 0;
    }
    std::vector<double> t;
    for (const MeasuredConfig& c : op.configs)
        if (c.byGpu[g]) t.push_back(c.byGpu[g]->latencyMs);
    return t.empty() ? 0 : quantileOf(std::move(t), 0.03);
}

// Achieved fraction of datasheet bandwidth: median over the largest 10% of configurations (by bytes).
double memEffOf(const OperatorMeasurements& op, size_t g) {
    std::vector<double> bytes;
    for (const MeasuredConfig& c : op.configs) bytes.push_back(c.work.bytes);
    if (bytes.empty()) return GpuOpStats{}.memEff;
    const double big = quantileOf(bytes, 0.9);
    const double bw = *op.gpus[g].memoryBandwidthGBs * 1e9;
    std::vector<double> eff;
    for (const MeasuredConfig& c : op.configs)
        if (c.work.bytes >= big && c.byGpu[g]) eff.push_back(c.work.bytes / (c.byGpu[g]->latencyMs * 1e-3 * bw));
    return eff.empty() ? GpuOpStats{}.memEff : quantileOf(std::move(eff), 0.5);
}

}  // namespace

double quantileOf(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double h = (double(v.size()) - 1) * q;
    const size_t lo = size_t(std::floor(h));
    if (lo + 1 >= v.size()) return v.back();
    return v[lo] + (h - double(lo)) * (v[lo + 1] - v[lo]);
}

std::vector<ScalingParams> parameterGrid(WorkKind kind) {
    std::vector<ScalingParams> grid;
    if (kind == WorkKind::Memory) {
        for (double qf : {0.0, 0.5})
            for (double p : {2.0, 4.0, 8.0})
                for (double tau : {0.0, 2.0, 5.0})
                    for (double alpha : {0.5, 0.75, 1.0}) {
                        ScalingParams s;
                        s.floorQuantile = qf;
                        s.softness = p;
                        s.tauUs = tau;
                        s.alpha = alpha;
                        grid.push_back(s);
                    }
        return grid;
    }
    for (bool structured : {true, false})
        for (double qf : {0.0, 0.5})
            for (double wpt : {22.0, 26.0, 30.0, 0.0})
                for (double n0 : {0.0, 32.0})
                    for (double alpha : {0.5, 0.75, 1.0})
                        for (double tau : {0.0, 20.0, 40.0, 80.0, 160.0}) {
                            if (!structured && n0 != 0) continue;  // the roofline form has no n0
                            ScalingParams s;
                            s.tauUs = tau;
                            s.structured = structured;
                            s.floorQuantile = qf;
                            s.softness = 4;
                            s.wattsPerTflop16nm = wpt;
                            s.n0 = n0;
                            s.alpha = alpha;
                            grid.push_back(s);
                        }
    return grid;
}

PreparedOperator::PreparedOperator(const OperatorMeasurements& op, const MeasurementSet& set) : op_(op) {
    const size_t G = gpuCount();
    const bool memory = workKindOf(op.opClass) == WorkKind::Memory;
    for (size_t g = 0; g < G; ++g) {
        GpuOpStats s;
        s.floorMs = floorOf(op, g, set);
        if (memory) s.memEff = memEffOf(op, g);
        own_.push_back(s);
    }
    if (memory) return;  // memory-bound work has no tile-and-wave shape
    shapes_.resize(op.configs.size() * G * G);
    bare_.resize(op.configs.size() * G);
    for (size_t c = 0; c < op.configs.size(); ++c) {
        const MeasuredConfig& mc = op.configs[c];
        for (size_t g = 0; g < G; ++g) bare_[c * G + g] = kernelShape(mc.work, op.gpus[g]);
        for (size_t y = 0; y < G; ++y) {
            if (!mc.byGpu[y]) continue;
            const KernelWork launched = mc.launchedOn(y);
            for (size_t g = 0; g < G; ++g) shapes_[(c * G + y) * G + g] = kernelShape(launched, op.gpus[g]);
        }
    }
}

GpuOpStats PreparedOperator::estimateFrom(const std::vector<size_t>& known, double floorQuantile) const {
    GpuOpStats s;
    if (known.empty()) return s;
    std::vector<double> floors, effs;
    for (size_t g : known) {
        floors.push_back(own_[g].floorMs);
        effs.push_back(own_[g].memEff);
    }
    s.floorMs = quantileOf(floors, floorQuantile);
    s.memEff = quantileOf(effs, 0.5);
    return s;
}

double PreparedOperator::predictCross(size_t config, size_t origin, const GpuOpStats& originStats, size_t target,
                                      const GpuOpStats& targetStats, const ScalingParams& p) const {
    static const KernelShape kNone;
    const bool shaped = !shapes_.empty();
    return predictCrossShaped(op_.configs[config].work, latency(config, origin), op_.gpus[origin],
                              shaped ? shape(config, origin, origin) : kNone, originStats, op_.gpus[target],
                              shaped ? shape(config, origin, target) : kNone, targetStats, p);
}

double PreparedOperator::predictModelOnly(size_t config, size_t target, const GpuOpStats& targetStats,
                                          const ScalingParams& p) const {
    static const KernelShape kNone;
    const KernelShape& s = bare_.empty() ? kNone : bare_[config * gpuCount() + target];
    const double k = kernelTimeMs(op_.configs[config].work, s, op_.gpus[target], targetStats, p);
    return softMax(targetStats.floorMs, k * architectureFactor(op_.gpus[target], p), p.softness);
}

ScalingParams PreparedOperator::fit(const std::vector<size_t>& train) const {
    const std::vector<ScalingParams> grid = parameterGrid(workKindOf(op_.opClass));
    if (train.size() < 2) return grid.front();
    const size_t step = op_.configs.size() > kSubsampleAbove ? 3 : 1;
    // Pairs and their common configurations do not depend on the parameters: list them once.
    struct Pair {
        size_t y, z;
        std::vector<size_t> avail;
        std::vector<size_t> configs;
    };
    std::vector<Pair> pairs;
    for (size_t z : train) {
        std::vector<size_t> avail;
        for (size_t g : train)
            if (g != z) avail.push_back(g);
        for (size_t y : avail) {
            Pair pr{y, z, avail, {}};
            for (size_t c = 0; c < op_.configs.size(); c += step)
                if (measured(c, y) && measured(c, z)) pr.configs.push_back(c);
            if (!pr.configs.empty()) pairs.push_back(std::move(pr));
        }
    }
    double bestLoss = std::numeric_limits<double>::infinity();
    ScalingParams best = grid.front();
    for (const ScalingParams& p : grid) {
        double total = 0;
        for (const Pair& pr : pairs) {
            const GpuOpStats z = estimateFrom(pr.avail, p.floorQuantile);
            double sum = 0;
            size_t n = 0;
            for (size_t c : pr.configs) {
                const double e = std::abs(std::log(predictCross(c, pr.y, own_[pr.y], pr.z, z, p) / latency(c, pr.z)));
                if (std::isnan(e)) continue;
                sum += std::min(e, 1.0);
                ++n;
            }
            total += n ? sum / double(n) : 1.0;
        }
        const double loss = pairs.empty() ? 0 : total / double(pairs.size());
        if (loss < bestLoss) {
            bestLoss = loss;
            best = p;
        }
    }
    // Only cuBLAS/cuDNN classes: their kernels differ per architecture. Memory-bound classes run the
    // framework's own elementwise kernels everywhere; their residual is the host floor (fitting an
    // offset there made every one of them worse leave-one-GPU-out).
    if (workKindOf(op_.opClass) != WorkKind::Memory) best.architectureLogOffset = fitArchitectureOffsets(train, best);
    return best;
}

std::map<std::string, double> PreparedOperator::fitArchitectureOffsets(const std::vector<size_t>& train,
                                                                       const ScalingParams& p) const {
    constexpr double kRidge = 0.01;  // on the mean normal equations; keeps the unidentified mean at ~0
    std::vector<std::string> archs;
    std::vector<size_t> archOf(gpuCount(), 0);
    for (size_t g : train) {
        auto it = std::find(archs.begin(), archs.end(), op_.gpus[g].architecture);
        archOf[g] = size_t(it - archs.begin());
        if (it == archs.end()) archs.push_back(op_.gpus[g].architecture);
    }
    if (train.size() < 2 || archs.size() < 2) return {};
    ScalingParams base = p;
    base.architectureLogOffset.clear();
    const size_t A = archs.size();
    // Normal equations of the features e_arch(Z) - e_arch(Y), accumulated over every prediction.
    std::vector<double> ata(A * A, 0.0), atb(A, 0.0);
    double n = 0;
    for (size_t z : train) {
        std::vector<size_t> avail;
        for (size_t g : train)
            if (g != z) avail.push_back(g);
        const GpuOpStats zs = estimateFrom(avail, p.floorQuantile);
        for (size_t y : avail) {
            const size_t az = archOf[z], ay = archOf[y];
            for (size_t c = 0; c < op_.configs.size(); ++c) {
                if (!measured(c, y) || !measured(c, z)) continue;
                const double res = std::log(latency(c, z) / predictCross(c, y, own_[y], z, zs, base));
                if (!std::isfinite(res)) continue;
                n += 1;
                if (az == ay) continue;  // the feature vector is zero
                const double b = std::clamp(res, -1.0, 1.0);
                ata[az * A + az] += 1;
                ata[ay * A + ay] += 1;
                ata[az * A + ay] -= 1;
                ata[ay * A + az] -= 1;
                atb[az] += b;
                atb[ay] -= b;
            }
        }
    }
    if (n == 0) return {};
    for (size_t i = 0; i < A; ++i) {
        for (size_t j = 0; j < A; ++j) ata[i * A + j] /= n;
        ata[i * A + i] += kRidge;
        atb[i] /= n;
    }
    // Gaussian elimination (symmetric positive definite, no pivoting needed).
    for (size_t i = 0; i < A; ++i)
        for (size_t r = i + 1; r < A; ++r) {
            const double f = ata[r * A + i] / ata[i * A + i];
            for (size_t j = i; j < A; ++j) ata[r * A + j] -= f * ata[i * A + j];
            atb[r] -= f * atb[i];
        }
    std::vector<double> w(A, 0.0);
    for (size_t i = A; i-- > 0;) {
        double s = atb[i];
        for (size_t j = i + 1; j < A; ++j) s -= ata[i * A + j] * w[j];
        w[i] = s / ata[i * A + i];
    }
    std::map<std::string, double> out;
    for (size_t i = 0; i < A; ++i) out[archs[i]] = w[i];
    return out;
}

}  // namespace ts::predictors
