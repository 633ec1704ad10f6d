#pragma once
// One generation of the explorer's predictions, never changed once made: the model it is of, the
// settings and goal it answers, the target GPU's per-layer prediction, every GPU's, the target's
// batch sweep and recommended batch, and the model's costs at the batch. The views and item models
// read a snapshot only, so that no view mixes the figures of two settings; a worker thread makes
// the next one while the window shows the last (explorer_state.h). Plain C++ (core/ and
// predictors/), so it is made off the GUI thread.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trainscope/core/costs.h"
#include "trainscope/core/fine_tuning.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profile.h"
#include "trainscope/predictors/choice/model_defaults.h"
#include "trainscope/predictors/choice/training_cost.h"
#include "trainscope/predictors/iteration/layer_bounds.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace ts::gui {

struct ExplorerSettings {
    int64_t batch = 32;
    predictors::TrainingPrecision precision = predictors::TrainingPrecision::Fp32;
    predictors::Optimizer optimizer = predictors::Optimizer::Sgd;
    // How its update runs (PyTorch's foreach=, fused=); remembered between sessions.
    predictors::OptimizerImplementation optimizerImplementation = predictors::OptimizerImplementation::Foreach;
    std::string gpuId = "a100-sxm4-80gb";
    int gpus = 1;
    predictors::InterconnectKind interconnect = predictors::InterconnectKind::NvLink;
    predictors::Checkpointing checkpointing = predictors::Checkpointing::None;
    int zeroStage = 0;         // ZeRO stage over the data-parallel GPUs (3: FSDP full sharding)
    // LoRA adapters of this rank on the blocks' linear layers, the base frozen (PEFT's all-linear);
    // 0: every parameter trains. Another rank is another analysis of the model; not remembered
    // between sessions: it belongs to the model.
    int64_t loraRank = 0;
    double loraDropout = 0;  // PEFT's lora_dropout of the adapters (with loraRank > 0)
    // GPUs of a tensor-parallel group (a Hugging Face config built as one GPU's shard; `gpus` counts
    // all of them, a multiple of it). Another degree is another graph; it belongs to the model.
    int tensorParallel = 1;
    bool sequenceParallel = false;  // with tensorParallel: Megatron-LM's sequence parallelism
    // GPUs of an expert-parallel group (a mixture of experts built with its share of the routed
    // experts; `gpus` a multiple of it). Another degree is another graph; it belongs to the model.
    int expertParallel = 1;
    int64_t accumulation = 1;  // micro-batches per optimizer step (the batch is a micro-batch)
    bool channelsLast = false;  // activations channels-last (TrainingScenario::channelsLast)
    bool masterWeights = true;  // bf16-params with an fp32 master copy (TrainingScenario::masterWeights)
    // Sequence length of a sequence model; 0: the model's own (its ?seq=, or the profile's). Not
    // remembered between sessions: it belongs to the model.
    int64_t seq = 0;
    // Everything but the batch size: what a prepared sweep plan was made for.
    bool sameButBatch(const ExplorerSettings& o) const;
};

// The open model, shared by its snapshots and by the jobs predicting it.
struct ExplorerModel {
    std::string spec;    // what the user opened: zoo:NAME, a model file or a profile file
    int generation = 0;  // a new number for every model opened (not for another sequence length)
    std::shared_ptr<const Graph> graph;      // as analysed: with LoRA's adapters where lora.rank > 0
    std::shared_ptr<const Graph> baseGraph;  // as opened, or rebuilt as another shard (null: `graph` is)
    LoraOptions lora;                        // the adapters `graph` has (rank 0: none)
    int tensorParallel = 1;  // the graph's tensor-parallel group (ModelAnalysis::tensorParallel)
    bool sequenceParallel = false;
    int expertParallel = 1;                  // the graph's expert-parallel group (ModelAnalysis::expertParallel)
    std::shared_ptr<const Profile> profile;  // measured runs of this model, when some were opened or recorded
    // At `seq`, starting from `profile` where it was measured at that length.
    std::shared_ptr<const predictors::TrainingPredictor> predictor;
    int64_t seq = 0;                        // the predictor's sequence length; 0 for a model without one
    predictors::ScenarioDefaults defaults;  // its kind's optimizer and goal (model_defaults.h)
    std::string profileProblem;             // why `profile` is not used at `seq` ("" when it is, or none)
    bool usesProfile() const { return predictor && predictor->hasProfile(); }
};

