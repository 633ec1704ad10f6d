// libFuzzer target: a PyTorch profiler (Kineto) trace through ts::readKinetoTraceText (the gzip or
// zlib inflater, the SAX handler with its depth, size and range limits, the join), then the
// summary and the profile conversion. A trace it accepts must give a summary whose figures hold
// together: busy time within the step's window, exposed communication within communication. Then
// the trace predicted on another GPU (predictors/trace): on its own GPU it must give back its
// measured steps, and every predicted step must be a finite, non-negative time, also at another
// batch size and precision (predictors/trace/trace_change.h), and at its own batch its measured steps.
#include <cmath>
#include <cstdlib>
#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/trace_summary.h"
#include "trainscope/predictors/trace/trace_prediction.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    ts::KinetoTrace trace;
    try {
        trace = ts::readKinetoTraceText(text, "fuzz.json");
    } catch (const ts::ModelError&) {
        return 0;
    }
    const ts::TraceSummary summary = ts::summarizeTrace(trace, ts::GpuDatabase::builtin(), 5);
    for (const ts::TraceStepSummary& s : summary.steps) {
        const double slack = 1e-6 * (1 + s.gpuWindowMs);
        if (s.busyMs > s.gpuWindowMs + slack || s.idleMs < 0) std::abort();
        if (s.exposedCommunicationMs > s.communicationMs + slack || s.hostBoundMs > s.idleMs + slack) std::abort();
    }
    (void)ts::profileFromKinetoTrace(trace);

    const ts::GpuDatabase& db = ts::GpuDatabase::builtin();
    const ts::GpuSpec* origin = ts::matchTraceGpu(trace, db);
    if (!ts::predictors::tracePredictionProblem(trace, origin).empty()) return 0;
    const ts::predictors::TracePrediction own = ts::predictors::predictTrace(trace, *origin, *origin);
    for (const ts::predictors::ReplayStep& s : own.replay.steps)
        if (!(std::abs(s.predictedMs - s.measuredMs) <= 1e-6 * (1 + std::abs(s.measuredMs)))) std::abort();
    ts::predictors::TraceChange fp32;
    fp32.math = ts::predictors::Fp32Math::PyTorchDefault;
    const ts::predictors::TracePrediction other = ts::predictors::predictTrace(trace, *origin, db.get("t4"), fp32);
    for (const ts::predictors::ReplayStep& s : other.replay.steps)
        if (!std::isfinite(s.predictedMs)) std::abort();

    // At the recorded batch on its own GPU it gives back its measured steps; at twice the batch
    // and under autocast (or out of it) every step is a finite, non-negative time. A trace that
    // cannot take the change (no shapes, an ambiguous batch) is refused with a ModelError.
    const ts::predictors::TraceBatch batch = ts::predictors::findTraceBatch(trace);
    try {
        ts::predictors::TraceChange same;
        same.batch = batch.batch > 0 ? batch.batch : 1;
        const ts::predictors::TracePrediction again = ts::predictors::predictTrace(trace, *origin, *origin, same);
        for (const ts::predictors::ReplayStep& s : again.replay.steps)
            if (batch.batch > 0 && !(std::abs(s.predictedMs - s.measuredMs) <= 1e-6 * (1 + std::abs(s.measuredMs))))
                std::abort();
    } catch (const ts::ModelError&) {
        if (batch.batch > 0) std::abort();  // a batch found is a batch the change takes
    }
    for (const char* precision : {"amp-bf16", "fp32"}) {
        try {
            ts::predictors::TraceChange change = *ts::predictors::parseTracePrecision(precision);
            change.batch = batch.batch > 0 ? 2 * batch.batch : 0;
            const ts::predictors::TracePrediction p =
                ts::predictors::predictTrace(trace, *origin, db.get("h100-sxm"), change);
            for (const ts::predictors::ReplayStep& s : p.replay.steps)
                if (!std::isfinite(s.predictedMs) || s.predictedMs < 0) std::abort();
        } catch (const ts::ModelError&) {
        }
    }
    return 0;
}
