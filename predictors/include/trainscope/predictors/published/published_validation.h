#pragma once
// Validation of whole-iteration predictions on published training throughput (NVIDIA's
// DeepLearningExamples tables, ../shared/data/training-throughput): every row a TrainScope model
// and scenario can stand for is predicted, its error printed, and the ratios between rows of one
// model (GPU vs GPU, full vs mixed precision, batch vs batch, N GPUs vs 1), where the benchmark's
// own pipeline cancels, are compared too. How a row becomes a scenario (which zoo model, batch per
// GPU when the table gives none, what a throughput unit counts) is data: resources/published-runs.json,
// each entry with the evidence it rests on.
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/iteration/training_scenario.h"

namespace ts::predictors {

// One row of a published table, as written.
struct PublishedRow {
    std::string file;  // CSV file name (no directory)
    int line = 0;
    int index = 0;  // 0-based data row of its file (the mapping names rows by it)
    std::string model, sequence, gpuSystem, gpu, precision, batchText, unit, tableTitle;
    int gpuCount = 0;
    double throughput = 0;
};

// Reads every CSV of the published-throughput schema in `paths` (files or directories). Throws
// ModelError naming the file for a file that is not of that schema.
std::vector<PublishedRow> readPublishedRows(const std::vector<std::string>& paths);

// A row as a prediction: the model, the scenario on one GPU type, and what converts predicted
// samples/s to the row's unit.
struct PublishedRun {
    const PublishedRow* row = nullptr;
    std::string family;     // the mapping's name for the model ("ResNet-50 v1.5")
    std::string modelSpec;  // "zoo:resnet50?image=224"
    int64_t seq = 0;
    std::string gpuId;
    // Batch per GPU, precision, optimizer, GPUs and interconnect, gradient accumulation.
    TrainingScenario scenario;
    double unitsPerSample = 1;  // the row's unit per predicted sample (tokens per sequence, 1e-6 for "million")
    std::string batchBasis;     // "table" or the mapping's evidence for a batch the table lacks
};

struct UnmappedRow {
    const PublishedRow* row = nullptr;
    std::string why;
};

struct PublishedMapping {
    std::vector<PublishedRun> runs;
    std::vector<UnmappedRow> unmapped;
};

// The mapping compiled into this binary (resources/published-runs.json).
const nlohmann::json& builtinPublishedMapping();
// Throws ModelError naming `origin` when the mapping is malformed.
PublishedMapping mapPublishedRows(const std::vector<PublishedRow>& rows, const nlohmann::json& mapping,
                                  const GpuDatabase& db, const std::string& origin = "published-runs.json");

// One compared figure: a row's absolute throughput, or a ratio of two rows of one model.
struct PublishedPrediction {
    const PublishedRun* run = nullptr;
    double predicted = 0;  // in the row's unit
    double measured = 0;
    std::string failure;  // the predictor's reason when it could not predict (unsupported, does not fit)
    bool fits = true;     // the predicted peak memory fits the GPU at this batch
    double intervalLow = 0, intervalHigh = 0;  // the prediction's interval, in the row's unit
    double error() const { return predicted / measured - 1; }
};

struct PublishedRatio {
    std::string kind;  // "gpu", "precision", "batch", "gpus"
    const PublishedPrediction* a = nullptr;
    const PublishedPrediction* b = nullptr;
    double measured() const { return a->measured / b->measured; }
    double predicted() const { return a->predicted / b->predicted; }
    double error() const { return predicted() / measured() - 1; }
};

struct ErrorSummary {
    int n = 0;
    double meanAbsPct = 0, medianAbsPct = 0, meanSignedPct = 0;
    double within10Pct = 0;  // share of |error| <= 10%
};
ErrorSummary summarise(const std::vector<double>& errors);  // errors as fractions
// {n, mean_abs_pct, median_abs_pct, mean_signed_pct, within_10_pct}: every summary's JSON.
nlohmann::ordered_json errorSummaryJson(const ErrorSummary& s);

struct PublishedReport {
    std::vector<PublishedPrediction> predictions;  // mapped rows, in file order
    std::vector<UnmappedRow> unmapped;
    std::vector<PublishedRatio> ratios;
    ErrorSummary overall;
    std::map<std::string, ErrorSummary> byModel, byGpu, byPrecision, byGpuCount;
    ErrorSummary ratiosOverall;
    std::map<std::string, ErrorSummary> ratiosByKind;
    double intervalCoverage = 0;  // share of compared rows whose published figure is inside the interval
};

struct PublishedOptions {
    std::function<void(const std::string&)> progress;  // one line per model as it is analysed
    const StreamModel* model = nullptr;                // default: StreamModel::shipped()
};

// Every mapped run's prediction: the models are analysed once, then predicted under any
// whole-iteration constants (what fitting them needs).
class PublishedPredictor {
public:
    PublishedPredictor(const PublishedMapping& mapping, const GpuDatabase& db,
                       const std::function<void(const std::string&)>& progress = {});
    ~PublishedPredictor();
    std::vector<PublishedPrediction> predict(const StreamModel& model) const;

private:
    struct Model;
    const PublishedMapping& mapping_;
    const GpuDatabase& db_;
    std::map<std::pair<std::string, int64_t>, std::unique_ptr<Model>> models_;
};

// The summaries and ratios of a set of predictions.
PublishedReport summarisePublished(std::vector<PublishedPrediction> predictions,
                                   const std::vector<UnmappedRow>& unmapped);

// Predicts every mapped run (one TrainingPredictor per model) and compares.
PublishedReport validatePublished(const PublishedMapping& mapping, const GpuDatabase& db,
                                  const PublishedOptions& options = {});

// Every pair of rows of one model that differ in exactly one of GPU, precision class (full: FP32
// or TF32; mixed: AMP or BF16), batch per GPU and GPU count.
std::vector<PublishedRatio> publishedRatios(const std::vector<PublishedPrediction>& predictions);

nlohmann::ordered_json publishedReportJson(const PublishedReport& r);
void printPublishedReport(std::ostream& out, const PublishedReport& r);
// Each compared row as CSV (file, line, model, gpu, gpus, precision, batch, unit, measured, predicted, error).
void writePublishedPredictions(std::ostream& out, const PublishedReport& r);

}  // namespace ts::predictors

