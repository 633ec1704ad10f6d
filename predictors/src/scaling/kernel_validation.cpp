#include "trainscope/predictors/scaling/kernel_validation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "trainscope/predictors/scaling/kernel_fit.h"

namespace ts::predictors {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double ape(double pred, double actual) {
    const double e = std::abs(pred - actual) / actual;
    return std::isfinite(e) ? e : 1.0;
}

// Fractional errors grouped the ways the report shows them.
struct Collector {
    std::vector<double> all;
    std::map<std::string, std::vector<double>> byClass, byTarget, byPair;
    std::vector<std::string> classOrder;

    void add(const std::string& cls, const std::string& target, const std::string& pair, double e) {
        all.push_back(e);
        if (!byClass.count(cls)) classOrder.push_back(cls);
        byClass[cls].push_back(e);
        byTarget[target].push_back(e);
        if (!pair.empty()) byPair[pair].push_back(e);
    }
    PathSummary summary() {
        PathSummary s;
        s.overall = summarize("overall", std::move(all));
        for (const std::string& c : classOrder) s.classes.push_back(summarize(c, std::move(byClass[c])));
        for (auto& [k, v] : byTarget) s.targets.push_back(summarize(k, std::move(v)));
        for (auto& [k, v] : byPair) s.pairs.push_back(summarize(k, std::move(v)));
        return s;
    }
};

}  // namespace

ApeSummary summarize(std::string key, std::vector<double> apes) {
    ApeSummary s;
    s.key = std::move(key);
    s.n = int64_t(apes.size());
    if (apes.empty()) return s;
    double sum = 0;
    for (double e : apes) sum += e;
    s.meanPct = 100 * sum / double(apes.size());
    const size_t mid = apes.size() / 2;
    std::nth_element(apes.begin(), apes.begin() + mid, apes.end());
    double median = apes[mid];
    if (apes.size() % 2 == 0) median = 0.5 * (median + *std::max_element(apes.begin(), apes.begin() + mid));
    s.medianPct = 100 * median;
    return s;
}

ValidationReport validateKernels(const MeasurementSet& set, const ValidationOptions& options) {
    ValidationReport r;
    r.targetHostKnown = options.targetHostKnown;
    r.rows = set.rows;
    r.files = set.files.size();
    for (const UnknownDevice& u : set.unknownDevices)
        r.notes.push_back(u.file + ": device '" + u.device + "' is not in the GPU database; its " +
                          std::to_string(u.rows) + " rows were skipped (add it with --gpu-db)");
    Collector cross, model;
    for (const OperatorMeasurements& op : set.ops) {
        if (op.gpus.size() < 2) {
            r.notes.push_back(op.opClass + ": measured on one GPU only, nothing to validate");
            continue;
        }
        const PreparedOperator prep(op, set);
        for (size_t x = 0; x < op.gpus.size(); ++x) {
            std::vector<size_t> train;
            for (size_t g = 0; g < op.gpus.size(); ++g)
                if (g != x) train.push_back(g);
            const auto t0 = Clock::now();
            const ScalingParams p = prep.fit(train);
            r.fitSeconds += secondsSince(t0);
            if (train.size() < 2)
                r.notes.push_back(op.opClass + " on " + op.gpus[x].id +
                                  ": only one other GPU, so nothing to fit; default parameters used");
            const GpuOpStats est =
                options.targetHostKnown ? prep.ownStats(x) : prep.estimateFrom(train, p.floorQuantile);
            r.fitted.push_back({op.opClass, op.gpus[x].id, p, est});
            const auto t1 = Clock::now();
            const std::string& X = op.gpus[x].id;
            for (size_t c = 0; c < op.configs.size(); ++c) {
                if (!prep.measured(c, x)) continue;
                const double actual = prep.latency(c, x);
                const double modelOnly = prep.predictModelOnly(c, x, est, p);
                if (options.onPrediction) options.onPrediction({&op, c, nullptr, &op.gpus[x], modelOnly, actual});
                model.add(op.opClass, X, "", ape(modelOnly, actual));
                for (size_t y : train) {
                    if (!prep.measured(c, y)) continue;
                    const double predicted = prep.predictCross(c, y, prep.ownStats(y), x, est, p);
                    if (options.onPrediction)
                        options.onPrediction({&op, c, &op.gpus[y], &op.gpus[x], predicted, actual});
                    cross.add(op.opClass, X, op.gpus[y].id + " -> " + X, ape(predicted, actual));
                }
            }
            r.predictSeconds += secondsSince(t1);
        }
    }
    r.cross = cross.summary();
    r.modelOnly = model.summary();
    return r;
}

}  // namespace ts::predictors
