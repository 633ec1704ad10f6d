#include "trainscope/predictors/choice/hardware_choice.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "trainscope/core/errors.h"

namespace ts::predictors {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string fixed(double v, int decimals) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(decimals);
    os << v;
    return os.str();
}

std::string gib(double bytes) {
    return fixed(bytes / kGiB, 1) + " GiB";
}

// What a precision other than fp32 does to the training's numerics: the report says so beside
// every recommendation that uses it, since the throughput gain is not free.
std::string numericsNote(TrainingPrecision p, bool masterWeights) {
    switch (p) {
        case TrainingPrecision::Fp32:
        case TrainingPrecision::Fp32Strict:
            return "";
        case TrainingPrecision::Tf32:
            return "tf32 rounds matrix-multiply and convolution inputs to 10 mantissa bits "
                   "(torch.backends.cuda.matmul.allow_tf32); accuracy is usually unchanged, but check";
        case TrainingPrecision::AmpFp16:
            return "amp-fp16 changes numerics: autocast runs GEMMs and convolutions in fp16 with fp32 master "
                   "weights and needs loss scaling (GradScaler); check convergence";
        case TrainingPrecision::AmpBf16:
            return "amp-bf16 changes numerics: autocast runs GEMMs and convolutions in bf16 (8 mantissa bits) "
                   "with fp32 master weights; check convergence";
        case TrainingPrecision::Bf16Params:
            if (!masterWeights)
                return "bf16-params without master weights changes numerics the most of the 16-bit set-ups: "
                       "parameters, activations, gradients and optimizer states are bf16 (8 mantissa bits), so "
                       "updates smaller than a parameter's last bit are lost; check convergence";
            return "bf16-params changes numerics: the model's parameters and activations are bf16 (8 mantissa "
                   "bits) with fp32 master weights in the optimizer (FSDP's MixedPrecision, Megatron-LM's "
                   "--bf16); check convergence";
        case TrainingPrecision::Fp16Params:
            return "fp16-params changes numerics: the model's parameters and activations are fp16 with fp32 master "
                   "weights in the optimizer and dynamic loss scaling (apex's amp O2, DeepSpeed's fp16); check "
                   "convergence";
        case TrainingPrecision::Fp8:
            return "fp8 changes numerics the most: the training code must use Transformer Engine's FP8 recipe "
                   "(scaled FP8 GEMM operands); its prediction is analytic only";
    }
    return "";
}

// Lower first: fp32 (PyTorch's default), fp32-strict (slower or the same: asked for explicitly),
// tf32, amp-bf16, amp-fp16 (loss scaling), bf16-params (a sharded training loop), fp16-params, fp8
// (Transformer Engine).
int preference(TrainingPrecision p) {
    switch (p) {
        case TrainingPrecision::Fp32:
            return 0;
        case TrainingPrecision::Fp32Strict:
            return 1;
        case TrainingPrecision::Tf32:
            return 2;
        case TrainingPrecision::AmpBf16:
            return 3;
        case TrainingPrecision::AmpFp16:
            return 4;
        case TrainingPrecision::Bf16Params:
            return 5;
        case TrainingPrecision::Fp16Params:
            return 6;
        case TrainingPrecision::Fp8:
            return 7;
    }
    return 8;
}

// One (GPU, precision)'s choice under the documented rule; batch 0 when nothing fits.
struct PrecisionChoice {
    TrainingPrecision precision = TrainingPrecision::Fp32;
    int64_t batch = 0;
    double samplesPerS = 0;
};

PrecisionChoice chooseBatch(const GpuSweep& sweep, const std::vector<int64_t>& considered, double nearBestShare) {
    PrecisionChoice c;
    c.precision = sweep.precision;
    const RecommendedBatch r = recommendBatch(sweep, nearBestShare, considered);
    c.batch = r.batch;
    c.samplesPerS = r.samplesPerS;
    return c;
}

}  // namespace

