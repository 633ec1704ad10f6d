#pragma once
// The training-scenario options that `predict` and `report` share (optimizer, data-parallel GPUs,
// interconnect, checkpointing), parsed once with the same messages.
#include <cstdint>
#include <optional>
#include <string>

#include "trainscope/predictors/iteration/training_scenario.h"

namespace CLI {
class App;
}

namespace ts::cli {

std::string quoted(const std::string& s);

struct ScenarioOptions {
    std::string optimizer;  // "" : the profile's, else sgd
    int gpus = 1;
    std::string interconnect = "nvlink";
    double infinibandGbps = 400;
    bool checkpointing = false;
};

// --batch: 0 for "auto", N for a number from 1 to 2^30, `modelDefault` when empty; throws
// ModelError naming --batch for anything else.
int64_t batchFrom(const std::string& text, int64_t modelDefault);

// --optimizer, --gpus, --interconnect, --infiniband-gbps and --checkpointing on `cmd`.
void addScenarioOptions(CLI::App& cmd, ScenarioOptions& o);

// Throws ModelError naming the option for an unknown optimizer or interconnect.
predictors::TrainingScenario scenarioFromOptions(const ScenarioOptions& o,
                                                 std::optional<predictors::Optimizer> profileOptimizer);

}  // namespace ts::cli