namespace ts::predictors {

// Fitting the whole-iteration constants that only whole runs can tell on the published rows, by
// coordinate descent over each constant's candidate values minimising the mean
// |ln(predicted / published)| (capped at 1 per row), and how well that generalises: each model
// family predicted with the constants fitted without it (leave one model out), and each GPU
// architecture likewise (leave one GPU out: Volta from Ampere's rows and the reverse). A constant
// of one architecture (its tensor-core efficiency) is fitted only where rows of that architecture
// remain; left out, it falls back to the base model's (the default of architectures without
// measurements).
struct FitParameter {
    std::string name;            // "conv_efficiency", "tensor_core_16:Volta", ...
    std::vector<double> values;  // the candidates, ascending
    std::string architecture;    // "" or the only architecture whose rows can tell it
    std::function<void(StreamModel&, double)> set;
    std::function<void(StreamModel&, const StreamModel& base)> reset;  // back to the base's value
    std::function<double(const StreamModel&)> get;
};
// Every constant `validate-published --fit` can fit (--fit-parameters), in the order it sweeps them.
std::vector<FitParameter> publishedFitParameters();
// The ones it fits by default: those the shipped StreamModel's values come from.
std::vector<std::string> shippedFitParameterNames();

struct PublishedFitResult {
    std::vector<std::pair<std::string, double>> constants;                       // fitted on every row, in sweep order
    ErrorSummary inSample;                                                       // every row at the fitted constants
    ErrorSummary leaveOneModelOut, leaveOneGpuOut;                               // each row predicted without its group
    std::map<std::string, std::vector<std::pair<std::string, double>>> heldOut;  // group -> its fit
    StreamModel fitted;  // the base model with the fitted constants
    // Leave-one-model-out errors (predicted / published - 1) by TrainingPrecision name: what the
    // whole-iteration intervals are made of (iterationErrorTable).
    std::map<std::string, std::vector<double>> leaveOneModelOutByPrecision;
    std::set<std::string> gpus;  // the GPU ids of the rows fitted: the intervals' own GPUs
};
// Fits the parameters named (default: shippedFitParameterNames()); throws ModelError for a name
// publishedFitParameters() does not have.
PublishedFitResult fitPublished(const PublishedPredictor& predictor, const GpuDatabase& db,
                                const StreamModel& base = StreamModel::shipped(),
                                const std::vector<std::string>& names = shippedFitParameterNames());
nlohmann::ordered_json publishedFitJson(const PublishedFitResult& f);
// resources/iteration-errors.json: per precision, the relative error e whose interval
// [v / (1 + e), v (1 + e)] holds 80% of the leave-one-model-out predictions.
nlohmann::ordered_json iterationErrorTable(const PublishedFitResult& f, const std::string& generator);
// The out-of-sample part of that table: rows of another benchmark (Lambda's), predicted with the shipped
// constants, on GPUs the fit never saw. For the rows on GPUs of an architecture the fit saw
// ("gpu_outside_fit") and on GPUs of an architecture it did not ("architecture_outside_fit"): the relative
// error e whose interval holds 80% of them. `fitted` is the table's "fitted_gpus"; rows on those GPUs are
// not counted (they measure the benchmark, not the extrapolation).
// The "fitted_gpus" of an interval table (iterationErrorTable); ModelError naming `origin` where the table is
// not an object with that list of GPU ids.
std::set<std::string> fittedGpusOf(const nlohmann::json& table, const std::string& origin);
nlohmann::ordered_json outOfSampleErrorTable(const PublishedReport& report, const std::set<std::string>& fitted,
                                             const GpuDatabase& db, const std::string& source);
void printPublishedFit(std::ostream& out, const PublishedFitResult& f);

}  // namespace ts::predictors