RecommendedBatch recommendBatch(const GpuSweep& sweep, double nearBestShare, const std::vector<int64_t>& considered) {
    RecommendedBatch r;
    auto fitting = [&](const SweepPoint& p) {
        return p.fits && double(p.batch) <= sweep.maxBatch.low &&
               (considered.empty() || std::binary_search(considered.begin(), considered.end(), p.batch));
    };
    double best = 0;
    for (const SweepPoint& p : sweep.points)
        if (fitting(p)) best = std::max(best, p.samplesPerS.value);
    if (best <= 0) return r;
    for (const SweepPoint& p : sweep.points)  // ascending batch: the first within reach is the smallest
        if (fitting(p) && p.samplesPerS.value >= (1 - nearBestShare) * best) {
            r.batch = p.batch;
            r.samplesPerS = p.samplesPerS.value;
            break;
        }
    return r;
}

namespace {

TrainingScenario at(const TrainingScenario& base, TrainingPrecision p, int64_t batch) {
    TrainingScenario s = base;
    s.precision = p;
    s.batch = batch;
    return s;
}

std::string joinReasons(const std::vector<std::string>& reasons) {
    std::vector<std::string> unique;
    for (const std::string& r : reasons)
        if (std::find(unique.begin(), unique.end(), r) == unique.end()) unique.push_back(r);
    std::string out;
    for (const std::string& r : unique) out += (out.empty() ? "" : "; ") + r;
    return out;
}

// A GPU where nothing fits: the precision needing the least memory at the smallest batch asked,
// predicted so that the report can show how far it is from fitting.
void explainNoFit(HardwareChoiceRow& row, const TrainingPredictor& predictor, const GpuSpec& gpu,
                  const std::vector<const GpuSweep*>& supported, const TrainingScenario& base, int64_t batch) {
    const GpuSweep* closest = nullptr;
    double leastPeak = 0;
    for (const GpuSweep* s : supported) {
        const TrainingPrediction p = predictor.predict(gpu, at(base, s->precision, batch), false);
        if (!closest || p.peakMemoryBytes.high < leastPeak) {
            closest = s;
            leastPeak = p.peakMemoryBytes.high;
            row.prediction = p;
        }
    }
    const TrainingPrediction& p = row.prediction;
    row.precision = closest->precision;
    row.batch = batch;
    row.reason = "batch " + std::to_string(batch) + " does not fit at any precision considered: at " +
                 trainingPrecisionName(row.precision) + " it needs up to " + gib(p.peakMemoryBytes.high) +
                 " (predicted " + gib(p.peakMemoryBytes.value) + ") of the " + gib(p.capacityBytes) + " this GPU has";
}

std::vector<std::string> assumptionsOf(const HardwareChoice& c, const std::vector<const GpuSpec*>& gpus) {
    std::vector<std::string> a;
    const HardwareChoiceOptions& o = c.options;
    const std::string share = fixed(o.nearBestShare * 100, 0) + "%";
    const std::string batches = o.batch > 0 ? "the fixed batch size " + std::to_string(o.batch)
                                            : "the batch sizes 1, 2, 3, 4, 6, 8, 12, 16, ... (powers of two and 1.5 "
                                              "times them)";
    a.push_back("Recommendation per GPU: for each precision, of " + batches +
                " those that fit with the memory's upper bound (at most the low end of the largest-batch range), the "
                "smallest whose predicted throughput is within " +
                share +
                " of the highest; then the precision with the highest throughput, where a precision that asks more of "
                "the training code (in the order fp32, tf32, amp-bf16, amp-fp16, fp8) must be more than " +
                share + " faster to be chosen.");
    a.push_back(
        "Ranking: GPUs with a price by the predicted cost of the goal, cheapest first; then GPUs without a "
        "price by the predicted time; then the GPUs where nothing fits, each with the reason.");
    const TrainingScenario& s = c.base;
    std::string run = std::to_string(s.dataParallel.gpus) + (s.dataParallel.gpus == 1 ? " GPU" : " GPUs");
    const int replicas = s.dataParallel.gpus / std::max(1, c.tensorParallel);
    if (c.tensorParallel > 1)
        run += " (tensor parallel in groups of " + std::to_string(c.tensorParallel) +
               (replicas > 1 ? std::string(", data parallel over ") + interconnectName(s.dataParallel.interconnect)
                             : std::string()) +
               ")";
    else if (s.dataParallel.gpus > 1)
        run += std::string(" (data parallel over ") + interconnectName(s.dataParallel.interconnect) + ")";
    if (c.expertParallel > 1) run += " with the experts split over groups of " + std::to_string(c.expertParallel);
    const bool wholeEpochs = c.goal.epochs == std::floor(c.goal.epochs);
    std::string goal = fixed(c.goal.epochs, wholeEpochs ? 0 : 2) + (c.goal.epochs == 1 ? " epoch of " : " epochs of ") +
                       fixed(c.goal.datasetSamples, 0) + " samples";
    if (c.goal.epochs != 1) goal += " (" + fixed(c.goal.samples(), 0) + " samples)";
    if (c.goal.inTokens())
        goal = fixed(c.goal.tokens / 1e9, c.goal.tokens < 1e10 ? 2 : 1) + " billion tokens (" +
               fixed(c.goal.tokens, 0) + ") at sequence length " + std::to_string(c.seq);
    a.push_back("Goal: " + goal + " on " + run + " per run, optimizer " + optimizerName(s.optimizer) +
                (s.checkpointing != Checkpointing::None ? ", " + checkpointingPhrase(s.checkpointing) : "") +
                (s.dataParallel.zeroStage > 0 ? ", ZeRO stage " + std::to_string(s.dataParallel.zeroStage) : "") +
                (s.accumulation > 1 ? ", gradient accumulation over " + std::to_string(s.accumulation) +
                                          " micro-batches (the batch size is a micro-batch's)"
                                    : "") +
                "; the batch size is per GPU; time is wall-clock, cost pays for every GPU of the run.");
    a.push_back(pricesAssumption(gpus, o.priceSnapshot, o.amortisation));
    a.push_back(
        "Intervals: every figure is a prediction with the range it is expected in (low to high), from "
        "per-operator errors measured on public FP32 forward latencies, widened by stated assumptions for "
        "backward passes, tensor-core precisions, the optimizer step and communication (docs/prediction.md, "
        "Intervals); not a statistical confidence level. Time and cost follow the throughput's range: the "
        "fastest end is the cheapest.");
    a.push_back(
        "Not yet validated on GPUs: whole-iteration times, tensor-core precisions and memory peaks "
        "(docs/prediction.md, What is validated).");
    std::map<std::string, int> sources;
    const HardwareChoiceRow* first = nullptr;
    for (const HardwareChoiceRow& r : c.rows)
        if (r.recommended) {
            ++sources[predictionSourceName(r.prediction.source)];
            if (!first) first = &r;
        }
    if (first) {
        std::string line = "Prediction source: ";
        for (const auto& [name, count] : sources)
            line += (line.back() == ' ' ? "" : ", ") + name + " (" + std::to_string(count) +
                    (count == 1 ? " GPU)" : " GPUs)");
        a.push_back(line + ". For the first-ranked GPU: " + first->prediction.sourceDetail + ".");
    }
    a.push_back(
        "Precisions other than fp32 change the training's numerics (tf32 least, fp8 most): each recommendation "
        "says what its precision asks of the training code.");
    return a;
}

}  // namespace

