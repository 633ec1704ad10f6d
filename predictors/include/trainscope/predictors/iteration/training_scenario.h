#pragma once
// What a training prediction is asked about: precision, optimizer, batch size, data-parallel
// GPUs and their interconnect, activation checkpointing. Plain values, parsed from the names the
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
using ts::optimizerName;
using ts::parseOptimizer;
using ts::parseTrainingPrecision;
using ts::TrainingPrecision;
using ts::trainingPrecisionName;

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
    DataParallel dataParallel;
    bool checkpointing = false;  // activation checkpointing in sqrt(L) segments
    // Gradient accumulation: `batch` is the micro-batch; the optimizer step and the gradients'
    // reduction happen once per `accumulation` micro-batches (global batch = batch x accumulation x GPUs).
    int64_t accumulation = 1;
};

}  // namespace ts::predictors
