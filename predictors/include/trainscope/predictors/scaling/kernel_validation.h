#pragma once
// Leave-one-GPU-out validation of the cross-GPU scaling models on measurements: for every GPU X
// of a class, the parameters and X's statistics are fitted on the other GPUs only; then every
// configuration measured on X and on another GPU Y is predicted from Y's measurement (cross
// path), and every configuration measured on X is predicted without any measurement
// (model-only path). Errors are absolute percentage errors.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainscope/predictors/scaling/kernel_measurements.h"
#include "trainscope/predictors/scaling/kernel_scaling.h"

namespace ts::predictors {

struct ApeSummary {
    std::string key;  // class, target GPU id, "origin -> target", or "overall"
    int64_t n = 0;
    double medianPct = 0;
    double meanPct = 0;
};

struct PathSummary {
    ApeSummary overall;
    std::vector<ApeSummary> classes;  // class order of the measurements
    std::vector<ApeSummary> targets;  // by GPU id
    std::vector<ApeSummary> pairs;    // "origin -> target"; empty for the model-only path
};

struct FittedParams {
    std::string opClass;
    std::string heldOut;  // GPU id whose rows were left out ("" = fitted on all GPUs)
    ScalingParams params;
    GpuOpStats heldOutEstimate;  // what the held-out GPU's statistics were estimated as
};

struct ValidationReport {
    bool targetHostKnown = false;  // ValidationOptions::targetHostKnown was set
    PathSummary cross;
    PathSummary modelOnly;
    std::vector<FittedParams> fitted;
    std::vector<std::string> notes;  // classes or GPUs that could not be validated, unknown devices
    int64_t rows = 0;
    size_t files = 0;
    double fitSeconds = 0;
    double predictSeconds = 0;
};

// One prediction of the validation, for analyses the summary tables do not show.
struct ValidationPrediction {
    const OperatorMeasurements* op = nullptr;  // class and size columns
    size_t config = 0;                         // index into op->configs
    const GpuSpec* origin = nullptr;           // nullptr: model-only path
    const GpuSpec* target = nullptr;
    double predictedMs = 0;  // may be NaN or infinite (counted as 100 % error)
    double measuredMs = 0;
};

struct ValidationOptions {
    // A diagnostic, not a leave-one-GPU-out validation: the held-out GPU's host floor and achieved
    // bandwidth are taken from its own rows instead of being estimated from the other GPUs. Both
    // are properties of the machine more than of the GPU (the P100 machine's floor is 1.5-1.8x the
    // others' for seven classes and equal for two), so this measures how much of the error is what
    // no model of the GPU can know. Everything else is still fitted without X.
    bool targetHostKnown = false;
    // Called for every prediction, in the order the errors are counted.
    std::function<void(const ValidationPrediction&)> onPrediction;
};

// A prediction counts as 100% error when it is not a finite number.
ValidationReport validateKernels(const MeasurementSet& set, const ValidationOptions& options = {});

// Summary of a list of fractional errors (median as numpy's: mean of the middle two).
ApeSummary summarize(std::string key, std::vector<double> apes);

void printValidationReport(std::ostream& out, const ValidationReport& r);
nlohmann::json validationReportJson(const ValidationReport& r);
nlohmann::json scalingParamsJson(const ScalingParams& p);

}  // namespace ts::predictors
