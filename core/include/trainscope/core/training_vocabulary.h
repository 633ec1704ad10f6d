#pragma once
// The names of how a model trains, shared by the profiler (core), the predictors and the GUI: one
// enum and one spelling for each precision and optimizer, so that a profile recorded at "amp-bf16"
// is predicted and shown as the same thing.
#include <cstdint>
#include <optional>
#include <string>

namespace ts {

// How training runs its arithmetic. Fp32 is PyTorch's default for float32 models: matrix
// multiplies in FP32 (torch.backends.cuda.matmul.allow_tf32 = False) but convolutions on TF32 tensor
// cores where the GPU has them (torch.backends.cudnn.allow_tf32 = True, compute capability 8.0 and
// newer). Fp32Strict turns TF32 off everywhere; Tf32 turns it on for matrix multiplies too. Amp* is
// PyTorch autocast: GEMMs and convolutions in 16 bits (tensor cores), softmax/normalisations/losses
// in fp32, fp32 master weights. Fp8 is the Transformer Engine recipe: GEMM operands in FP8, the rest
// as AmpBf16 (predicted only; the profiler cannot run it). Bf16Params runs the model itself in
// bf16, without autocast: parameters cast to bf16 for compute, every activation bf16, fp32 master
// weights and optimizer states (FSDP's MixedPrecision(param_dtype=bfloat16) as torchtitan trains,
// Megatron-LM's and DeepSpeed's bf16; predicted only). Fp16Params is the same with fp16 and dynamic loss
// scaling (apex's amp O2, DeepSpeed's fp16 mode, `model.half()` beside fp32 master weights; the
// 16-bit training of GPUs without bf16; predicted only).
enum class TrainingPrecision : uint8_t { Fp32, Tf32, AmpFp16, AmpBf16, Fp8, Fp32Strict, Bf16Params, Fp16Params };
inline constexpr int kTrainingPrecisionCount = 8;
// In the order lists show them.
inline constexpr TrainingPrecision kAllTrainingPrecisions[] = {
    TrainingPrecision::Fp32,       TrainingPrecision::Fp32Strict, TrainingPrecision::Tf32,
    TrainingPrecision::AmpFp16,    TrainingPrecision::AmpBf16,    TrainingPrecision::Bf16Params,
    TrainingPrecision::Fp16Params, TrainingPrecision::Fp8};
// A 16-bit model (its parameters and activations in bf16 or fp16), not autocast over an fp32 one.
inline constexpr bool isModelIn16Bit(TrainingPrecision p) {
    return p == TrainingPrecision::Bf16Params || p == TrainingPrecision::Fp16Params;
}
// Precisions that differ in the size of some element (what model analysis computes bytes for):
// Fp32Strict moves the same bytes as Fp32, and Fp16Params the same as Bf16Params, which takes the
// index after Fp8.
inline constexpr int kElementPrecisionCount = 6;
inline constexpr int elementIndexOf(TrainingPrecision p) {
    return p == TrainingPrecision::Fp32Strict ? int(TrainingPrecision::Fp32) : isModelIn16Bit(p) ? 5 : int(p);
}
inline constexpr TrainingPrecision precisionOfElementIndex(int i) {
    return i == 5 ? TrainingPrecision::Bf16Params : TrainingPrecision(i);
}
// Autocast precisions (16-bit or fp8 GEMMs over fp32 tensors, casts, grad scaling where fp16).
inline constexpr bool isAutocast(TrainingPrecision p) {
    return p == TrainingPrecision::AmpFp16 || p == TrainingPrecision::AmpBf16 || p == TrainingPrecision::Fp8;
}
// Mixed precision of either kind: 16-bit (or fp8) compute weights beside an fp32 master copy.
inline constexpr bool isMixedPrecision(TrainingPrecision p) {
    return isAutocast(p) || isModelIn16Bit(p);
}

// Adam8bit is bitsandbytes' Adam with block-wise 8-bit states (one fused kernel per step;
// predicted only, the profiler cannot run it).
enum class Optimizer : uint8_t { Sgd, SgdMomentum, Adam, AdamW, Adam8bit };
inline constexpr Optimizer kAllOptimizers[] = {Optimizer::Sgd, Optimizer::SgdMomentum, Optimizer::Adam,
                                               Optimizer::AdamW, Optimizer::Adam8bit};

// How the optimizer's update runs (PyTorch's `foreach=` and `fused=` arguments of torch.optim):
// foreach (PyTorch's default on CUDA since 2.0) updates every tensor of a list per kernel, one
// pass per operation of the update, and Adam's holds one parameter-sized temporary; for-loop is one
// tensor at a time (`foreach=False`, Hugging Face's own `adamw_hf`), kernels per tensor and a
// temporary the size of the largest tensor; fused (`fused=True`, apex's FusedAdam) is one pass.
// bitsandbytes' 8-bit Adam is always its own fused kernel.
enum class OptimizerImplementation : uint8_t { Foreach, ForLoop, Fused };
inline constexpr OptimizerImplementation kAllOptimizerImplementations[] = {
    OptimizerImplementation::Foreach, OptimizerImplementation::ForLoop, OptimizerImplementation::Fused};

// "fp32", "fp32-strict", "tf32", "amp-fp16", "amp-bf16", "bf16-params", "fp16-params", "fp8"
const char* trainingPrecisionName(TrainingPrecision p);
const char* optimizerName(Optimizer o);  // "sgd", "sgd-momentum", "adam", "adamw", "adam8bit"
// Case-insensitive; "fp16"/"bf16" are accepted for the amp- names, "adam-8bit" for adam8bit.
// nullopt for anything else.
std::optional<TrainingPrecision> parseTrainingPrecision(const std::string& name);
std::optional<Optimizer> parseOptimizer(const std::string& name);
// The accepted names, for messages: "fp32, fp32-strict, tf32, amp-fp16, amp-bf16 or fp8".
std::string trainingPrecisionNames();
std::string optimizerNames();
const char* optimizerImplementationName(OptimizerImplementation i);  // "foreach", "for-loop", "fused"
std::optional<OptimizerImplementation> parseOptimizerImplementation(const std::string& name);
std::string optimizerImplementationNames();

}  // namespace ts
