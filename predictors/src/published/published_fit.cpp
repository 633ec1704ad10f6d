// Fit of the whole-iteration constants on published training throughput (coordinate descent over
// each constant's candidates), with leave-one-model-out and leave-one-GPU-out validation
// (docs/prediction.md, "Validation on published training throughput").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

#include "trainscope/core/errors.h"
#include "trainscope/predictors/published/published_validation.h"

namespace ts::predictors {
namespace {

// |ln(predicted / published)| capped at 1, so that one absurd row cannot steer the fit.
double loss(const PublishedPrediction& p) {
    if (!p.failure.empty() || !(p.predicted > 0)) return -1;
    return std::min(1.0, std::abs(std::log(p.predicted / p.measured)));
}

std::vector<double> steps(double from, double to, double step) {
    std::vector<double> v;
    for (double x = from; x <= to + 1e-9; x += step) v.push_back(std::round(x * 1000) / 1000);
    return v;
}

FitParameter tensorCore(bool tf32, const std::string& architecture) {
    FitParameter f;
    f.name = std::string(tf32 ? "tensor_core_tf32:" : "tensor_core_16:") + architecture;
    f.values = steps(0.3, 0.95, 0.05);
    f.architecture = architecture;
    std::map<std::string, double> StreamModel::*table =
        tf32 ? &StreamModel::tensorCoreEfficiencyTf32 : &StreamModel::tensorCoreEfficiency16;
    f.set = [table, architecture](StreamModel& s, double v) { (s.*table)[architecture] = v; };
    f.reset = [table, architecture](StreamModel& s, const StreamModel& base) {
        auto it = (base.*table).find(architecture);
        if (it == (base.*table).end())
            (s.*table).erase(architecture);
        else
            (s.*table)[architecture] = it->second;
    };
    f.get = [tf32, architecture](const StreamModel& s) {
        GpuSpec g;
        g.architecture = architecture;
        return s.burstTensorCoreEfficiency(g, tf32 ? TrainingPrecision::Tf32 : TrainingPrecision::AmpFp16);
    };
    return f;
}

FitParameter scalar(const std::string& name, std::vector<double> values, double StreamModel::*member) {
    FitParameter f;
    f.name = name;
    f.values = std::move(values);
    f.set = [member](StreamModel& s, double v) { s.*member = v; };
    f.reset = [member](StreamModel& s, const StreamModel& base) { s.*member = base.*member; };
    f.get = [member](const StreamModel& s) { return s.*member; };
    return f;
}

// Predictions at one point of the parameter space, computed once.
class PredictionCache {
public:
    PredictionCache(const PublishedPredictor& predictor, const std::vector<FitParameter>& params)
        : predictor_(predictor), params_(params) {}
    const std::vector<PublishedPrediction>& at(const StreamModel& s) {
        std::vector<double> key;
        for (const FitParameter& f : params_) key.push_back(f.get(s));
        auto it = cache_.find(key);
        if (it == cache_.end()) it = cache_.emplace(key, predictor_.predict(s)).first;
        return it->second;
    }

private:
    const PublishedPredictor& predictor_;
    const std::vector<FitParameter>& params_;
    std::map<std::vector<double>, std::vector<PublishedPrediction>> cache_;
};

// Mean loss over the rows `use` accepts; infinity when none.
template <class Use>
double meanLoss(const std::vector<PublishedPrediction>& rows, Use use) {
    double sum = 0;
    int n = 0;
    for (const PublishedPrediction& p : rows) {
        const double l = loss(p);
        if (l < 0 || !use(p)) continue;
        sum += l, ++n;
    }
    return n > 0 ? sum / n : std::numeric_limits<double>::infinity();
}

// Coordinate descent from `start`: each parameter in turn takes its best candidate with the others
// fixed, until a sweep changes nothing (at most 6 sweeps). Parameters of an architecture that no
// accepted row runs on keep the base's value.
template <class Use>
StreamModel fitOn(PredictionCache& cache, const std::vector<FitParameter>& params, const StreamModel& start,
                  const StreamModel& base, const GpuDatabase& db, Use use) {
    StreamModel s = start;
    std::vector<const FitParameter*> active;
    const std::vector<PublishedPrediction>& any = cache.at(s);
    for (const FitParameter& f : params) {
        bool told = f.architecture.empty();
        for (const PublishedPrediction& p : any) told |= use(p) && db.get(p.run->gpuId).architecture == f.architecture;
        if (told)
            active.push_back(&f);
        else
            f.reset(s, base);
    }
    for (int sweep = 0; sweep < 6; ++sweep) {
        bool changed = false;
        for (const FitParameter* f : active) {
            const double current = f->get(s);
            double bestValue = current, least = meanLoss(cache.at(s), use);
            for (double v : f->values) {
                StreamModel t = s;
                f->set(t, v);
                const double l = meanLoss(cache.at(t), use);
                if (l < least - 1e-12) least = l, bestValue = v;
            }
            if (bestValue != current) f->set(s, bestValue), changed = true;
        }
        if (!changed) break;
    }
    return s;
}

std::vector<std::pair<std::string, double>> valuesOf(const std::vector<FitParameter>& params, const StreamModel& s) {
    std::vector<std::pair<std::string, double>> v;
    for (const FitParameter& f : params) v.emplace_back(f.name, f.get(s));
    return v;
}

}  // namespace

std::vector<FitParameter> publishedFitParameters() {
    return {
        scalar("conv_efficiency", steps(0.5, 1.0, 0.05), &StreamModel::convEfficiency),
        scalar("memory_efficiency", steps(0.5, 1.0, 0.05), &StreamModel::memoryEfficiency),
        scalar("grouped_conv_efficiency", {0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 1.0},
               &StreamModel::groupedConvEfficiency),
        scalar("depthwise_conv_efficiency", {0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0},
               &StreamModel::depthwiseConvEfficiency),
        scalar("fp32_efficiency", steps(0.8, 1.4, 0.05), &StreamModel::fp32Efficiency),
        scalar("winograd_speedup", steps(1.0, 3.0, 0.1), &StreamModel::winogradSpeedup),
        scalar("step_time_spread", steps(0.0, 0.15, 0.01), &StreamModel::stepTimeSpread),
        scalar("host_forward_us", steps(15, 90, 5), &StreamModel::hostForwardUs),
        scalar("host_backward_us", steps(15, 120, 5), &StreamModel::hostBackwardUs),
        tensorCore(false, "Volta"),
        tensorCore(false, "Ampere"),
        tensorCore(true, "Ampere"),
    };
}

std::vector<std::string> shippedFitParameterNames() {
    return {"conv_efficiency", "memory_efficiency", "grouped_conv_efficiency", "depthwise_conv_efficiency",
            "fp32_efficiency", "winograd_speedup",  "step_time_spread"};
}

PublishedFitResult fitPublished(const PublishedPredictor& predictor, const GpuDatabase& db, const StreamModel& base,
                                const std::vector<std::string>& names) {
    std::vector<FitParameter> params;
    const std::vector<FitParameter> all = publishedFitParameters();
    for (const std::string& name : names) {
        auto it = std::find_if(all.begin(), all.end(), [&](const FitParameter& f) { return f.name == name; });
        if (it == all.end()) {
            std::string known;
            for (const FitParameter& f : all) known += (known.empty() ? "" : ", ") + f.name;
            throw ModelError("--fit-parameters", "no fit parameter '" + name + "' (known: " + known + ")");
        }
        params.push_back(*it);
    }
    PredictionCache cache(predictor, params);
    PublishedFitResult r;
    r.fitted = fitOn(cache, params, base, base, db, [](const PublishedPrediction&) { return true; });
    r.constants = valuesOf(params, r.fitted);
    std::vector<double> inSample, lomo, logo;
    for (const PublishedPrediction& p : cache.at(r.fitted))
        if (loss(p) >= 0) {
            inSample.push_back(p.error());
            r.gpus.insert(p.run->gpuId);
        }
    r.inSample = summarise(inSample);

    // Leave one group out: each row's error at the constants fitted on every other group.
    auto heldOutErrors = [&](auto groupOf, std::vector<double>& errors, bool byPrecision) {
        std::map<std::string, StreamModel> chosen;
        const std::vector<PublishedPrediction> rows = cache.at(base);
        for (size_t i = 0; i < rows.size(); ++i) {
            if (loss(rows[i]) < 0) continue;
            const std::string group = groupOf(rows[i]);
            auto it = chosen.find(group);
            if (it == chosen.end()) {
                it = chosen
                         .emplace(group, fitOn(cache, params, r.fitted, base, db,
                                               [&](const PublishedPrediction& p) { return groupOf(p) != group; }))
                         .first;
                r.heldOut[group] = valuesOf(params, it->second);
            }
            const PublishedPrediction& p = cache.at(it->second)[i];
            if (loss(p) < 0) continue;
            errors.push_back(p.error());
            if (byPrecision)
                r.leaveOneModelOutByPrecision[trainingPrecisionName(p.run->scenario.precision)].push_back(p.error());
        }
    };
    heldOutErrors([](const PublishedPrediction& p) { return "model: " + p.run->family; }, lomo, true);
    heldOutErrors([&](const PublishedPrediction& p) { return "gpu: " + db.get(p.run->gpuId).architecture; }, logo,
                  false);
    r.leaveOneModelOut = summarise(lomo);
    r.leaveOneGpuOut = summarise(logo);
    return r;
}

nlohmann::ordered_json publishedFitJson(const PublishedFitResult& f) {
    auto object = [](const std::vector<std::pair<std::string, double>>& values) {
        nlohmann::ordered_json o = nlohmann::ordered_json::object();
        for (const auto& [name, v] : values) o[name] = v;
        return o;
    };
    nlohmann::ordered_json held = nlohmann::ordered_json::object();
    for (const auto& [group, c] : f.heldOut) held[group] = object(c);
    return {{"constants", object(f.constants)},
            {"in_sample", errorSummaryJson(f.inSample)},
            {"leave_one_model_out", errorSummaryJson(f.leaveOneModelOut)},
            {"leave_one_gpu_out", errorSummaryJson(f.leaveOneGpuOut)},
            {"held_out", held}};
}

namespace {

constexpr double kCoverage = 0.8;

// The relative error e whose interval [v / (1 + e), v (1 + e)] holds kCoverage of `errors` (not empty).
double coveringError(const std::vector<double>& errors) {
    std::vector<double> logs;
    for (double e : errors) logs.push_back(std::abs(std::log1p(e)));
    std::sort(logs.begin(), logs.end());
    const double q = logs[std::min(logs.size() - 1, size_t(std::ceil(kCoverage * double(logs.size())) - 1))];
    return std::expm1(q);
}

}  // namespace

nlohmann::ordered_json iterationErrorTable(const PublishedFitResult& f, const std::string& generator) {
    const auto relative = coveringError;
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
            {"rows", counts},
            {"fitted_gpus", f.gpus}};
}

