#pragma once
// An opened PyTorch profiler (Kineto) trace as the explorer shows it: the trace, its summary and
// the database entry of its GPU, built once (off the GUI thread) and then shared read-only by
// every view as std::shared_ptr<const TraceDocument>. Its predictions on other GPUs arrive later,
// as a second immutable result (TracePredictions). Plain C++ only: no Qt.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/trace_summary.h"
#include "trainscope/predictors/trace/trace_prediction.h"

namespace ts::gui {

struct TraceDocument {
    std::string spec;  // the path the user opened
    KinetoTrace trace;
    TraceSummary summary;           // every operator, kernel and host-bound stretch (no top-N cut)
    std::optional<GpuSpec> origin;  // the traced GPU's database entry (a copy: prices may be reloaded)
    std::string originHow;          // how it was matched, or why not
    std::string predictionProblem;  // why it cannot be predicted on other GPUs; "" when it can
    predictors::TraceBatch batch;          // the batch its shapes show (batch.problem: why none)
    predictors::TracePrecision precision;  // the precision it was recorded in
    size_t medianStep = 0;          // index into summary.steps: the step the views show first

    bool bySteps() const { return !trace.steps.empty(); }
    // Where step `i` (index into summary.steps) starts on the trace's clock, in microseconds: the
    // ProfilerStep's CPU start, or for a trace without steps its first event.
    double stepStartUs(size_t i) const;
    // Whether an operator or activity with this step index belongs to step `i`.
    bool inStep(int32_t step, size_t i) const { return !bySteps() || step == int32_t(i); }
};

// The summary's step nearest its median duration (the first such); 0 without steps.
size_t medianStepIndex(const TraceSummary& summary);

// Summarises and matches a trace already read (readKinetoTrace). `spec` names it.
std::shared_ptr<const TraceDocument> makeTraceDocument(std::string spec, KinetoTrace trace, const GpuDatabase& db);

// The trace's median step predicted on one GPU of the database.
struct TraceGpuPrediction {
    std::string gpuId, gpuName;
    bool supported = false;
    std::string problem;                     // why not, when !supported
    predictors::TracePrediction prediction;  // replay.predictedStartUs dropped (the views need the steps)
};

struct TracePredictions {
    std::vector<TraceGpuPrediction> gpus;  // database order, as far as predicted
    bool complete = false;                 // every GPU of the database is in `gpus`
    predictors::TraceChange change;        // the batch size and precision they are at
    std::string changeProblem;             // why the trace cannot take `change` ("" when it can)
    const TraceGpuPrediction* find(const std::string& gpuId) const;
};

// Predicts `doc` on every GPU of `db` in database order, at `change` (as recorded by default).
// After each GPU `partial` (if set) gets the results so far; stops early, incomplete, when
// `cancel` is set. An unpredictable trace (doc.predictionProblem), or one that cannot take the
// change, gives every GPU that problem.
TracePredictions predictTraceOnEveryGpu(const TraceDocument& doc, const GpuDatabase& db,
                                        const std::atomic<bool>* cancel = nullptr,
                                        const std::function<void(const TracePredictions&)>& partial = {},
                                        const predictors::TraceChange& change = {});

}  // namespace ts::gui
