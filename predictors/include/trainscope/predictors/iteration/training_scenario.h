#pragma once
// What a training prediction is asked about: precision, optimizer, batch size, data-parallel
// GPUs and their interconnect, activation checkpointing. Plain values, parsed from the names the
// command line and the profile file use.
#include <cstdint>
#include <optional>
#include <string>

namespace ts::predictors {

// How training runs its arithmetic. Fp32 is PyTorch's default for float32 models: matrix
// multiplies in FP32 (torch.backends.cuda.matmul.allow_tf32 = False) but convolutions on TF32 tensor
// cores where the GPU has them (torch.backends.cudnn.allow_tf32 = True, compute capability 8.0 and
// newer). Fp32Strict turns TF32 off everywhere; Tf32 turns it on for matrix multiplies too. Amp* is
// PyTorch autocast: GEMMs and convolutions in 16 bits (tensor cores), softmax/normalisations/losses
// in fp32, fp32 master weights. Fp8 is the Transformer Engine recipe: GEMM operands in FP8, the rest
// as AmpBf16 (analytic only).
enum class TrainingPrecision : uint8_t { Fp32, Tf32, AmpFp16, AmpBf16, Fp8, Fp32Strict };
inline constexpr int kTrainingPrecisionCount = 6;
// In the order lists show them.
inline constexpr TrainingPrecision kAllTrainingPrecisions[] = {
    TrainingPrecision::Fp32,    TrainingPrecision::Fp32Strict, TrainingPrecision::Tf32,
    TrainingPrecision::AmpFp16, TrainingPrecision::AmpBf16,    TrainingPrecision::Fp8};
// Precisions that differ in the size of some element (what model analysis computes bytes for):
// Fp32Strict moves the same bytes as Fp32.
inline constexpr int kElementPrecisionCount = 5;
inline constexpr int elementIndexOf(TrainingPrecision p) {
    return p == TrainingPrecision::Fp32Strict ? int(TrainingPrecision::Fp32) : int(p);
}

// Adam8bit is bitsandbytes' Adam with block-wise 8-bit states (one fused kernel per step).
enum class Optimizer : uint8_t { Sgd, SgdMomentum, Adam, AdamW, Adam8bit };
inline constexpr Optimizer kAllOptimizers[] = {Optimizer::Sgd, Optimizer::SgdMomentum, Optimizer::Adam,
                                               Optimizer::AdamW, Optimizer::Adam8bit};
enum class InterconnectKind : uint8_t { NvLink, Pcie, InfiniBand };

// "fp32", "fp32-strict", "tf32", "amp-fp16", "amp-bf16", "fp8"
const char* trainingPrecisionName(TrainingPrecision p);
const char* optimizerName(Optimizer o);                  // "sgd", "sgd-momentum", "adam", "adamw", "adam8bit"
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
