#pragma once
// `validate`: every recorded profile predicted from every other one (issue 5, item 7): other
// batch sizes of the same profile (leave one batch size out), other precisions of the same model
// on the same GPU, and the same model and precision on other GPUs. Errors are
// |predicted - measured| / measured, for the iteration time and the device peak memory.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/profile.h"

namespace ts::predictors {

enum class ValidationKind { BatchSize, Precision, CrossGpu };
const char* validationKindName(ValidationKind k);  // "batch size", "precision", "cross-GPU"
double validationTarget(ValidationKind k);         // issue 5's target: 0.05, 0.10, 0.10

struct NamedProfile {
    std::string name;  // file name, for the report
    Profile profile;
};

// One prediction of one measured run.
struct ValidationRow {
    ValidationKind kind = ValidationKind::BatchSize;
    std::string profile;  // the measured (predicted) profile
    std::string from;     // what it was predicted from, e.g. "batch 1,4" or "amp-bf16 on H100"
    std::string to;       // what was predicted, e.g. "batch 2"
    int64_t batch = 0;
    double measuredMs = 0, predictedMs = 0, msError = 0;
    std::optional<double> measuredBytes, predictedBytes, bytesError;  // absent without memory figures
};

struct ErrorStats {
    int count = 0;
    double mean = 0, median = 0;
};

struct ValidationKindSummary {
    ValidationKind kind = ValidationKind::BatchSize;
    ErrorStats time, memory;
    double target = 0;
    std::vector<std::string> notes;  // why some (or all) predictions of this kind were not made
};

struct ProfileValidation {
    std::vector<ValidationRow> rows;
    std::vector<ValidationKindSummary> kinds;  // the three kinds, in enum order
};

// Every *.json profile under `dir` (recursively), by name; throws ModelError naming a file that
// cannot be read and when there is none.
std::vector<NamedProfile> readProfileDirectory(const std::string& dir);

// Predicts what can be predicted; anything that cannot is a note on its kind, never an exception.
ProfileValidation validateProfiles(const std::vector<NamedProfile>& profiles, const GpuDatabase& db);

ErrorStats errorStats(std::vector<double> errors);

}  // namespace ts::predictors
