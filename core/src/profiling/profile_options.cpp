#include <stdexcept>

#include "trainscope/core/profiler.h"

namespace ts {

const char* precisionName(Precision p) {
    switch (p) {
        case Precision::FP32: return "fp32";
        case Precision::TF32: return "tf32";
        case Precision::AmpFP16: return "amp-fp16";
        case Precision::AmpBF16: return "amp-bf16";
        case Precision::FP32Strict: return "fp32-strict";
    }
    return "?";
}

const char* optimizerName(OptimizerKind o) {
    switch (o) {
        case OptimizerKind::SGD: return "sgd";
        case OptimizerKind::SGDMomentum: return "sgd-momentum";
        case OptimizerKind::Adam: return "adam";
        case OptimizerKind::AdamW: return "adamw";
    }
    return "?";
}

Precision parseTrainingPrecision(const std::string& name) {
    for (Precision p : {Precision::FP32, Precision::FP32Strict, Precision::TF32, Precision::AmpFP16, Precision::AmpBF16})
        if (name == precisionName(p)) return p;
    throw std::invalid_argument("unknown precision '" + name +
                                "' (expected fp32, fp32-strict, tf32, amp-fp16 or amp-bf16)");
}

OptimizerKind parseOptimizer(const std::string& name) {
    for (OptimizerKind o : {OptimizerKind::SGD, OptimizerKind::SGDMomentum, OptimizerKind::Adam, OptimizerKind::AdamW})
        if (name == optimizerName(o)) return o;
    throw std::invalid_argument("unknown optimizer '" + name + "' (expected sgd, sgd-momentum, adam or adamw)");
}

}  // namespace ts
