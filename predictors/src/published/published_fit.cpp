// Grid fit of the whole-iteration constants on published training throughput, with leave-one-
// model-out and leave-one-GPU-out validation (docs/prediction.md, "Fitting on whole runs").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

#include "trainscope/predictors/published/published_validation.h"

namespace ts::predictors {
namespace {

struct GridPoint {
    double conv = 1, memory = 1, grouped = 1;
    std::vector<PublishedPrediction> predictions;
};

// |ln(predicted / published)| capped at 1, so that one absurd row cannot steer the fit.
double loss(const PublishedPrediction& p) {
    if (!p.failure.empty() || !(p.predicted > 0)) return -1;
    return std::min(1.0, std::abs(std::log(p.predicted / p.measured)));
}

// The grid point with the least mean loss over the rows `use` accepts.
template <class Use>
const GridPoint& best(const std::vector<GridPoint>& grid, Use use) {
    const GridPoint* chosen = &grid.front();
    double least = std::numeric_limits<double>::infinity();
    for (const GridPoint& g : grid) {
        double sum = 0;
        int n = 0;
        for (const PublishedPrediction& p : g.predictions) {
            const double l = loss(p);
            if (l < 0 || !use(p)) continue;
            sum += l, ++n;
        }
        if (n > 0 && sum / n < least) least = sum / n, chosen = &g;
    }
    return *chosen;
}

}  // namespace

PublishedFitResult fitPublished(const PublishedPredictor& predictor, const GpuDatabase& db, const StreamModel& base) {
    std::vector<GridPoint> grid;
    for (int c = 5; c <= 10; ++c)
        for (int m = 5; m <= 10; ++m)
            for (double g : {0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0}) {
                StreamModel s = base;
                s.convEfficiency = c / 10.0;
                s.memoryEfficiency = m / 10.0;
                s.groupedConvEfficiency = g;
                grid.push_back({s.convEfficiency, s.memoryEfficiency, g, predictor.predict(s)});
            }
    PublishedFitResult r;
    const GridPoint& all = best(grid, [](const PublishedPrediction&) { return true; });
    r.convEfficiency = all.conv;
    r.memoryEfficiency = all.memory;
    r.groupedConvEfficiency = all.grouped;
    r.fitted = base;
    r.fitted.convEfficiency = all.conv;
    r.fitted.memoryEfficiency = all.memory;
    r.fitted.groupedConvEfficiency = all.grouped;
    std::vector<double> inSample, lomo, logo;
    for (const PublishedPrediction& p : all.predictions)
        if (loss(p) >= 0) inSample.push_back(p.error());
    r.inSample = summarise(inSample);

    // Leave one group out: the row's error at the constants fitted on every other group.
    auto heldOutErrors = [&](auto groupOf, std::vector<double>& errors) {
        std::map<std::string, const GridPoint*> chosen;
        const std::vector<PublishedPrediction>& rows = grid.front().predictions;
        for (size_t i = 0; i < rows.size(); ++i) {
            if (loss(rows[i]) < 0) continue;
            const std::string group = groupOf(rows[i]);
            auto [it, added] = chosen.try_emplace(group, nullptr);
            if (added) {
                it->second = &best(grid, [&](const PublishedPrediction& p) { return groupOf(p) != group; });
                r.heldOut[group] = {it->second->conv, it->second->memory, it->second->grouped};
            }
            const PublishedPrediction& p = it->second->predictions[i];
            if (loss(p) >= 0) errors.push_back(p.error());
        }
    };
    heldOutErrors([](const PublishedPrediction& p) { return "model: " + p.run->family; }, lomo);
    {  // the same held-out predictions, by precision, for the intervals
        const std::vector<PublishedPrediction>& rows = grid.front().predictions;
        for (size_t i = 0; i < rows.size(); ++i) {
            if (loss(rows[i]) < 0) continue;
            const auto [conv, memory, grouped] = r.heldOut.at("model: " + rows[i].run->family);
            for (const GridPoint& g : grid)
                if (g.conv == conv && g.memory == memory && g.grouped == grouped && loss(g.predictions[i]) >= 0)
                    r.leaveOneModelOutByPrecision[trainingPrecisionName(rows[i].run->scenario.precision)].push_back(
                        g.predictions[i].error());
        }
    }
    heldOutErrors([&](const PublishedPrediction& p) { return "gpu: " + db.get(p.run->gpuId).architecture; }, logo);
    r.leaveOneModelOut = summarise(lomo);
    r.leaveOneGpuOut = summarise(logo);
    return r;
}

nlohmann::ordered_json publishedFitJson(const PublishedFitResult& f) {
    nlohmann::ordered_json held = nlohmann::ordered_json::object();
    for (const auto& [group, c] : f.heldOut)
        held[group] = {{"conv_efficiency", std::get<0>(c)},
                       {"memory_efficiency", std::get<1>(c)},
                       {"grouped_conv_efficiency", std::get<2>(c)}};
    return {{"conv_efficiency", f.convEfficiency},
            {"memory_efficiency", f.memoryEfficiency},
            {"grouped_conv_efficiency", f.groupedConvEfficiency},
            {"in_sample", errorSummaryJson(f.inSample)},
            {"leave_one_model_out", errorSummaryJson(f.leaveOneModelOut)},
            {"leave_one_gpu_out", errorSummaryJson(f.leaveOneGpuOut)},
            {"held_out", held}};
}

nlohmann::ordered_json iterationErrorTable(const PublishedFitResult& f, const std::string& generator) {
    constexpr double kCoverage = 0.8;
    auto relative = [&](std::vector<double> errors) {
        std::vector<double> logs;
        for (double e : errors) logs.push_back(std::abs(std::log1p(e)));
        std::sort(logs.begin(), logs.end());
        const double q = logs[std::min(logs.size() - 1, size_t(std::ceil(kCoverage * double(logs.size())) - 1))];
        return std::expm1(q);
    };
    nlohmann::ordered_json by = nlohmann::ordered_json::object();
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    std::vector<double> all;
    for (const auto& [precision, errors] : f.leaveOneModelOutByPrecision) {
        by[precision] = relative(errors);
        counts[precision] = errors.size();
        all.insert(all.end(), errors.begin(), errors.end());
    }
    return {{"format", "trainscope-iteration-errors"},
            {"version", 1},
            {"generator", generator},
            {"method",
             "Per precision: the relative error e such that [v / (1 + e), v (1 + e)] holds 80% of the "
             "leave-one-model-out predictions of NVIDIA's published PyTorch training throughput (each model "
             "family predicted with the whole-iteration constants fitted without it). Precisions without "
             "published rows take the value over all rows."},
            {"coverage", kCoverage},
            {"by_precision", by},
            {"all", all.empty() ? 0.0 : relative(all)},
            {"rows", counts}};
}

void printPublishedFit(std::ostream& out, const PublishedFitResult& f) {
    char buf[200];
    out << "\nFit of the constants only whole runs tell (grid: convolution 0.5-1.0, memory 0.5-1.0, grouped "
           "convolution 0.03-1.0)\n";
    std::snprintf(buf, sizeof buf,
                  "  fitted on every row: conv_efficiency %.1f, memory_efficiency %.1f, grouped_conv_efficiency %.2f\n",
                  f.convEfficiency, f.memoryEfficiency, f.groupedConvEfficiency);
    out << buf;
    out << "                                   n      mean    median    signed\n";
    for (const auto& [name, s] : {std::pair<const char*, const ErrorSummary&>{"in sample", f.inSample},
                                  {"leave one model out", f.leaveOneModelOut},
                                  {"leave one GPU out", f.leaveOneGpuOut}}) {
        std::snprintf(buf, sizeof buf, "  %-28s %5d %9.1f%% %9.1f%% %+9.1f%%\n", name, s.n, s.meanAbsPct,
                      s.medianAbsPct, s.meanSignedPct);
        out << buf;
    }
    out << "  constants fitted without each group:\n";
    for (const auto& [group, c] : f.heldOut) {
        std::snprintf(buf, sizeof buf, "    %-50.50s conv %.1f, memory %.1f, grouped %.2f\n", group.c_str(),
                      std::get<0>(c), std::get<1>(c), std::get<2>(c));
        out << buf;
    }
}

}  // namespace ts::predictors
