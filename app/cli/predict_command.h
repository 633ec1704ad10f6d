#pragma once
// `predict`: training time, throughput and memory of a model on every GPU of the database (or
// one), at a precision, optimizer, batch size (or the largest that fits), data-parallel GPU count
// and interconnect, with and without activation checkpointing; intervals on every figure.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenario_options.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profile.h"
#include "trainscope/predictors/choice/model_defaults.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace CLI {
class App;
}

namespace ts::cli {

struct PredictOptions {
    std::string model;         // MODEL as for inspect, or a PROFILE file (see loadProfileIfAny)
    std::string gpu = "all";   // a GPU id or name, or all
    std::string batch;         // N, or auto (the largest that fits each GPU); default: the model's
    std::string precision;     // "" : fp32 for a model, as-recorded for a trace
    ScenarioOptions scenario;  // optimizer, sequence length, data-parallel GPUs, interconnect, checkpointing
    bool json = false;
    bool layers = false;  // every layer's times (JSON: "layers" per GPU; text: all instead of the top 10)
    std::vector<std::string> gpuDbFiles;
};

// Registers the subcommand and its options on `app`; returns it so run() can ask parsed().
CLI::App* addPredictCommand(CLI::App& app, PredictOptions& o);
int runPredict(const PredictOptions& o);

// The measured profile in `path`, when `path` is a TrainScope profile file (ts::isProfileFile);
// nothing otherwise, and the argument is read as a MODEL. With a profile, `predict` loads the model
// named in profile.scenario.model and predicts from the measurements (source "measured profile").
std::optional<Profile> loadProfileIfAny(const std::string& path);

// What predict and report start from: the model MODEL names, or the model a PROFILE names with its
// measurements as the predictions' source, at --seq (0: the profile's, else the model's).
struct PredictionInput {
    std::unique_ptr<Graph> graph;
    std::unique_ptr<predictors::TrainingPredictor> predictor;
    std::optional<predictors::Optimizer> profileOptimizer;  // the profile's, when one was given
    std::optional<predictors::TrainingPrecision> profilePrecision;
    predictors::ScenarioDefaults defaults;                  // the model's kind's optimizer and goal
};
// `scenario`'s fine-tuning options (LoRA, frozen parameters) transform the model first; they
// apply to a model, not to a measured profile. modelIn16Bit: as applyFineTuning's.
PredictionInput loadPredictionInput(const std::string& modelOrProfile, const GpuDatabase& db,
                                    const ScenarioOptions& scenario, bool modelIn16Bit = false);

}  // namespace ts::cli
