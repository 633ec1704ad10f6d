#pragma once
// What `predict TRACE` and `report TRACE` share: the model options a trace cannot take, refused by
// name; --precision read as what the trace's FP32 kernels run in; the trace read and matched to its
// GPU's database entry, refused with one line where it cannot be predicted (AMD, CPU-only, a GPU
// the database lacks).
#include <cstdint>
#include <string>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/trace/trace_kernels.h"

namespace ts::cli {

struct ScenarioOptions;

// What the model options mean nothing for a trace: throws ModelError naming the first one given
// (`batch`: --batch as given, "" when not; `seq`: 0 when not given).
void refuseModelOptionsForTrace(const ScenarioOptions& scenario, const std::string& batch);

// --precision for a trace: "" or as-recorded, fp32, tf32, fp32-strict; throws ModelError naming
// --precision for anything else (AMP, FP8: they would need the model graph).
predictors::Fp32Math traceMathFrom(const std::string& precision);

struct TraceInput {
    KinetoTrace trace;
    const GpuSpec* origin = nullptr;  // the recorded GPU's database entry
    std::string match;                // how it was matched
};
// Reads `path` (ModelError naming it for a damaged file) and matches its GPU; throws
// ModelError(path, tracePredictionProblem) where the trace cannot be predicted.
TraceInput loadTraceInput(const std::string& path, const GpuDatabase& db);

}  // namespace ts::cli
