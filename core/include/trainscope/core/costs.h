#pragma once
// Analytic per-layer and per-module costs of a graph at a concrete batch size.
#include <cstdint>
#include <string>
#include <vector>

#include "trainscope/core/graph.h"
#include "trainscope/core/ops.h"

namespace ts {

struct LayerCost {
    int op = -1;                      // operation index in the graph
    std::vector<int64_t> outputShape; // first output at the evaluated batch size
    int64_t parameters = 0;           // parameters owned by this operation
    OpCost cost;
    double activationBytes = 0;       // bytes this operation saves for backward
};

struct ModuleCost {
    std::string path;        // "" for the model itself
    std::string name;        // last component ("conv1"), model name for the root
    int parent = -1;
    std::vector<int> children;  // module indices
    std::vector<int> layers;    // operations directly in this module
    int64_t parameters = 0;     // this module and its descendants
    double forwardFlops = 0, backwardFlops = 0, bytesRead = 0, bytesWritten = 0, activationBytes = 0;
    int operationCount = 0;
};

struct CostTotals {
    int64_t parameters = 0;
    double forwardFlops = 0, backwardFlops = 0, bytesRead = 0, bytesWritten = 0;
    double activationBytes = 0;  // unique tensors saved for backward
    double parameterBytes = 0;
    double inputBytes = 0;
};

struct ModelCosts {
    int64_t batch = 1, seq = 0;
    std::vector<LayerCost> layers;   // one per operation, graph order
    std::vector<ModuleCost> modules; // modules[0] is the model; pre-order
    CostTotals totals;
};

// seq <= 0 uses the graph's default sequence length.
ModelCosts computeCosts(const Graph& g, int64_t batch, int64_t seq = 0);

}  // namespace ts
