#pragma once
// `trainscope-cli inspect TRACE`: a PyTorch profiler (Kineto) trace explained, as tables or JSON.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "trainscope/core/trace_summary.h"

namespace ts::cli {

nlohmann::json traceSummaryJson(const TraceSummary& s);
void printTraceSummary(std::ostream& os, const TraceSummary& s);

// inspect's handling of a trace path: reads it, prints the summary; 0 on success.
int runInspectTrace(const std::string& path, bool json, int top);

}  // namespace ts::cli
