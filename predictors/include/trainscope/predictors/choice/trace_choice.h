#pragma once
// The hardware choice for a recorded job: which GPU to rent or buy to run the training a PyTorch
// profiler trace recorded, for what time per step and cost. Every GPU's median step is predicted
// from the trace (predictTrace: the kernels moved, the steps replayed with the host's measured
// timeline); the cost is that time at the GPU's price per GPU-hour (gpuHourPrice, the price the
// model report uses). GPUs are ranked as the model report ranks them: priced ones by the cost of
// 1,000 steps, then unpriced ones by step time, then those that cannot be predicted, with the
// reason. The batch size and precision stay as recorded unless `options.change` changes them
// (trace_change.h: from the recorded shapes); the optimizer and data parallelism always do. `trainscope-cli report
// TRACE` and `predict TRACE` share this; app/report renders it as HTML and PDF, and traceChoiceCsv / traceChoiceJson
// write it as tables (docs/report.md).
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/choice/training_cost.h"
#include "trainscope/predictors/trace/trace_prediction.h"

namespace ts::predictors {

// One GPU's prediction of the trace, or why there is none (a GPU without the figures the kernel
// moves need).
struct TraceGpuPrediction {
    const GpuSpec* gpu = nullptr;
    std::optional<TracePrediction> prediction;
    std::string problem;  // when !prediction
};

// predictTrace on each of `gpus`, in their order; a GPU that cannot be predicted keeps its reason.
// Throws ModelError(trace.source, ...) where tracePredictionProblem(trace, &origin) names a problem.
// Throws ModelError(trace.source, ...) where the change cannot be made (analyseTraceChange) too.
std::vector<TraceGpuPrediction> predictTraceOnGpus(const KinetoTrace& trace, const GpuSpec& origin,
                                                   const std::vector<const GpuSpec*>& gpus,
                                                   const TraceChange& change = {});

struct TraceChoiceOptions {
    TraceChange change;           // FP32 arithmetic, batch size, autocast
    PriceSnapshot priceSnapshot;  // GpuDatabase::priceSnapshot(), stated with the prices
    Amortisation amortisation;    // GpuDatabase::amortisation(), stated where a price is amortised
};

struct TraceChoiceRow {
    int rank = 0;  // 1 = best
    std::string gpuId, gpuName;
    bool recorded = false;   // the GPU the trace was recorded on
    bool predicted = false;  // false: `reason` says why
    std::string reason;
    double stepMs = 0;           // predicted median step
    double speedup = 0;          // samples per second over the measured job's (> 1: faster than the recorded GPU);
                                 // at the recorded batch, measured median step / stepMs
    double stepsPerHour = 0;     // 3.6e6 / stepMs
    TrainingCost price;          // gpuHourPrice: its intervals are unused
    std::string priceNote;       // without a price: why (GpuSpec::pricesNote)
    double usdPer1000Steps = 0;  // usdPerGpuHour x stepMs x 1000 / 3.6e6 (0 when unpriced)
    std::optional<TracePrediction> prediction;
};

// A prediction note, once: where it named the GPU, the name is "the GPU", and `gpuIds` lists the
// GPUs whose predictions gave it (in rank order).
struct TraceNote {
    std::string text;
    std::vector<std::string> gpuIds;
};

struct TraceChoice {
    std::string source;  // the trace's path
    std::string recordedGpuId, recordedGpuName;
    std::string match;       // how the trace's device was matched to the database
    std::string deviceName;  // as the trace names it
    TraceChoiceOptions options;
    int steps = 0;      // ProfilerSteps (0: one span without steps)
    int predicted = 0;  // rows predicted
    double measuredStepMs = 0;
    double replayedStepMs = 0;  // the replay with the measured times (equals the measured step)
    int64_t recordedBatch = 0;  // found in the shapes where the batch was changed (0: not)
    int64_t batch = 0;          // the predicted job's batch (0: as recorded)
    TrainingPrecision recordedPrecision = TrainingPrecision::Fp32;  // recordedTracePrecision
    TrainingPrecision precision = TrainingPrecision::Fp32;          // the predicted job's
    bool recordShapes = false;
    bool withStack = false;
    int collectiveGroupSize = 0;          // the largest NCCL group recorded, 0 without collectives
    std::vector<std::string> traceNotes;  // what the trace cannot give (KinetoTrace::notes)
    std::vector<TraceChoiceRow> rows;     // ranked
    std::vector<TraceNote> notes;         // the predictions' notes, each once
    std::vector<std::string> assumptions;

    const TraceChoiceRow* recordedRow() const;  // nullptr when the recorded GPU was not asked for
    const TraceChoiceRow* cheapest() const;     // the first priced row predicted, nullptr when none
    const TraceChoiceRow* fastest() const;      // the shortest predicted step, nullptr when none
};

// `origin` is matchTraceGpu's entry (`match`: how it matched). Throws ModelError(trace.source, ...)
// where the trace cannot be predicted, or when none of `gpus` can be.
TraceChoice chooseHardwareForTrace(const KinetoTrace& trace, const GpuSpec& origin, const std::string& match,
                                   const std::vector<const GpuSpec*>& gpus, const TraceChoiceOptions& options = {});

// "of all 28 GPUs", or "of the 22 priced GPUs, out of 28 (4 without a price, 2 not predicted)".
std::string traceRankingScope(const TraceChoice& choice);

// The ranking as CSV (RFC 4180, as hardwareChoiceCsv) and JSON (format "trainscope-trace-choice",
// version kTraceChoiceFormatVersion); docs/report.md lists the fields.
inline constexpr int kTraceChoiceFormatVersion = 1;
std::string traceChoiceCsv(const TraceChoice& choice);
std::string traceChoiceJson(const TraceChoice& choice);
const std::vector<std::string>& traceChoiceCsvColumns();

}  // namespace ts::predictors
