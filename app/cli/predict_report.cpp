#include "predict_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

namespace ts::cli {
namespace {

using nlohmann::ordered_json;
using namespace ts::predictors;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string fixed(double v, int decimals) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(decimals) << v;
    return os.str();
}

// Three significant digits, enough for a prediction with a 10-60% interval.
std::string sig(double v) {
    const double a = std::abs(v);
    return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

std::string range(const Interval& i) {
    return sig(i.value) + " (" + sig(i.low) + "-" + sig(i.high) + ")";
}

std::string pad(std::string s, size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
}
std::string padLeft(std::string s, size_t w) {
    if (s.size() < w) s.insert(0, w - s.size(), ' ');
    return s;
}

// `tensorParallel`: the GPUs of a tensor-parallel group (the model is one GPU's shard), 1 without;
// `expertParallel` likewise for the routed experts.
std::string scenarioLine(const TrainingScenario& s, int tensorParallel, bool sequenceParallel, int expertParallel) {
    std::string line = std::string(trainingPrecisionName(s.precision)) + ", " + optimizerName(s.optimizer);
    // The implementation matters where it changes the step: not for bitsandbytes' own kernel.
    if (s.optimizerImplementation != OptimizerImplementation::Foreach && s.optimizer != Optimizer::Adam8bit)
        line += std::string(" (") + optimizerImplementationName(s.optimizerImplementation) + ")";
    const int replicas = std::max(1, s.dataParallel.gpus / std::max(1, tensorParallel));
    if (tensorParallel > 1)
        line += std::string(", tensor parallel") + (sequenceParallel ? " (sequence parallel)" : "") + " over " +
                std::to_string(tensorParallel) + " GPUs" +
                (replicas > 1 ? " x " + std::to_string(replicas) + " data-parallel replicas" : "");
    if (replicas > 1)
        line += ", " + std::to_string(s.dataParallel.gpus) + " GPUs over " + interconnectName(s.dataParallel.interconnect);
    if (expertParallel > 1) line += ", experts split over groups of " + std::to_string(expertParallel);
    if (s.dataParallel.zeroStage > 0) line += ", ZeRO stage " + std::to_string(s.dataParallel.zeroStage);
    if (s.accumulation > 1)
        line += ", accumulation " + std::to_string(s.accumulation) + " (global batch " +
                std::to_string(s.batch * s.accumulation * replicas) + ")";
    if (s.checkpointing != predictors::Checkpointing::None) line += ", " + checkpointingPhrase(s.checkpointing);
    if (s.channelsLast) line += ", channels-last";
    if (s.keepGradients) line += ", gradients kept between steps";
    if (!s.masterWeights && s.precision == TrainingPrecision::Bf16Params) line += ", no fp32 master weights";
    return line;
}

// The bound of graph op `op` in `bounds`, null when it has none.
const LayerBound* boundOfOp(const std::vector<LayerBound>& bounds, int op) {
    const auto it =
        std::lower_bound(bounds.begin(), bounds.end(), op, [](const LayerBound& b, int o) { return b.op < o; });
    return it != bounds.end() && it->op == op ? &*it : nullptr;
}

// "compute / memory, tensor cores": forward / backward.
std::string boundText(const LayerBound* b) {
    if (!b) return "";
    std::string text = passBoundName(b->forward);
    if (b->hasBackward) text += std::string(" / ") + passBoundName(b->backward);
    if (b->tensorCores) text += ", tensor cores";
    return text;
}

}  // namespace

ordered_json intervalJson(const Interval& i) {
    return {{"value", i.value}, {"low", i.low}, {"high", i.high}};
}

ordered_json predictionJson(const TrainingPrediction& p, bool layers, const std::vector<LayerBound>& bounds) {
    ordered_json j;
    j["gpu"] = p.gpuId;
    j["name"] = p.gpuName;
    j["supported"] = p.supported;
    j["precision"] = trainingPrecisionName(p.scenario.precision);
    j["batch"] = p.scenario.batch;
    if (!p.supported) {
        j["reason"] = p.reason;
        return j;
    }
    j["iteration_ms"] = intervalJson(p.iterationMs);
    j["step_ms"] = intervalJson(p.stepMs);
    j["samples_per_s"] = intervalJson(p.samplesPerS);
    j["tokens_per_s"] = intervalJson(p.tokensPerS);
    j["mfu"] = intervalJson(p.mfu);
    j["model_flops_per_sample"] = p.modelFlopsPerSample;
    j["peak_memory_bytes"] = intervalJson(p.peakMemoryBytes);
    j["capacity_bytes"] = p.capacityBytes;
    j["max_batch"] = intervalJson(p.maxBatch);
    j["fits"] = p.fits;
    j["source"] = predictionSourceName(p.source);
    j["source_detail"] = p.sourceDetail;
    j["calibrated_share"] = p.calibratedShare;
    j["forward_ms"] = intervalJson(p.forwardMs);
    j["backward_ms"] = intervalJson(p.backwardMs);
    j["recompute_ms"] = intervalJson(p.recomputeMs);
    j["optimizer_ms"] = intervalJson(p.optimizerMs);
    j["communication_ms"] = intervalJson(p.communicationMs);
    j["slowest_gpu_wait_ms"] = intervalJson(p.slowestGpuWaitMs);
    j["other_ms"] = intervalJson(p.otherMs);
    j["host_bound_ms"] = intervalJson(p.hostBoundMs);
    j["scaling_efficiency"] = intervalJson(p.scalingEfficiency);
    j["interconnect"] = p.interconnect.empty() ? ordered_json(nullptr) : ordered_json(p.interconnect);
    j["interconnect_notice"] = p.interconnectNotice.empty() ? ordered_json(nullptr) : ordered_json(p.interconnectNotice);
    const MemoryBreakdown& m = p.memory;
    j["memory_bytes"] = {{"weights", m.weights},
                         {"cast_weight_copies", m.castWeightCopies},
                         {"gradients", m.gradients},
                         {"optimizer_state", m.optimizerState},
                         {"activations", m.activations},
                         {"inputs", m.inputs},
                         {"workspace", m.workspace},
                         {"cuda_context", m.cudaContext},
                         {"fragmentation", m.fragmentation},
                         {"peak_allocated", m.peakAllocated},
                         {"peak_reserved", m.peakReserved()}};
    j["notes"] = p.notes;
    if (layers) {
        ordered_json a = ordered_json::array();
        for (const LayerTime& l : p.layers) {
            const LayerBound* b = boundOfOp(bounds, l.op);
            a.push_back({{"op", l.op},
                         {"name", l.name},
                         {"class", l.opClass},
                         {"forward_ms", intervalJson(l.forwardMs)},
                         {"backward_ms", intervalJson(l.backwardMs)},
                         {"forward_bound", b ? ordered_json(passBoundName(b->forward)) : ordered_json(nullptr)},
                         {"backward_bound",
                          b && b->hasBackward ? ordered_json(passBoundName(b->backward)) : ordered_json(nullptr)},
                         {"tensor_cores", b ? ordered_json(b->tensorCores) : ordered_json(nullptr)},
                         {"source", predictionSourceName(l.source)}});
        }
        j["layers"] = a;
    }
    return j;
}

ordered_json predictReportJson(const ModelAnalysis& m, const std::vector<TrainingPrediction>& predictions, bool layers,
                               const LayerBoundLists& bounds) {
    ordered_json out;
    out["model"] = {{"name", m.modelName},
                    {"source", m.modelSource},
                    {"seq", m.sequenceModel ? ordered_json(m.seq) : ordered_json(nullptr)},
                    {"parameters", m.parameters},
                    {"model_parameters", m.modelParameters},
                    {"model_active_parameters", m.modelActiveParameters},
                    {"trainable_parameters", m.trainableParameters},
                    {"operations", m.ops.size()}};
    if (!predictions.empty()) {
        const TrainingScenario& s = predictions.front().scenario;
        out["scenario"] = {{"precision", trainingPrecisionName(s.precision)},
                           {"optimizer", optimizerName(s.optimizer)},
                           {"optimizer_implementation", optimizerImplementationName(s.optimizerImplementation)},
                           {"gpus", s.dataParallel.gpus},
                           {"tensor_parallel", m.tensorParallel},
                           {"sequence_parallel", m.sequenceParallel},
                           {"expert_parallel", m.expertParallel},
                           {"interconnect", interconnectName(s.dataParallel.interconnect)},
                           {"checkpointing", checkpointingName(s.checkpointing)},
                           {"accumulation", s.accumulation},
                           {"channels_last", s.channelsLast},
                           {"keep_gradients", s.keepGradients},
                           {"master_weights", s.masterWeights},
                           {"zero_stage", s.dataParallel.zeroStage}};
    }
    ordered_json a = ordered_json::array();
    for (size_t i = 0; i < predictions.size(); ++i)
        a.push_back(predictionJson(predictions[i], layers, i < bounds.size() ? bounds[i] : std::vector<LayerBound>{}));
    out["predictions"] = a;
    return out;
}

void printPredictTable(std::ostream& os, const ModelAnalysis& m, const std::vector<TrainingPrediction>& predictions,
                       bool allLayers, const LayerBoundLists& bounds) {
    if (predictions.empty()) return;
    os << m.modelName << " (" << fixed(m.parameters / 1e6, 1) << "M parameters";
    if (m.tensorParallel > 1 || m.expertParallel > 1)
        os << " on each GPU, of " << fixed(m.modelParameters / 1e6, 1) << "M";
    if (m.modelActiveParameters < m.modelParameters)
        os << ", " << fixed(m.modelActiveParameters / 1e6, 1) << "M active per token";
    if (m.trainableParameters != m.parameters) os << ", " << fixed(m.trainableParameters / 1e6, 2) << "M trainable";
    if (m.sequenceModel) os << ", sequence " << m.seq;
    // The set-up line names the precision most GPUs run; the others are listed after the table.
    std::map<TrainingPrecision, std::vector<std::string>> gpusAt;
    for (const TrainingPrediction& p : predictions) gpusAt[p.scenario.precision].push_back(p.gpuId);
    const TrainingPrediction* headline = &predictions.front();
    for (const TrainingPrediction& p : predictions)
        if (gpusAt[p.scenario.precision].size() > gpusAt[headline->scenario.precision].size()) headline = &p;
    os << "): " << scenarioLine(headline->scenario, m.tensorParallel, m.sequenceParallel, m.expertParallel) << "\n";
    os << "Figures are predictions with their expected range in parentheses (docs/prediction.md).\n\n";
    std::vector<std::pair<std::string, size_t>> cols = {{"gpu", 18},       {"batch", 6},     {"iteration ms", 24},
                                                        {"samples/s", 24}, {"peak GiB", 20}, {"of GiB", 7},
                                                        {"max batch", 10}, {"fits", 5}};
    // A language model's users count tokens: its throughput in tokens too.
    if (m.sequenceModel) cols.insert(cols.begin() + 4, {"tokens/s", 27});
    for (size_t i = 0; i < cols.size(); ++i)
        os << (i == 0 ? pad(cols[i].first, cols[i].second) : padLeft(cols[i].first, cols[i].second)) << " ";
    os << " source\n";
    std::map<std::string, std::pair<double, double>> sources;  // detail -> share range
    for (const TrainingPrediction& p : predictions) {
        if (!p.supported) {
            os << pad(p.gpuId, cols[0].second) << " not supported: " << p.reason << "\n";
            continue;
        }
        Interval peak = p.peakMemoryBytes;
        peak.value /= kGiB, peak.low /= kGiB, peak.high /= kGiB;
        std::vector<std::string> cells = {p.gpuId,
                                          std::to_string(p.scenario.batch),
                                          range(p.iterationMs),
                                          range(p.samplesPerS),
                                          range(peak),
                                          fixed(p.capacityBytes / kGiB, 0),
                                          std::to_string(int64_t(p.maxBatch.value)),
                                          p.fits ? "yes" : "no"};
        if (m.sequenceModel) cells.insert(cells.begin() + 4, range(p.tokensPerS));
        for (size_t i = 0; i < cells.size(); ++i)
            os << (i == 0 ? pad(cells[i], cols[i].second) : padLeft(cells[i], cols[i].second)) << " ";
        os << " " << predictionSourceName(p.source) << "\n";
        auto [it, added] = sources.try_emplace(p.sourceDetail, p.calibratedShare, p.calibratedShare);
        it->second = {std::min(it->second.first, p.calibratedShare), std::max(it->second.second, p.calibratedShare)};
    }
    os << "\n";
    for (const auto& [precision, ids] : gpusAt) {
        if (precision == headline->scenario.precision) continue;
        os << "In " << trainingPrecisionName(precision) << " (what the model's kind trains in there):";
        for (size_t i = 0; i < ids.size(); ++i) os << (i ? ", " : " ") << ids[i];
        os << ".\n";
    }
    for (const auto& [detail, share] : sources) {
        os << "Source: " << detail << " (calibrated or measured: " << fixed(share.first * 100, 0);
        if (share.second - share.first >= 0.005) os << "-" << fixed(share.second * 100, 0);
        os << "% of the time).\n";
    }
    if (predictions.size() != 1 || !predictions.front().supported) return;

    const TrainingPrediction& p = predictions.front();
    const MemoryBreakdown& mb = p.memory;
    os << "\nIteration: forward " << range(p.forwardMs) << " ms, backward " << range(p.backwardMs) << " ms";
    if (p.recomputeMs.value > 0) os << ", recomputation " << range(p.recomputeMs) << " ms";
    os << ", optimizer " << range(p.optimizerMs) << " ms";
    if (p.communicationMs.value > 0) os << ", exposed all-reduce " << range(p.communicationMs) << " ms";
    if (p.slowestGpuWaitMs.value > 0) os << ", waiting for the slowest GPU " << range(p.slowestGpuWaitMs) << " ms";
    if (p.otherMs.value != 0) os << ", outside the layers " << range(p.otherMs) << " ms";
    if (p.hostBoundMs.value > 0) os << ", waiting for the host " << range(p.hostBoundMs) << " ms";
    os << "\n";
    if (p.scenario.dataParallel.gpus > p.tensorParallel) {
        os << "Scaling efficiency: " << range(p.scalingEfficiency)
           << (p.tensorParallel > 1   ? " (iteration of one tensor-parallel group / of each of N)"
               : p.expertParallel > 1 ? " (iteration of one GPU's shard without the data-parallel collectives / "
                                        "of each of N)"
                                      : " (iteration on one GPU / on each of N)");
        // ZeRO's superlinear case: each GPU steps its shard of the optimizer, one GPU the whole of it.
        if (p.scalingEfficiency.value > 1 && p.scenario.dataParallel.zeroStage > 0)
            os << ": above 1, as each GPU updates only its shard of the optimizer state";
        os << "\n";
    }
    // The wall time between two optimizer updates, not the optimizer's own kernels (those are above).
    if (p.scenario.accumulation > 1)
        os << "One optimizer step (" << p.scenario.accumulation << " micro-batches and the update): " << range(p.stepMs)
           << " ms\n";
    if (p.tokensPerS.value > 0) os << "Tokens/s (all GPUs): " << range(p.tokensPerS) << "\n";
    if (p.mfu.value > 0) {
        const Interval pct{p.mfu.value * 100, p.mfu.low * 100, p.mfu.high * 100};
        os << "MFU: " << range(pct) << " % (the set-up's forward and backward FLOPs / peak)\n";
    }
    os << "\nMemory (GiB): weights " << fixed(mb.weights / kGiB, 2);
    if (mb.castWeightCopies > 0) os << " + cast copies " << fixed(mb.castWeightCopies / kGiB, 2);
    os << ", gradients " << fixed(mb.gradients / kGiB, 2) << ", optimizer " << fixed(mb.optimizerState / kGiB, 2)
       << ", activations " << fixed(mb.activations / kGiB, 2) << ", inputs " << fixed(mb.inputs / kGiB, 2)
       << ", workspace " << fixed(mb.workspace / kGiB, 2) << "; peak allocated " << fixed(mb.peakAllocated / kGiB, 2)
       << " + fragmentation " << fixed(mb.fragmentation / kGiB, 2) << " + CUDA context "
       << fixed(mb.cudaContext / kGiB, 2) << "\n";
    for (const std::string& n : p.notes) os << "Note: " << n << "\n";

    std::vector<const LayerTime*> layers;
    for (const LayerTime& l : p.layers) layers.push_back(&l);
    if (!allLayers) {
        std::stable_sort(layers.begin(), layers.end(), [](const LayerTime* a, const LayerTime* b) {
            return a->forwardMs.value + a->backwardMs.value > b->forwardMs.value + b->backwardMs.value;
        });
        if (layers.size() > 10) layers.resize(10);
    }
    os << "\n" << (allLayers ? "Layers" : "Slowest layers") << " (ms):\n";
    // Bound: the term of the pass's predicted time that wins, forward / backward (layer_bounds.h).
    const std::vector<LayerBound> none;
    const std::vector<LayerBound>& b = bounds.empty() ? none : bounds.front();
    os << pad("layer", 48) << padLeft("forward", 24) << padLeft("backward", 24) << "  " << pad("class", 12)
       << "bound (forward / backward)\n";
    for (const LayerTime* l : layers)
        os << pad(l->name, 48) << padLeft(range(l->forwardMs), 24) << padLeft(range(l->backwardMs), 24) << "  "
           << pad(l->opClass.empty() ? "(roofline)" : l->opClass, 12) << boundText(boundOfOp(b, l->op)) << "\n";
}

}  // namespace ts::cli
