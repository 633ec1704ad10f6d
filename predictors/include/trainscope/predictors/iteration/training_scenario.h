#pragma once
// What a training prediction is asked about: precision, optimizer, batch size, data-parallel
// GPUs and their interconnect, activation checkpointing. Plain values, parsed from the names the
// command line and the profile file use.
#include <cstdint>
#include <optional>
#include <string>

namespace ts::predictors {

// How training runs its arithmetic. Amp* is PyTorch autocast: GEMMs and convolutions in 16 bits
// (tensor cores), softmax/normalisations/losses in fp32, fp32 master weights. Fp8 is the
// Transformer Engine recipe: GEMM operands in FP8, the rest as AmpBf16 (analytic only).
enum class TrainingPrecision : uint8_t { Fp32, Tf32, AmpFp16, AmpBf16, Fp8 };
inline constexpr int kTrainingPrecisionCount = 5;
inline constexpr TrainingPrecision kAllTrainingPrecisions[] = {TrainingPrecision::Fp32, TrainingPrecision::Tf32,
                                                               TrainingPrecision::AmpFp16, TrainingPrecision::AmpBf16,
                                                               TrainingPrecision::Fp8};

enum class Optimizer : uint8_t { Sgd, SgdMomentum, Adam, AdamW };
enum class InterconnectKind : uint8_t { NvLink, Pcie, InfiniBand };

const char* trainingPrecisionName(TrainingPrecision p);  // "fp32", "tf32", "amp-fp16", "amp-bf16", "fp8"
const char* optimizerName(Optimizer o);                  // "sgd", "sgd-momentum", "adam", "adamw"
const char* interconnectName(InterconnectKind i);        // "nvlink", "pcie", "infiniband"
// Case-insensitive; "fp16"/"bf16" are accepted for the amp- names. nullopt for anything else.
std::optional<TrainingPrecision> parseTrainingPrecision(const std::string& name);
std::optional<Optimizer> parseOptimizer(const std::string& name);
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
    double infinibandGbps = 400;                // per GPU (one NDR port each); an assumption, configurable
    double bucketBytes = 25.0 * (1 << 20);      // DDP bucket_cap_mb = 25
    double firstBucketBytes = 1.0 * (1 << 20);  // DDP's first bucket, kept small to start early
};

struct TrainingScenario {
    int64_t batch = 1;  // per GPU
    TrainingPrecision precision = TrainingPrecision::Fp32;
    Optimizer optimizer = Optimizer::Sgd;  // the profiler's default
    DataParallel dataParallel;
    bool checkpointing = false;  // activation checkpointing in sqrt(L) segments
};

}  // namespace ts::predictors