std::string rankingScope(const HardwareChoice& c) {
    int fitting = 0, priced = 0;
    for (const HardwareChoiceRow& r : c.rows)
        if (r.recommended) {
            ++fitting;
            if (r.cost.priced) ++priced;
        }
    const int all = int(c.rows.size());
    const int unpriced = fitting - priced, unfit = all - fitting;
    if (priced == all) return "of all " + std::to_string(all) + " GPUs";
    std::string why;
    if (unpriced > 0) why += std::to_string(unpriced) + " without a price";
    if (unfit > 0) why += (why.empty() ? "" : ", ") + std::to_string(unfit) + " where nothing fits";
    return "of the " + std::to_string(priced) + " priced GPUs where a batch fits, out of " + std::to_string(all) +
           " (" + why + ")";
}

const HardwareChoiceRow* fastestRow(const HardwareChoice& c) {
    const HardwareChoiceRow* fastest = nullptr;
    for (const HardwareChoiceRow& r : c.rows)
        if (r.recommended && (!fastest || r.cost.hoursToTrain.value < fastest->cost.hoursToTrain.value)) fastest = &r;
    return fastest;
}

std::string fastestScope(const HardwareChoice& c) {
    const int all = int(c.rows.size());
    const int fitting = int(std::count_if(c.rows.begin(), c.rows.end(), [](const auto& r) { return r.recommended; }));
    if (fitting == all) return "of all " + std::to_string(all) + " GPUs";
    return "of the " + std::to_string(fitting) + (fitting == 1 ? " GPU" : " GPUs") + " where a batch fits, out of " +
           std::to_string(all);
}