std::set<std::string> fittedGpusOf(const nlohmann::json& table, const std::string& origin) {
    if (!table.is_object() || !table.contains("fitted_gpus") || !table.at("fitted_gpus").is_array())
        throw ModelError(origin, "no fitted_gpus list: write the table with validate-published --fit --write-errors first");
    std::set<std::string> fitted;
    for (const auto& g : table.at("fitted_gpus")) {
        if (!g.is_string() || g.get<std::string>().empty())
            throw ModelError(origin, "fitted_gpus: every entry must be a GPU id");
        fitted.insert(g.get<std::string>());
    }
    return fitted;
}

nlohmann::ordered_json outOfSampleErrorTable(const PublishedReport& report, const std::set<std::string>& fitted,
                                             const GpuDatabase& db, const std::string& source) {
    std::set<std::string> architectures;
    for (const std::string& id : fitted)
        if (const GpuSpec* g = db.find(id)) architectures.insert(g->architecture);
    std::vector<double> sameArchitecture, otherArchitecture;
    for (const PublishedPrediction& p : report.predictions) {
        if (!p.failure.empty() || !(p.predicted > 0) || fitted.count(p.run->gpuId)) continue;
        const bool seen = architectures.count(db.get(p.run->gpuId).architecture) > 0;
        (seen ? sameArchitecture : otherArchitecture).push_back(p.error());
    }
    if (sameArchitecture.empty() && otherArchitecture.empty())
        throw ModelError(source, "no compared row on a GPU outside the fit");
    nlohmann::ordered_json j;
    j["method"] =
        "Rows of another benchmark predicted with the shipped constants (nothing fitted on them), on GPUs "
        "outside fitted_gpus: the relative error e whose interval [v / (1 + e), v (1 + e)] holds 80% of the rows "
        "on GPUs of an architecture the fit saw (gpu_outside_fit) and of one it did not "
        "(architecture_outside_fit). A prediction for such a GPU is at least that wide.";
    j["source"] = source;
    j["fitted_architectures"] = architectures;
    // Without rows of one kind, the other's value stands for it; an architecture the fit never saw is
    // never held to a narrower interval than a GPU it did not see of one it did.
    const double same = sameArchitecture.empty() ? 0 : coveringError(sameArchitecture);
    const double other = otherArchitecture.empty() ? 0 : coveringError(otherArchitecture);
    j["gpu_outside_fit"] = sameArchitecture.empty() ? other : same;
    j["architecture_outside_fit"] = otherArchitecture.empty() ? same : std::max(same, other);
    j["rows"] = {{"gpu_outside_fit", sameArchitecture.size()}, {"architecture_outside_fit", otherArchitecture.size()}};
    return j;
}

