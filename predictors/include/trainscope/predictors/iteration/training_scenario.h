#pragma once
// What a training prediction is asked about: precision, optimizer, batch size, data-parallel
// GPUs and their interconnect, activation checkpointing policy. Plain values, parsed from the names the
// command line and the profile file use.
#include <cstdint>
#include <optional>
#include <string>

#include "trainscope/core/training_vocabulary.h"

namespace ts::predictors {

// The precision and optimizer vocabulary is core's (training_vocabulary.h), shared with the
// profiler and the GUI.
using ts::elementIndexOf;
using ts::isAutocast;
using ts::kAllOptimizers;
using ts::kAllTrainingPrecisions;
using ts::kElementPrecisionCount;
using ts::kTrainingPrecisionCount;
using ts::Optimizer;
using ts::OptimizerImplementation;
using ts::optimizerName;
using ts::parseOptimizer;
using ts::parseTrainingPrecision;
using ts::TrainingPrecision;
using ts::trainingPrecisionName;

// Activation checkpointing: which forward work backward runs again, and what autograd keeps instead.
// None keeps everything. Blocks checkpoints every numbered block (`model.layers.3`), keeping its
// input only: Hugging Face's gradient_checkpointing and torchtitan's "full" AC.
// EveryOtherBlock checkpoints the 2nd, 4th, ... block and keeps the others whole: torchtitan's
// "selective layer" AC (ac_freq 2). SelectiveOps checkpoints every block but keeps the outputs of
// its attention operators and of its 1st, 3rd, 5th ... linear layer, recomputing the rest:
// torchtitan's "selective op" AC (its policy over aten.mm and the attention kernels).
// Sqrt splits the working operations into sqrt(L) equal segments and recomputes all but the last
// (Chen et al. 2016), for models without numbered blocks.
enum class Checkpointing : uint8_t { None, Blocks, EveryOtherBlock, SelectiveOps, Sqrt };
inline constexpr int kCheckpointingCount = 5;
inline constexpr Checkpointing kAllCheckpointings[] = {Checkpointing::None, Checkpointing::Blocks,
                                                      Checkpointing::EveryOtherBlock, Checkpointing::SelectiveOps,
                                                      Checkpointing::Sqrt};
// "none", "blocks", "every-other-block", "selective-ops", "sqrt"
const char* checkpointingName(Checkpointing c);
// Case-insensitive; also "full" (blocks), "selective-layer" (every-other-block), "selective-op"
// (selective-ops), "off"; nullopt for anything else.
std::optional<Checkpointing> parseCheckpointing(const std::string& name);
std::string checkpointingNames();  // "none, blocks, every-other-block, selective-ops or sqrt"
// For sentences: "activation checkpointing of every block", ... ("" for None).
std::string checkpointingPhrase(Checkpointing c);

enum class InterconnectKind : uint8_t { NvLink, Pcie, InfiniBand };

const char* interconnectName(InterconnectKind i);  // "nvlink", "pcie", "infiniband"
// Case-insensitive ("ib" for infiniband); nullopt for anything else.
std::optional<InterconnectKind> parseInterconnect(const std::string& name);

// A predicted figure and the range it is expected in (see docs/prediction.md for where each
// range comes from). low <= value <= high.
struct Interval {
    double value = 0;
    double low = 0;
    double high = 0;
    // value with a symmetric relative error e on the log scale: [value / (1 + e), value * (1 + e)].
    static Interval relative(double value, double e);
    static Interval exact(double value) { return {value, value, value}; }
};

// Data parallelism as PyTorch DDP runs it: one replica per GPU, gradients all-reduced in buckets
// during backward.
struct DataParallel {
    int gpus = 1;
    InterconnectKind interconnect = InterconnectKind::NvLink;
    double infinibandGbps = 400;  // per GPU (one NDR port each); an assumption, configurable
    // GPUs in one node (an HGX/DGX board of 8 by default; DGX-2: 16). With InfiniBand, the GPUs of
    // a node ring over their own link and only the rest crosses the network.
    int gpusPerNode = 8;
    double bucketBytes = 25.0 * (1 << 20);      // DDP bucket_cap_mb = 25
    double firstBucketBytes = 1.0 * (1 << 20);  // DDP's first bucket, kept small to start early
    // ZeRO stage (DeepSpeed; FSDP FULL_SHARD is stage 3): 0 replicates everything (DDP), 1 shards
    // the optimizer states over the GPUs, 2 the gradients too, 3 the parameters too.
    int zeroStage = 0;
};

struct TrainingScenario {
    int64_t batch = 1;  // per GPU
    TrainingPrecision precision = TrainingPrecision::Fp32;
    Optimizer optimizer = Optimizer::Sgd;  // the profiler's default
    OptimizerImplementation optimizerImplementation = OptimizerImplementation::Foreach;  // PyTorch's default
    DataParallel dataParallel;
    Checkpointing checkpointing = Checkpointing::None;
    // Gradient accumulation: `batch` is the micro-batch; the optimizer step and the gradients'
    // reduction happen once per `accumulation` micro-batches (global batch = batch x accumulation x GPUs).
    int64_t accumulation = 1;
    // Activations in the channels-last memory format (`model.to(memory_format=torch.channels_last)`),
    // which tensor-core convolutions run on directly; PyTorch's default is channels-first, around
    // which cuDNN transposes (prepareIterationTimes).
    bool channelsLast = false;
    // zero_grad zeroes the gradients instead of freeing them (set_to_none=False, PyTorch's default
    // before 2.0): they stay allocated through the next forward, as gradient accumulation keeps them.
    bool keepGradients = false;
    // With bf16-params: an fp32 master copy of the weights holds the optimizer's updates, with fp32
    // states (FSDP's MixedPrecision, Megatron-LM, DeepSpeed). false: the optimizer updates the bf16
    // parameters themselves, its states bf16 too (a model loaded in bf16 and trained as it is, as
    // Hugging Face's Trainer does with torch_dtype=bfloat16); adapters a set-up adds stay fp32, as
    // PEFT creates them. No effect at other precisions.
    bool masterWeights = true;
};

}  // namespace ts::predictors