std::vector<const HardwareChoiceRow*> costTimeFrontier(const HardwareChoice& c) {
    std::vector<const HardwareChoiceRow*> rows;
    for (const HardwareChoiceRow& r : c.rows)
        if (r.recommended && r.cost.priced) rows.push_back(&r);
    // Fastest first, the cheaper first among equally fast: a row stays when it is cheaper than
    // every faster one.
    std::stable_sort(rows.begin(), rows.end(), [](const HardwareChoiceRow* a, const HardwareChoiceRow* b) {
        if (a->cost.hoursToTrain.value != b->cost.hoursToTrain.value)
            return a->cost.hoursToTrain.value < b->cost.hoursToTrain.value;
        return a->cost.usdToTrain.value < b->cost.usdToTrain.value;
    });
    std::vector<const HardwareChoiceRow*> frontier;
    for (const HardwareChoiceRow* r : rows)
        if (frontier.empty() || r->cost.usdToTrain.value < frontier.back()->cost.usdToTrain.value)
            frontier.push_back(r);
    return frontier;
}

std::vector<int64_t> candidateBatches(int64_t limit) {
    limit = std::min(limit, kMaxCandidateBatch);
    std::vector<int64_t> out;
    for (int64_t p = 1; p <= limit; p *= 2) {
        out.push_back(p);
        if (p >= 2 && p + p / 2 <= limit) out.push_back(p + p / 2);
    }
    return out;
}

