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

const char* checkpointingName(Checkpointing c) {
    switch (c) {
        case Checkpointing::None:
            return "none";
        case Checkpointing::Blocks:
            return "blocks";
        case Checkpointing::EveryOtherBlock:
            return "every-other-block";
        case Checkpointing::SelectiveOps:
            return "selective-ops";
        case Checkpointing::Sqrt:
            return "sqrt";
    }
    return "?";
}

std::optional<Checkpointing> parseCheckpointing(const std::string& name) {
    const std::string n = lower(name);
    if (n == "off") return Checkpointing::None;
    if (n == "full") return Checkpointing::Blocks;
    if (n == "selective-layer") return Checkpointing::EveryOtherBlock;
    if (n == "selective-op") return Checkpointing::SelectiveOps;
    for (Checkpointing c : kAllCheckpointings)
        if (n == checkpointingName(c)) return c;
    return std::nullopt;
}

std::string checkpointingNames() {
    std::string out;
    for (int i = 0; i < kCheckpointingCount; ++i) {
        if (i > 0) out += i + 1 == kCheckpointingCount ? " or " : ", ";
        out += checkpointingName(kAllCheckpointings[i]);
    }
    return out;
}

std::string checkpointingPhrase(Checkpointing c) {
    switch (c) {
        case Checkpointing::None:
            return "";
        case Checkpointing::Blocks:
            return "activation checkpointing of every block";
        case Checkpointing::EveryOtherBlock:
            return "activation checkpointing of every other block";
        case Checkpointing::SelectiveOps:
            return "selective activation checkpointing (attention and every other linear output kept)";
        case Checkpointing::Sqrt:
            return "activation checkpointing in sqrt(L) segments";
    }
    return "";
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
