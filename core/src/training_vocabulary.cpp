#include "trainscope/core/training_vocabulary.h"

#include <algorithm>
#include <cctype>

namespace ts {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

template <typename T, size_t N>
std::string listOf(const T (&all)[N], const char* (*name)(T)) {
    std::string out;
    for (size_t i = 0; i < N; ++i) out += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + name(all[i]);
    return out;
}

}  // namespace

const char* trainingPrecisionName(TrainingPrecision p) {
    switch (p) {
        case TrainingPrecision::Fp32:
            return "fp32";
        case TrainingPrecision::Tf32:
            return "tf32";
        case TrainingPrecision::AmpFp16:
            return "amp-fp16";
        case TrainingPrecision::AmpBf16:
            return "amp-bf16";
        case TrainingPrecision::Fp8:
            return "fp8";
        case TrainingPrecision::Fp32Strict:
            return "fp32-strict";
        case TrainingPrecision::Bf16Params:
            return "bf16-params";
        case TrainingPrecision::Fp16Params:
            return "fp16-params";
    }
    return "?";
}

const char* optimizerName(Optimizer o) {
    switch (o) {
        case Optimizer::Sgd:
            return "sgd";
        case Optimizer::SgdMomentum:
            return "sgd-momentum";
        case Optimizer::Adam:
            return "adam";
        case Optimizer::AdamW:
            return "adamw";
        case Optimizer::Adam8bit:
            return "adam8bit";
    }
    return "?";
}

std::optional<TrainingPrecision> parseTrainingPrecision(const std::string& name) {
    const std::string n = lower(name);
    if (n == "fp16") return TrainingPrecision::AmpFp16;
    if (n == "bf16") return TrainingPrecision::AmpBf16;
    for (TrainingPrecision p : kAllTrainingPrecisions)
        if (n == trainingPrecisionName(p)) return p;
    return std::nullopt;
}

std::optional<Optimizer> parseOptimizer(const std::string& name) {
    const std::string n = lower(name);
    if (n == "adam-8bit" || n == "adamw8bit") return Optimizer::Adam8bit;
    for (Optimizer o : kAllOptimizers)
        if (n == optimizerName(o)) return o;
    return std::nullopt;
}

std::string trainingPrecisionNames() {
    return listOf(kAllTrainingPrecisions, &trainingPrecisionName);
}

std::string optimizerNames() {
    return listOf(kAllOptimizers, &optimizerName);
}

const char* optimizerImplementationName(OptimizerImplementation i) {
    switch (i) {
        case OptimizerImplementation::Foreach:
            return "foreach";
        case OptimizerImplementation::ForLoop:
            return "for-loop";
        case OptimizerImplementation::Fused:
            return "fused";
    }
    return "?";
}

std::optional<OptimizerImplementation> parseOptimizerImplementation(const std::string& name) {
    const std::string n = lower(name);
    if (n == "forloop" || n == "loop") return OptimizerImplementation::ForLoop;
    for (OptimizerImplementation i : kAllOptimizerImplementations)
        if (n == optimizerImplementationName(i)) return i;
    return std::nullopt;
}

std::string optimizerImplementationNames() {
    return listOf(kAllOptimizerImplementations, &optimizerImplementationName);
}

}  // namespace ts
