#include "trainscope/predictors/iteration/training_scenario.h"

#include <algorithm>
#include <cctype>

#include "trainscope/predictors/iteration/training_prediction.h"

namespace ts::predictors {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
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

const char* interconnectName(InterconnectKind i) {
    switch (i) {
        case InterconnectKind::NvLink:
            return "nvlink";
        case InterconnectKind::Pcie:
            return "pcie";
        case InterconnectKind::InfiniBand:
            return "infiniband";
    }
    return "?";
}

const char* predictionSourceName(PredictionSource s) {
    switch (s) {
        case PredictionSource::MeasuredProfile:
            return "measured profile";
        case PredictionSource::ShippedCalibration:
            return "shipped calibration";
        case PredictionSource::Analytic:
            return "analytic";
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

std::optional<InterconnectKind> parseInterconnect(const std::string& name) {
    const std::string n = lower(name);
    if (n == "ib") return InterconnectKind::InfiniBand;
    for (InterconnectKind i : {InterconnectKind::NvLink, InterconnectKind::Pcie, InterconnectKind::InfiniBand})
        if (n == interconnectName(i)) return i;
    return std::nullopt;
}

Interval Interval::relative(double value, double e) {
    e = std::max(0.0, e);
    if (value < 0) return {value, value * (1 + e), value / (1 + e)};
    return {value, value / (1 + e), value * (1 + e)};
}

}  // namespace ts::predictors
