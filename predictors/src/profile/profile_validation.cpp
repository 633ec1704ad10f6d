#include "trainscope/predictors/profile/profile_validation.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/profile_file.h"
#include "trainscope/predictors/profile/measured_device.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace ts::predictors {
namespace {

namespace fs = std::filesystem;

std::string deviceOf(const Profile& p) {
    return p.environment.gpu ? p.environment.gpu->name : "cpu";
}

std::string batchList(const std::vector<int64_t>& batches) {
    std::string s;
    for (int64_t b : batches) s += (s.empty() ? "" : ",") + std::to_string(b);
    return s;
}

std::vector<int64_t> fittedBatches(const Profile& p) {
    std::set<int64_t> s;
    for (const ProfileRun& r : p.runs)
        if (isFittedRun(r)) s.insert(r.batch);
    return {s.begin(), s.end()};
}

// Predictions of GPU profiles go through the product's predictor; models are loaded once.
class GpuPredictions {
public:
    explicit GpuPredictions(const GpuDatabase& db) : db_(db) {}

    GpuSpec gpuOf(const Profile& p) const {
        const GpuSpec* known = db_.matchDevice(p.environment.gpu->name);
        return known ? *known : db_.specFromDevice(*p.environment.gpu, nullptr);
    }

    // Throws ModelError (or another std::exception) when the prediction cannot be made.
    TrainingPrediction predict(const Profile& source, const Profile& target, int64_t batch) {
        const std::string& spec = source.scenario.model;
        if (spec.empty()) throw ModelError("profile", "the profile does not name its model");
        auto it = graphs_.find(spec);
        if (it == graphs_.end()) it = graphs_.emplace(spec, std::make_unique<Graph>(loadModel(spec))).first;
        TrainingPredictor predictor(*it->second, source.scenario.seq);
        predictor.useProfile(source, db_);
        TrainingScenario s;
        s.batch = batch;
        auto precision = parseTrainingPrecision(target.scenario.precision.empty() ? "fp32" : target.scenario.precision);
        auto optimizer = parseOptimizer(target.scenario.optimizer.empty() ? "sgd" : target.scenario.optimizer);
        if (!precision || !optimizer) throw ModelError("profile", "unknown precision or optimizer in the target");
        s.precision = *precision;
        s.optimizer = *optimizer;
        TrainingPrediction p = predictor.predict(gpuOf(target), s, false);
        if (!p.supported) throw ModelError("predict", p.reason);
        return p;
    }

private:
    const GpuDatabase& db_;
    std::map<std::string, std::unique_ptr<Graph>> graphs_;
};

ValidationRow rowFor(ValidationKind kind, const std::string& profile, const ProfileRun& measured, double ms,
                     double bytes) {
    ValidationRow row;
    row.kind = kind;
    row.profile = profile;
    row.batch = measured.batch;
    row.measuredMs = measured.iteration.medianMs;
    row.predictedMs = ms;
    row.msError = std::abs(ms - row.measuredMs) / row.measuredMs;
    const double measuredBytes = measuredPeakBytes(measured.memory);
    if (measuredBytes > 0 && bytes > 0) {
        row.measuredBytes = measuredBytes;
        row.predictedBytes = bytes;
        row.bytesError = std::abs(bytes - measuredBytes) / measuredBytes;
    }
    return row;
}

void validateBatchSizes(const std::vector<NamedProfile>& profiles, GpuPredictions& gpu, ProfileValidation& out,
                        std::vector<std::string>& notes) {
    for (const NamedProfile& np : profiles) {
        const std::vector<int64_t> batches = fittedBatches(np.profile);
        if (batches.size() < 2) {
            notes.push_back(np.name + ": fewer than two batch sizes completed");
            continue;
        }
        for (const ProfileRun& held : np.profile.runs) {
            if (!isFittedRun(held)) continue;
            Profile rest = np.profile;
            std::erase_if(rest.runs, [&](const ProfileRun& r) { return r.batch == held.batch; });
            std::vector<int64_t> from = batches;
            std::erase(from, held.batch);
            try {
                double ms = 0, bytes = 0;
                if (np.profile.environment.gpu) {
                    const TrainingPrediction p = gpu.predict(rest, np.profile, held.batch);
                    ms = p.iterationMs.value;
                    bytes = p.peakMemoryBytes.value;
                } else {
                    const MeasuredDevicePrediction p = MeasuredDeviceFit(rest).predict(double(held.batch));
                    ms = p.iterationMs;
                    bytes = p.peakBytes;
                }
                ValidationRow row = rowFor(ValidationKind::BatchSize, np.name, held, ms, bytes);
                row.from = "batch " + batchList(from);
                row.to = "batch " + std::to_string(held.batch);
                out.rows.push_back(std::move(row));
            } catch (const std::exception& e) {
                notes.push_back(np.name + " batch " + std::to_string(held.batch) + ": " + e.what());
            }
        }
    }
}

// Ordered pairs (source, target) of the same model whose `same` key matches and `differ` differs.
template <typename Same, typename Differ>
void validatePairs(ValidationKind kind, const std::vector<NamedProfile>& profiles, GpuPredictions& gpu, Same same,
                   Differ differ, ProfileValidation& out, std::vector<std::string>& notes) {
    bool cpuPairs = false;
    int pairs = 0;
    for (const NamedProfile& source : profiles)
        for (const NamedProfile& target : profiles) {
            const Profile& a = source.profile;
            const Profile& b = target.profile;
            if (&source == &target || a.scenario.model != b.scenario.model || a.scenario.seq != b.scenario.seq ||
                !same(a, b) || !differ(a, b))
                continue;
            if (!a.environment.gpu || !b.environment.gpu) {
                cpuPairs = true;
                continue;
            }
            ++pairs;
            for (const ProfileRun& run : b.runs) {
                if (!isFittedRun(run)) continue;
                try {
                    const TrainingPrediction p = gpu.predict(a, b, run.batch);
                    ValidationRow row = rowFor(kind, target.name, run, p.iterationMs.value, p.peakMemoryBytes.value);
                    row.from = a.scenario.precision + " on " + deviceOf(a);
                    row.to = b.scenario.precision + " on " + deviceOf(b) + " batch " + std::to_string(run.batch);
                    out.rows.push_back(std::move(row));
                } catch (const std::exception& e) {
                    notes.push_back(source.name + " -> " + target.name + " batch " + std::to_string(run.batch) + ": " +
                                    e.what());
                }
            }
        }
    if (cpuPairs)
        notes.push_back(std::string("CPU profiles: not applicable (") +
                        (kind == ValidationKind::Precision
                             ? "the predictors model precision on GPUs only; CPU precision behaviour is not modelled)"
                             : "a CPU profile cannot be moved to a GPU)"));
    if (pairs == 0)
        notes.push_back(kind == ValidationKind::Precision
                            ? "needs profiles of one model at two precisions on one GPU (none recorded yet)"
                            : "needs profiles of two GPUs (one model, one precision; none recorded yet)");
}

}  // namespace

