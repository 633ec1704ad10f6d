#pragma once
// Renders a model's analytic costs: a readable module-tree table, or JSON.
#include <nlohmann/json.hpp>
#include <ostream>

#include "trainscope/core/costs.h"
#include "trainscope/core/graph.h"

namespace ts::cli {

nlohmann::json inspectJson(const Graph& g, const ModelCosts& costs);
// maxDepth < 0: the whole tree; otherwise modules deeper than maxDepth are folded into their parent's row.
void printInspectTable(std::ostream& os, const Graph& g, const ModelCosts& costs, int maxDepth);

// "25.56 M", "4.09 G", "1.5 k" and "98.0 MiB".
std::string humanCount(double v);
std::string humanBytes(double v);

}  // namespace ts::cli