HardwareChoice chooseHardware(const TrainingPredictor& predictor, const std::vector<const GpuSpec*>& gpus,
                              const TrainingScenario& base, const TrainingGoal& goal,
                              const HardwareChoiceOptions& options) {
    HardwareChoice c;
    c.options = options;
    c.modelName = predictor.analysis().modelName;
    c.modelLabel = options.modelLabel.empty() ? c.modelName : options.modelLabel;
    c.parameters = double(predictor.analysis().modelParameters);
    c.activeParameters = double(predictor.analysis().modelActiveParameters);
    c.tensorParallel = predictor.analysis().tensorParallel;
    c.expertParallel = predictor.analysis().expertParallel;
    c.parametersPerGpu = double(predictor.analysis().parameters);
    c.trainableParameters = double(predictor.analysis().trainableParameters);
    c.seq = predictor.analysis().sequenceModel ? predictor.analysis().seq : 0;
    if (goal.inTokens() && c.seq <= 0)
        throw ModelError(c.modelLabel, "a training goal in tokens needs a model with a sequence dimension");
    c.base = base;
    c.goal = goal;

    std::vector<TrainingPrecision> precisions = options.precisions;
    // Every precision but fp32-strict, which only a user who turned TF32 off asks for, and
    // the 16-bit models (bf16-params, fp16-params), which need a sharded, Megatron-style or apex training loop
    // rather than autocast.
    if (precisions.empty())
        for (TrainingPrecision p : kAllTrainingPrecisions)
            if (p != TrainingPrecision::Fp32Strict && !isModelIn16Bit(p)) precisions.push_back(p);
    // Plots follow the whole candidate range; a fixed batch is considered alone.
    std::vector<int64_t> batches = candidateBatches();
    if (options.batch > 0 && !std::binary_search(batches.begin(), batches.end(), options.batch))
        batches.insert(std::upper_bound(batches.begin(), batches.end(), options.batch), options.batch);
    const std::vector<int64_t> considered = options.batch > 0 ? std::vector<int64_t>{options.batch} : batches;

    // The order in which precisions ask more of the training code: bf16 needs no loss scaling.
    std::vector<size_t> preferenceOrder(precisions.size());
    for (size_t i = 0; i < precisions.size(); ++i) preferenceOrder[i] = i;
    std::stable_sort(preferenceOrder.begin(), preferenceOrder.end(),
                     [&](size_t a, size_t b) { return preference(precisions[a]) < preference(precisions[b]); });

    const SweepPlan plan(predictor, gpus, precisions, at(base, precisions.front(), 1));
    const std::vector<GpuSweep> sweeps = plan.evaluate(batches);

    for (size_t gi = 0; gi < gpus.size(); ++gi) {
        const GpuSpec& gpu = *gpus[gi];
        HardwareChoiceRow row;
        row.gpuId = gpu.id;
        row.gpuName = gpu.name;
        std::vector<std::string> unsupported;
        std::vector<const GpuSweep*> supported;
        PrecisionChoice best;
        const GpuSweep* bestSweep = nullptr;
        for (size_t pi : preferenceOrder) {
            const GpuSweep& sweep = sweeps[gi * precisions.size() + pi];
            if (!sweep.supported) {
                unsupported.push_back(sweep.reason);
                continue;
            }
            supported.push_back(&sweep);
            const PrecisionChoice choice = chooseBatch(sweep, considered, options.nearBestShare);
            // A precision that asks more of the training code must be clearly faster to be chosen.
            if (choice.batch > 0 && choice.samplesPerS > best.samplesPerS * (1 + options.nearBestShare)) {
                best = choice;
                bestSweep = &sweep;
            }
        }
        if (bestSweep) {
            row.recommended = true;
            row.precision = best.precision;
            row.batch = best.batch;
            row.prediction = predictor.predict(gpu, at(base, best.precision, best.batch), false);
            row.cost = trainingCost(row.prediction, gpu, goal);
            row.curve = bestSweep->points;
            if (const std::string note = numericsNote(best.precision, base.masterWeights); !note.empty()) row.notes.push_back(note);
        } else if (!supported.empty()) {
            explainNoFit(row, predictor, gpu, supported, base, options.batch > 0 ? options.batch : 1);
            for (const GpuSweep* s : supported)
                if (s->precision == row.precision) row.curve = s->points;
        } else {
            row.reason = "no precision considered is supported: " + joinReasons(unsupported);
            row.prediction.supported = false;
            row.prediction.reason = row.reason;
        }
        // Where nothing runs this gives only the price (the report shows no time or cost for it).
        if (!row.recommended) row.cost = trainingCost(row.prediction, gpu, goal);
        for (const std::string& n : row.prediction.notes) row.notes.push_back(n);
        c.rows.push_back(std::move(row));
    }

    // Priced by cost, then unpriced by time, then nothing fits (database order kept within ties).
    auto group = [](const HardwareChoiceRow& r) { return !r.recommended ? 2 : r.cost.priced ? 0 : 1; };
    std::stable_sort(c.rows.begin(), c.rows.end(), [&](const HardwareChoiceRow& a, const HardwareChoiceRow& b) {
        const int ga = group(a), gb = group(b);
        if (ga != gb) return ga < gb;
        if (ga == 0 && a.cost.usdToTrain.value != b.cost.usdToTrain.value)
            return a.cost.usdToTrain.value < b.cost.usdToTrain.value;
        if (ga != 2) return a.cost.hoursToTrain.value < b.cost.hoursToTrain.value;
        return false;
    });
    for (size_t i = 0; i < c.rows.size(); ++i) c.rows[i].rank = int(i) + 1;
    c.assumptions = assumptionsOf(c, gpus);
    return c;
}

}  // namespace ts::predictors
