#pragma once
// Measured time of a trace's top-level operators, per module scope (TraceOperator::scope, the
// "a/b/c" chain of record_function labels and nn.Module names) and operator name, averaged over
// its steps: the Modules view's tree for a trace. Plain C++ only.
#include <cstdint>
#include <string>
#include <vector>

#include "trace_document.h"

namespace ts::gui {

struct TraceScopeTotal {
    std::string scope;  // "a/b/c"; "" for operators outside every scope
    std::string operatorName;
    double calls = 0;    // per step
    double cpuMs = 0;    // per step: the operators' inclusive host time
    double gpuMs = 0;    // per step: the traced GPU's activities they (or operators inside them) launched
    double kernels = 0;  // per step
};

// One entry per (scope, top-level operator name), in order of first appearance. Operators and
// activities outside every step are left out when the trace has steps (as the summary does).
std::vector<TraceScopeTotal> traceScopeTotals(const TraceDocument& doc);

// For each operator of the trace, the top-level operator of its thread that encloses it (itself
// at depth 0; -1 when none was recorded).
std::vector<int32_t> topLevelOperators(const KinetoTrace& trace);

}  // namespace ts::gui
