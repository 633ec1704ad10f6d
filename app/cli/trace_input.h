#pragma once
// What `predict TRACE` and `report TRACE` share: the model options a trace cannot take, refused by
// name; --batch and --precision read as the change of the recorded job (trace_change.h); the trace
// read and matched to its GPU's database entry, refused with one line where it cannot be predicted
// (AMD, CPU-only, a GPU the database lacks).
#include <cstdint>
#include <string>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/trace/trace_change.h"

namespace ts::cli {

struct ScenarioOptions;

// What the model options mean nothing for a trace: throws ModelError naming the first one given
// (--seq is the scenario's; --batch and --precision are traceChangeFrom's).
void refuseModelOptionsForTrace(const ScenarioOptions& scenario);

// --precision ("" or as-recorded, fp32, fp32-strict, tf32, amp-fp16, amp-bf16) and --batch ("" or
// N) for a trace; throws ModelError naming the option for anything else (fp8, auto).
predictors::TraceChange traceChangeFrom(const std::string& precision, const std::string& batch);

struct TraceInput {
    KinetoTrace trace;
    const GpuSpec* origin = nullptr;  // the recorded GPU's database entry
    std::string match;                // how it was matched
};
// Reads `path` (ModelError naming it for a damaged file) and matches its GPU; throws
// ModelError(path, tracePredictionProblem) where the trace cannot be predicted.
TraceInput loadTraceInput(const std::string& path, const GpuDatabase& db);

}  // namespace ts::cli
