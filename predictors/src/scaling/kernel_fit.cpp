#include "trainscope/predictors/scaling/kernel_fit.h"

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
                    for (double alpha : {0.5, 0.75, 1.0})
                        for (double maxRatio : {10.0, 1.5}) {
                            ScalingParams s;
                            s.maxRatio = maxRatio;
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
                        for (double tau : {0.0, 20.0, 40.0, 80.0, 160.0})
                            for (double maxRatio : {10.0, 1.5}) {
                                if (!structured && n0 != 0) continue;        // the roofline form has no n0
                                if (structured && maxRatio != 10) continue;  // never chosen: keep the search short
                                ScalingParams s;
                                s.maxRatio = maxRatio;
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
    return softMax(targetStats.floorMs, k * architectureFactor(op_.gpus[target], p, op_.configs[config].work),
                   p.softness);
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
    if (workKindOf(op_.opClass) != WorkKind::Memory) {
        best.architectureLogOffset = fitArchitectureOffsets(train, best);
        best.shapeLogOffset = fitShapeOffsets(train, best);
    }
    return best;
}

namespace {

// Normal equations of the features e_arch(Z) - e_arch(Y) over A architectures, accumulated over
// predictions Y -> Z with their residuals ln(actual / predicted), clipped to [-1, 1].
class ArchitectureNormalEquations {
public:
    explicit ArchitectureNormalEquations(size_t architectures) : a_(architectures), ata_(a_ * a_, 0.0), atb_(a_, 0.0) {}

    void add(size_t az, size_t ay, double residual) {
        n_ += 1;
        if (az == ay) return;  // the feature vector is zero
        const double b = std::clamp(residual, -1.0, 1.0);
        ata_[az * a_ + az] += 1;
        ata_[ay * a_ + ay] += 1;
        ata_[az * a_ + ay] -= 1;
        ata_[ay * a_ + az] -= 1;
        atb_[az] += b;
        atb_[ay] -= b;
    }

    // Ridge solution of the mean normal equations, (AtA / n + (ridge + pseudoCount / n) I) w = Atb / n:
    // `ridge` keeps the unidentified mean at ~0, `pseudoCount` shrinks what few predictions say.
    std::vector<double> solve(double ridge, double pseudoCount) const {
        std::vector<double> ata = ata_, atb = atb_, w(a_, 0.0);
        if (n_ == 0) return w;
        for (size_t i = 0; i < a_; ++i) {
            for (size_t j = 0; j < a_; ++j) ata[i * a_ + j] /= n_;
            ata[i * a_ + i] += ridge + pseudoCount / n_;
            atb[i] /= n_;
        }
        // Gaussian elimination (symmetric positive definite, no pivoting needed).
        for (size_t i = 0; i < a_; ++i)
            for (size_t r = i + 1; r < a_; ++r) {
                const double f = ata[r * a_ + i] / ata[i * a_ + i];
                for (size_t j = i; j < a_; ++j) ata[r * a_ + j] -= f * ata[i * a_ + j];
                atb[r] -= f * atb[i];
            }
        for (size_t i = a_; i-- > 0;) {
            double s = atb[i];
            for (size_t j = i + 1; j < a_; ++j) s -= ata[i * a_ + j] * w[j];
            w[i] = s / ata[i * a_ + i];
        }
        return w;
    }

private:
    size_t a_;
    std::vector<double> ata_, atb_;
    double n_ = 0;
};

}  // namespace

std::vector<std::string> PreparedOperator::trainingArchitectures(const std::vector<size_t>& train,
                                                                 std::vector<size_t>& archOf) const {
    std::vector<std::string> archs;
    archOf.assign(gpuCount(), 0);
    for (size_t g : train) {
        auto it = std::find(archs.begin(), archs.end(), op_.gpus[g].architecture);
        archOf[g] = size_t(it - archs.begin());
        if (it == archs.end()) archs.push_back(op_.gpus[g].architecture);
    }
    return archs;
}

template <typename Fn>
void PreparedOperator::forEachTrainingPrediction(const std::vector<size_t>& train, const ScalingParams& p,
                                                 Fn&& fn) const {
    for (size_t z : train) {
        std::vector<size_t> avail;
        for (size_t g : train)
            if (g != z) avail.push_back(g);
        const GpuOpStats zs = estimateFrom(avail, p.floorQuantile);
        for (size_t y : avail)
            for (size_t c = 0; c < op_.configs.size(); ++c) {
                if (!measured(c, y) || !measured(c, z)) continue;
                const double res = std::log(latency(c, z) / predictCross(c, y, own_[y], z, zs, p));
                if (std::isfinite(res)) fn(c, y, z, res);
            }
    }
}

std::map<std::string, double> PreparedOperator::fitArchitectureOffsets(const std::vector<size_t>& train,
                                                                       const ScalingParams& p) const {
    constexpr double kRidge = 0.01;  // on the mean normal equations; keeps the unidentified mean at ~0
    std::vector<size_t> archOf;
    const std::vector<std::string> archs = trainingArchitectures(train, archOf);
    if (train.size() < 2 || archs.size() < 2) return {};
    ScalingParams base = p;
    base.architectureLogOffset.clear();
    base.shapeLogOffset.clear();
    ArchitectureNormalEquations eq(archs.size());
    forEachTrainingPrediction(train, base,
                              [&](size_t, size_t y, size_t z, double res) { eq.add(archOf[z], archOf[y], res); });
    const std::vector<double> w = eq.solve(kRidge, 0);
    std::map<std::string, double> out;
    for (size_t i = 0; i < archs.size(); ++i) out[archs[i]] = w[i];
    return out;
}

std::map<std::string, std::map<std::string, double>> PreparedOperator::fitShapeOffsets(const std::vector<size_t>& train,
                                                                                       const ScalingParams& p) const {
    // Each shape class has fewer predictions than the class as a whole: a stronger ridge, and a
    // pseudo-count so that a class with a handful of configurations stays near the constant factor.
    constexpr double kRidge = 0.25, kPseudoCount = 50;
    std::vector<size_t> archOf;
    const std::vector<std::string> archs = trainingArchitectures(train, archOf);
    if (train.size() < 2 || archs.size() < 2) return {};
    std::vector<std::string> shapeOf(op_.configs.size());
    for (size_t c = 0; c < op_.configs.size(); ++c)
        if (op_.configs[c].work.gemm) shapeOf[c] = gemmShapeClass(*op_.configs[c].work.gemm);
    ScalingParams base = p;  // with its constant factors: the shape terms fit what they leave
    base.shapeLogOffset.clear();
    std::map<std::string, ArchitectureNormalEquations> byShape;
    forEachTrainingPrediction(train, base, [&](size_t c, size_t y, size_t z, double res) {
        if (shapeOf[c].empty()) return;
        byShape.try_emplace(shapeOf[c], archs.size()).first->second.add(archOf[z], archOf[y], res);
    });
    std::map<std::string, std::map<std::string, double>> out;
    for (const auto& [shape, eq] : byShape) {
        const std::vector<double> w = eq.solve(kRidge, kPseudoCount);
        for (size_t i = 0; i < archs.size(); ++i) out[archs[i]][shape] = w[i];
    }
    return out;
}

}  // namespace ts::predictors
