#include "trainscope/predictors/choice/trace_choice.h"

#include <algorithm>
#include <memory>

#include "trainscope/core/errors.h"

namespace ts::predictors {
namespace {

// What --precision did to the trace's FP32 kernels (docs/traces.md, Arithmetic).
std::string mathSentence(Fp32Math m) {
    switch (m) {
        case Fp32Math::AsRecorded:
            return "each kernel keeps the arithmetic it ran in, where the GPU has it (TF32 on a GPU without "
                   "TF32 runs in FP32, BF16 without BF16 in FP16)";
        case Fp32Math::PyTorchDefault:
            return "FP32 work moved as PyTorch's default runs it (convolutions on TF32 where the GPU has it, matrix "
                   "multiplies in FP32)";
        case Fp32Math::Tf32:
            return "FP32 convolutions and matrix multiplies moved to TF32 where the GPU has it";
        case Fp32Math::Strict:
            return "FP32 convolutions and matrix multiplies moved to FP32 without TF32";
    }
    return "";
}

std::vector<std::string> assumptionsOf(const TraceChoice& c, const std::vector<const GpuSpec*>& gpus) {
    std::vector<std::string> a;
    const std::string steps = c.steps > 0 ? std::to_string(c.steps) + (c.steps == 1 ? " step" : " steps")
                                          : "a trace without ProfilerStep marks, taken as one step,";
    std::string changed;
    if (c.batch > 0)
        changed += " at batch " + std::to_string(c.batch) + " instead of its " + std::to_string(c.recordedBatch) +
                   " (found in its recorded shapes; operators carrying the batch moved with the work of their new "
                   "shapes, the others kept, the host's time per operator kept; speed-ups compare samples per "
                   "second)";
    if (c.precision != c.recordedPrecision)
        changed += std::string(changed.empty() ? "" : " and") + " in " + trainingPrecisionName(c.precision) +
                   " instead of " + trainingPrecisionName(c.recordedPrecision) +
                   " (autocast's lists applied to its recorded operators, casts added or removed)";
    a.push_back("The recorded job: " + steps + " recorded on " + c.recordedGpuName +
                (changed.empty() ? ". Its batch size and precision stay as recorded" : ", predicted" + changed) +
                "; its optimizer and data parallelism stay as recorded (a trace holds no model graph to change "
                "them: report the model or its profile for that). FP32 arithmetic: " +
                mathSentence(c.options.change.math) + ".");
    a.push_back(
        "Prediction: every GPU activity of the trace moved to each GPU by its recorded launch (waves, occupancy) "
        "and, where record_shapes was on, its operator's FLOPs and bytes; the steps replayed with the host's "
        "measured timeline, moved only where the host waited for the GPU (docs/traces.md, Predicting from a "
        "trace). A host-bound job stays as slow on a faster GPU.");
    std::string collectives =
        "Collectives (NCCL) keep the bus bandwidth the job reached, within each GPU's ring for the group "
        "(NVLink where its topology joins the group, else PCIe); those that filled their ring, or record no "
        "message size, move with the rings (8 GPUs where the group is unknown)";
    if (c.collectiveGroupSize > 0)
        collectives += "; the recorded collectives ran in a group of " + std::to_string(c.collectiveGroupSize) +
                       (c.collectiveGroupSize == 1 ? " GPU" : " GPUs");
    a.push_back(collectives + ".");
    a.push_back(
        "Ranking: GPUs with a price by the predicted cost of 1,000 steps, cheapest first; then GPUs without a "
        "price by the predicted step time; then the GPUs that cannot be predicted, each with the reason.");
    a.push_back(
        "Cost: of one GPU, its price per GPU-hour times the predicted median step (1,000 steps take 1,000 "
        "median steps). The trace is one process's view; a data-parallel job of N GPUs costs N times as much "
        "per step.");
    a.push_back(pricesAssumption(gpus, c.options.priceSnapshot, c.options.amortisation));
    a.push_back(
        "Accuracy: the figures are point predictions without ranges. The kernel moves, checked on the "
        "operators two GPUs' traces share, are off by a median 27% per operator (docs/traces.md, Checking the "
        "moves on two GPUs); whole steps are not yet validated on another GPU.");
    return a;
}

// The row's notes, each once over all rows: a note that names the row's GPU is kept with "the
// GPU" in its place, so that the same sentence about 17 GPUs is one note listing them.
void addNotes(std::vector<TraceNote>& notes, const TraceChoiceRow& r) {
    for (std::string text : r.prediction->notes) {
        if (!r.gpuName.empty())
            for (size_t at = text.find(r.gpuName); at != std::string::npos; at = text.find(r.gpuName, at + 7))
                text.replace(at, r.gpuName.size(), "the GPU");
        auto same = std::find_if(notes.begin(), notes.end(), [&](const TraceNote& n) { return n.text == text; });
        if (same == notes.end()) same = notes.insert(notes.end(), TraceNote{text, {}});
        same->gpuIds.push_back(r.gpuId);
    }
}

}  // namespace

std::vector<TraceGpuPrediction> predictTraceOnGpus(const KinetoTrace& trace, const GpuSpec& origin,
                                                   const std::vector<const GpuSpec*>& gpus, const TraceChange& change) {
    if (std::string why = tracePredictionProblem(trace, &origin); !why.empty()) throw ModelError(trace.source, why);
    std::vector<TraceGpuPrediction> out;
    // The trace's own work (its operators' shapes, and at the changed batch or precision) analysed
    // once for every target.
    const auto work = std::make_shared<const TraceWork>(analyseTraceWork(trace, change));
    for (const GpuSpec* gpu : gpus) {
        TraceGpuPrediction r;
        r.gpu = gpu;
        try {
            r.prediction = predictTrace(trace, origin, *gpu, change, work);
        } catch (const ModelError& e) {
            r.problem = e.what();
        }
        out.push_back(std::move(r));
    }
    return out;
}

const TraceChoiceRow* TraceChoice::recordedRow() const {
    for (const TraceChoiceRow& r : rows)
        if (r.recorded) return &r;
    return nullptr;
}

const TraceChoiceRow* TraceChoice::cheapest() const {
    for (const TraceChoiceRow& r : rows)
        if (r.predicted && r.price.priced) return &r;
    return nullptr;
}

const TraceChoiceRow* TraceChoice::fastest() const {
    const TraceChoiceRow* best = nullptr;
    for (const TraceChoiceRow& r : rows)
        if (r.predicted && (!best || r.stepMs < best->stepMs)) best = &r;
    return best;
}

std::string traceRankingScope(const TraceChoice& c) {
    int predicted = 0, priced = 0;
    for (const TraceChoiceRow& r : c.rows)
        if (r.predicted) {
            ++predicted;
            if (r.price.priced) ++priced;
        }
    const int all = int(c.rows.size());
    if (priced == all) return "of all " + std::to_string(all) + " GPUs";
    std::string why;
    if (predicted > priced) why += std::to_string(predicted - priced) + " without a price";
    if (all > predicted) why += (why.empty() ? "" : ", ") + std::to_string(all - predicted) + " not predicted";
    return "of the " + std::to_string(priced) + " priced GPUs, out of " + std::to_string(all) + " (" + why + ")";
}

TraceChoice chooseHardwareForTrace(const KinetoTrace& trace, const GpuSpec& origin, const std::string& match,
                                   const std::vector<const GpuSpec*>& gpus, const TraceChoiceOptions& options) {
    TraceChoice c;
    c.source = trace.source;
    c.recordedGpuId = origin.id;
    c.recordedGpuName = origin.name;
    c.match = match;
    if (const DeviceProperties* d = trace.gpu()) c.deviceName = d->name;
    c.options = options;
    c.steps = int(trace.steps.size());
    c.recordShapes = trace.recordShapes;
    c.withStack = trace.withStack;
    for (const TraceCollective& k : trace.collectives)
        c.collectiveGroupSize = std::max(c.collectiveGroupSize, k.groupSize);
    c.traceNotes = trace.notes;

    std::vector<TraceGpuPrediction> predictions = predictTraceOnGpus(trace, origin, gpus, options.change);
    const TracePrediction* any = nullptr;
    for (const TraceGpuPrediction& p : predictions)
        if (p.prediction) any = &*p.prediction;
    if (!any)
        throw ModelError(trace.source, predictions.empty() ? "no GPU to predict on" : predictions.front().problem);
    c.measuredStepMs = any->replay.measuredMedianMs;
    c.replayedStepMs = any->originReplayMedianMs;
    c.recordedPrecision = any->recordedPrecision;
    c.precision = any->precision;
    if (options.change.batch > 0) c.recordedBatch = any->recordedBatch, c.batch = options.change.batch;
    // Samples per step relative to the recorded job's: speed-ups compare throughput.
    const double samples = c.batch > 0 && c.recordedBatch > 0 ? double(c.batch) / double(c.recordedBatch) : 1;

    for (TraceGpuPrediction& p : predictions) {
        TraceChoiceRow r;
        r.gpuId = p.gpu->id;
        r.gpuName = p.gpu->name;
        r.recorded = p.gpu == &origin;
        r.price = gpuHourPrice(*p.gpu);
        if (!r.price.priced) r.priceNote = p.gpu->pricesNote;
        if (p.prediction && p.prediction->replay.predictedMedianMs > 0) {
            r.predicted = true;
            r.stepMs = p.prediction->replay.predictedMedianMs;
            r.speedup = samples * c.measuredStepMs / r.stepMs;
            r.stepsPerHour = 3.6e6 / r.stepMs;
            if (r.price.priced) r.usdPer1000Steps = r.price.usdPerGpuHour * r.stepMs * 1000 / 3.6e6;
            r.prediction = std::move(p.prediction);
        } else {
            r.reason = p.prediction ? "no step was predicted" : p.problem;
        }
        c.rows.push_back(std::move(r));
    }
    // Priced by cost, then unpriced by step time, then not predicted (database order kept within ties).
    auto group = [](const TraceChoiceRow& r) { return !r.predicted ? 2 : r.price.priced ? 0 : 1; };
    std::stable_sort(c.rows.begin(), c.rows.end(), [&](const TraceChoiceRow& a, const TraceChoiceRow& b) {
        const int ga = group(a), gb = group(b);
        if (ga != gb) return ga < gb;
        if (ga == 0 && a.usdPer1000Steps != b.usdPer1000Steps) return a.usdPer1000Steps < b.usdPer1000Steps;
        if (ga != 2) return a.stepMs < b.stepMs;
        return false;
    });
    for (size_t i = 0; i < c.rows.size(); ++i) {
        c.rows[i].rank = int(i) + 1;
        if (c.rows[i].predicted) {
            ++c.predicted;
            addNotes(c.notes, c.rows[i]);
        }
    }
    c.assumptions = assumptionsOf(c, gpus);
    return c;
}

}  // namespace ts::predictors
