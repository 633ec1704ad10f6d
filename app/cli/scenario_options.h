#pragma once
// The training-scenario options that `predict` and `report` share (optimizer, sequence length,
// data-parallel GPUs, interconnect, checkpointing), parsed once with the same messages.
#include <climits>
#include <cstdint>
#include <optional>
#include <string>

#include "trainscope/predictors/iteration/training_scenario.h"

namespace CLI {
class App;
}

namespace ts {
class Graph;
}

namespace ts::cli {

std::string quoted(const std::string& s);

struct ScenarioOptions {
    std::string optimizer;  // "" : the profile's, else the model's kind's (predictors/choice/model_defaults.h)
    std::string optimizerImplementation = "foreach";
    int64_t seq = 0;        // 0: the profile's, else the model's
    int gpus = 1;            // all of them: data-parallel replicas x tensorParallel
    int tensorParallel = 1;  // GPUs of a tensor-parallel group (the model is built as one GPU's shard)
    bool sequenceParallel = false;  // with tensorParallel: Megatron-LM's sequence parallelism
    int expertParallel = 1;  // GPUs of an expert-parallel group (the model is built with its share of the experts)
    std::string interconnect = "nvlink";
    double infinibandGbps = 400;
    int gpusPerNode = 8;
    std::string checkpointing;  // "": none; a Checkpointing name
    int64_t accumulation = 1;
    bool channelsLast = false;
    bool keepGradients = false;
    bool noMasterWeights = false;  // bf16-params without the fp32 master copy
    int zero = 0;
    bool fsdp = false;
    // Fine-tuning set-up (core/include/trainscope/core/fine_tuning.h), applied to the model graph.
    int64_t lora = kNotGiven;
    std::string loraTargets;  // comma-separated module-path substrings
    double loraAlpha = 0;
    double loraDropout = 0;
    bool loraInModelDtype = false;  // PEFT's autocast_adapter_dtype=False (or PEFT before 0.11)
    bool qlora = false;
    std::string train;  // comma-separated parameter-name substrings: only those train
    static constexpr int64_t kNotGiven = INT64_MIN;
    bool fineTuning() const {
        return lora != kNotGiven || qlora || !train.empty() || !loraTargets.empty() || loraDropout != 0 ||
               loraInModelDtype;
    }
};

// --batch: 0 for "auto", N for a number from 1 to 2^30, `modelDefault` when empty; throws
// ModelError naming --batch for anything else.
int64_t batchFrom(const std::string& text, int64_t modelDefault);

// --optimizer, --seq, --gpus, --interconnect, --infiniband-gbps, --checkpointing and the fine-tuning
// options on `cmd`.
void addScenarioOptions(CLI::App& cmd, ScenarioOptions& o);

// The fine-tuning options applied to `g` (frozen parameters, LoRA, QLoRA); nothing without them.
// modelIn16Bit: a 16-bit model (bf16-params, fp16-params) is among the precisions predicted, where with
// master weights (FSDP's and DeepSpeed's mixed precision, apex's O2) the adapters compute in the model's
// 16 bits; otherwise they compute in fp32, as PEFT creates them. Throws ModelError naming the option
// (--lora 0, --qlora without --lora, a pattern matching nothing).
void applyFineTuning(Graph& g, const ScenarioOptions& o, bool modelIn16Bit = false);

// Throws ModelError naming --no-master-weights when it is given without bf16-params among the
// precisions.
void checkMasterWeights(const ScenarioOptions& o, bool bf16Params);

// Throws ModelError naming the option for an unknown optimizer or interconnect. Without --optimizer
// the profile's optimizer, else `modelDefault` (the model's kind's).
predictors::TrainingScenario scenarioFromOptions(const ScenarioOptions& o,
                                                 std::optional<predictors::Optimizer> profileOptimizer,
                                                 predictors::Optimizer modelDefault);

// The model spec to load under --tensor-parallel: `spec` with the Hugging Face config option
// tensor_parallel=N added (as is without it). Throws ModelError naming --tensor-parallel for a model
// that is not a Hugging Face config.json, or whose spec already sets the option.
std::string modelSpecFor(const std::string& spec, const ScenarioOptions& o);
// After loading: ModelError naming --tensor-parallel when the graph is not the shard asked for
// (a TrainScope JSON model, which takes no such option).
void checkTensorParallel(const ScenarioOptions& o, const Graph& g, const std::string& spec);

// --seq for a model that has no sequence dimension: ModelError naming --seq and the model.
void checkSequenceOption(const ScenarioOptions& o, const Graph& g);

}  // namespace ts::cli
