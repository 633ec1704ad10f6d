#include "trainscope/core/profiler.h"

namespace ts {

std::optional<std::string> unprofilableReason(TrainingPrecision p, Optimizer o) {
    if (p == TrainingPrecision::Fp8)
        return std::string(
            "fp8 cannot be profiled (Transformer Engine's recipe is not part of LibTorch; the profiler "
            "runs fp32, fp32-strict, tf32, amp-fp16 and amp-bf16): fp8 is predicted only");
    if (isModelIn16Bit(p))
        return std::string(trainingPrecisionName(p)) +
               " cannot be profiled (the profiler runs the model at its own dtype, under autocast for amp-fp16 and "
               "amp-bf16): " +
               trainingPrecisionName(p) + " is predicted only";
    if (o == Optimizer::Adam8bit)
        return std::string(
            "adam8bit cannot be profiled (bitsandbytes is not part of LibTorch; the profiler runs "
            "PyTorch's own optimizers): adam8bit is predicted only");
    return std::nullopt;
}

}  // namespace ts
