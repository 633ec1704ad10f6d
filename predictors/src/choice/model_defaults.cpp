#include "trainscope/predictors/choice/model_defaults.h"

#include <algorithm>

#include "trainscope/predictors/iteration/operation_times.h"

namespace ts::predictors {

const char* modelKindName(ModelKind k) {
    switch (k) {
        case ModelKind::Language:
            return "language";
        case ModelKind::Vision:
            return "vision";
        case ModelKind::Other:
            return "other";
    }
    return "other";
}

ModelKind modelKindOf(const Graph& g) {
    bool image = false;
    for (int index : g.inputs) {
        if (index < 0 || size_t(index) >= g.values.size()) continue;
        const Value& v = g.values[size_t(index)];
        const bool hasSeq = std::any_of(v.shape.begin(), v.shape.end(), [](const Dim& d) { return d.dependsOnSeq(); });
        if (!isFloating(v.dtype) && v.dtype != DType::Bool && hasSeq) return ModelKind::Language;
        if (isFloating(v.dtype) && v.shape.size() == 4) image = true;
    }
    return image ? ModelKind::Vision : ModelKind::Other;
}

ScenarioDefaults scenarioDefaultsFor(const Graph& g) {
    ScenarioDefaults d;
    d.kind = modelKindOf(g);
    switch (d.kind) {
        case ModelKind::Language:
            d.optimizer = Optimizer::AdamW;
            d.goal.tokens = kTokensPerParameter * double(std::max<int64_t>(1, g.modelParameterCount()));
            d.goalBasis = "20 tokens per parameter, the compute-optimal ratio of Hoffmann et al. 2022 (Chinchilla)";
            break;
        case ModelKind::Vision:
            d.optimizer = Optimizer::SgdMomentum;
            d.goalBasis = "one epoch of ImageNet-1k's 1,281,167 training images";
            break;
        case ModelKind::Other:
            d.optimizer = Optimizer::Sgd;
            d.goalBasis = "one epoch of 1,281,167 samples (ImageNet-1k's size, as a yardstick)";
            break;
    }
    return d;
}

TrainingPrecision defaultPrecisionFor(ModelKind kind, const GpuSpec* gpu) {
    if (kind != ModelKind::Language) return TrainingPrecision::Fp32;
    if (!gpu) return TrainingPrecision::AmpBf16;
    for (TrainingPrecision p : {TrainingPrecision::AmpBf16, TrainingPrecision::AmpFp16})
        if (!unsupportedReason(*gpu, p)) return p;
    return TrainingPrecision::Fp32;  // no tensor cores (Pascal): autocast gains nothing
}

}  // namespace ts::predictors
