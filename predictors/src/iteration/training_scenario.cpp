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