const char* validationKindName(ValidationKind k) {
    switch (k) {
        case ValidationKind::BatchSize:
            return "batch size";
        case ValidationKind::Precision:
            return "precision";
        case ValidationKind::CrossGpu:
            return "cross-GPU";
    }
    return "?";
}

double validationTarget(ValidationKind k) {
    return k == ValidationKind::BatchSize ? 0.05 : 0.10;
}

ErrorStats errorStats(std::vector<double> errors) {
    ErrorStats s;
    s.count = int(errors.size());
    if (errors.empty()) return s;
    double sum = 0;
    for (double e : errors) sum += e;
    s.mean = sum / double(errors.size());
    std::sort(errors.begin(), errors.end());
    const size_t h = errors.size() / 2;
    s.median = errors.size() % 2 ? errors[h] : (errors[h - 1] + errors[h]) / 2;
    return s;
}

std::vector<NamedProfile> readProfileDirectory(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw ModelError(dir, "not a directory of profiles");
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    if (ec) throw ModelError(dir, "cannot list the directory: " + ec.message());
    if (files.empty()) throw ModelError(dir, "no profile (*.json) in the directory");
    std::sort(files.begin(), files.end());
    std::vector<NamedProfile> out;
    for (const fs::path& f : files) out.push_back({fs::relative(f, dir, ec).generic_string(), readProfile(f.string())});
    return out;
}

ProfileValidation validateProfiles(const std::vector<NamedProfile>& profiles, const GpuDatabase& db) {
    ProfileValidation out;
    GpuPredictions gpu(db);
    std::vector<std::string> notes[3];
    validateBatchSizes(profiles, gpu, out, notes[0]);
    auto precisionOf = [](const Profile& p) { return p.scenario.precision.empty() ? "fp32" : p.scenario.precision; };
    validatePairs(
        ValidationKind::Precision, profiles, gpu,
        [](const Profile& a, const Profile& b) { return deviceOf(a) == deviceOf(b); },
        [&](const Profile& a, const Profile& b) { return precisionOf(a) != precisionOf(b); }, out, notes[1]);
    validatePairs(
        ValidationKind::CrossGpu, profiles, gpu,
        [&](const Profile& a, const Profile& b) { return precisionOf(a) == precisionOf(b); },
        [](const Profile& a, const Profile& b) { return deviceOf(a) != deviceOf(b); }, out, notes[2]);
    for (int k = 0; k < 3; ++k) {
        ValidationKindSummary s;
        s.kind = ValidationKind(k);
        s.target = validationTarget(s.kind);
        std::vector<double> time, memory;
        for (const ValidationRow& r : out.rows) {
            if (r.kind != s.kind) continue;
            time.push_back(r.msError);
            if (r.bytesError) memory.push_back(*r.bytesError);
        }
        s.time = errorStats(time);
        s.memory = errorStats(memory);
        s.notes = std::move(notes[k]);
        out.kinds.push_back(std::move(s));
    }
    return out;
}

}  // namespace ts::predictors