void printPublishedFit(std::ostream& out, const PublishedFitResult& f) {
    char buf[200];
    auto list = [](const std::vector<std::pair<std::string, double>>& values) {
        std::string text;
        char v[64];
        for (const auto& [name, value] : values) {
            std::snprintf(v, sizeof v, "%.2f", value);
            text += (text.empty() ? "" : ", ") + name + " " + v;
        }
        return text;
    };
    out << "\nFit of the constants only whole runs tell (coordinate descent; leave-one-out refits)\n";
    out << "  fitted on every row: " << list(f.constants) << "\n";
    out << "                                   n      mean    median    signed\n";
    for (const auto& [name, s] : {std::pair<const char*, const ErrorSummary&>{"in sample", f.inSample},
                                  {"leave one model out", f.leaveOneModelOut},
                                  {"leave one GPU out", f.leaveOneGpuOut}}) {
        std::snprintf(buf, sizeof buf, "  %-28s %5d %9.1f%% %9.1f%% %+9.1f%%\n", name, s.n, s.meanAbsPct,
                      s.medianAbsPct, s.meanSignedPct);
        out << buf;
    }
    out << "  constants fitted without each group:\n";
    for (const auto& [group, c] : f.heldOut) out << "    " << group << ": " << list(c) << "\n";
}

}  // namespace ts::predictors