// `graph` and `profile` with a predictor at `seq` (0: the profile's, else the graph's own). Where the
// profile cannot be used (another length, another model) the predictor starts from the calibration
// and profileProblem says why. Throws ModelError when the model cannot be analysed at that length.
std::shared_ptr<const ExplorerModel> makeExplorerModel(
    std::string spec, int generation, std::shared_ptr<const Graph> graph, std::shared_ptr<const Profile> profile,
    int64_t seq, const GpuDatabase& db, std::shared_ptr<const Graph> baseGraph = nullptr, LoraOptions lora = {});

struct PredictionSnapshot {
    std::shared_ptr<const ExplorerModel> model;  // null: no model (error says why, or a trace is open)
    std::shared_ptr<const GpuDatabase> database;
    ExplorerSettings settings;  // what these predictions are for (seq resolved to the model's)
    predictors::TrainingGoal goal;
    std::string error;  // why there is no model

    predictors::TrainingPrediction current;               // the target GPU, per layer
    std::vector<predictors::TrainingPrediction> allGpus;  // database order, per layer only the target
    predictors::GpuSweep sweep;                           // the target over batch sizes
    // The smallest of the report's candidate batch sizes within 3% of the best throughput that
    // fits the target (predictors' recommendBatch, as the report chooses); 0: none fits.
    int64_t recommendedBatch = 0;
    ModelCosts costs;  // at settings.batch and the model's sequence length

    // Prepared when the settings other than the batch size were last changed, so that another batch
    // size costs microseconds per GPU (atBatch).
    std::shared_ptr<const predictors::SweepPlan> plan;        // every GPU of the database
    std::shared_ptr<const predictors::SweepPlan> targetPlan;  // the target alone: the plot's sweep
    std::shared_ptr<const predictors::LayerBounds> bounds;    // the target's iteration rows (null: unsupported)
    int64_t sweptUpTo = 0;                                    // the sweep's last batch size

    bool hasModel() const { return model != nullptr; }
    const Graph* graph() const { return model ? model->graph.get() : nullptr; }
    const predictors::TrainingPredictor* predictor() const { return model ? model->predictor.get() : nullptr; }
    const GpuSpec* targetGpu() const { return database ? database->find(settings.gpuId) : nullptr; }
    // A language model's throughput is counted in tokens (model_defaults.h) as well as samples.
    bool countsTokens() const { return model && model->seq > 0; }
};

// The largest batch size the explorer offers.
inline constexpr int64_t kMaxExplorerBatch = 4096;

// Every GPU at `settings` predicted in full, with the plans later batch sizes reuse. The model is
// first rebuilt at settings.seq where its predictor is at another length. Checks `cancelled` between
// GPUs and returns null once it is set. A scenario the predictor rejects comes back as an
// unsupported current prediction with the reason; nothing is thrown.
std::shared_ptr<const PredictionSnapshot> predictSnapshot(std::shared_ptr<const ExplorerModel> model,
                                                          std::shared_ptr<const GpuDatabase> db,
                                                          ExplorerSettings settings,
                                                          const predictors::TrainingGoal& goal,
                                                          const std::atomic<bool>* cancelled = nullptr);

// `from` at another batch size from its plans: the target's per-layer prediction, the costs at the
// batch and every GPU's headline figures; the plot's sweep is reused unless the batch moved past
// it. Null when `from` has no plan (its prediction failed): predict it in full instead.
std::shared_ptr<const PredictionSnapshot> atBatch(const PredictionSnapshot& from, int64_t batch);

// A snapshot with no model: `error` says why ("" when a trace is open instead).
std::shared_ptr<const PredictionSnapshot> emptySnapshot(std::shared_ptr<const GpuDatabase> db,
                                                        const ExplorerSettings& settings,
                                                        const predictors::TrainingGoal& goal, std::string error);

}  // namespace ts::gui
