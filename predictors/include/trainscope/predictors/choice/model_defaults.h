#pragma once
// What a training scenario opens with for a model, by its kind: the optimizer and the training goal
// people use for such a model, unless the user (or a measured profile) says otherwise. One rule for
// the explorer, the CLI's predict and report, and the report the explorer exports.
//
//   Language models (token ids in: BERT, GPT-2, the Transformer, GNMT, Transformer-XL, a Hugging Face
//   text model): AdamW, a goal in tokens, throughput in tokens per second.
//   Vision models (images in: classifiers, detectors, ViT, GANs): SGD with momentum, epochs of
//   ImageNet-1k.
//   Other models (recommenders: user and item ids without a sequence): plain SGD, epochs of
//   ImageNet-1k's size as a yardstick.
#include <cstdint>
#include <string>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/graph.h"
#include "trainscope/predictors/choice/training_cost.h"
#include "trainscope/predictors/iteration/training_scenario.h"

namespace ts::predictors {

enum class ModelKind : uint8_t { Language, Vision, Other };
const char* modelKindName(ModelKind k);  // "language", "vision", "other"

// Language: a model input of an integer type whose shape has the sequence dimension (token ids);
// else Vision: a floating input of rank 4 ([N, C, H, W]); else Other.
ModelKind modelKindOf(const Graph& g);

// Assumed: a language model's default goal is 20 training tokens per parameter, the
// compute-optimal ratio of Hoffmann et al. 2022 ("Training Compute-Optimal Large Language Models",
// Chinchilla), which the user replaces with their own number of tokens.
inline constexpr double kTokensPerParameter = 20;

struct ScenarioDefaults {
    ModelKind kind = ModelKind::Other;
    Optimizer optimizer = Optimizer::Sgd;
    TrainingGoal goal;
    std::string goalBasis;  // where the goal comes from, one phrase ("20 tokens per parameter (Chinchilla)")
};
ScenarioDefaults scenarioDefaultsFor(const Graph& g);

// Assumed, as people train such models: a language model in 16-bit autocast (bf16 where `gpu` has
// it, or where no one GPU is named; else fp16; fp32 on a GPU without tensor cores), others at
// PyTorch's default fp32.
TrainingPrecision defaultPrecisionFor(ModelKind kind, const GpuSpec* gpu);

}  // namespace ts::predictors
