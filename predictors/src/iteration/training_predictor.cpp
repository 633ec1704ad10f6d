#include "trainscope/predictors/iteration/training_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "trainscope/core/errors.h"
#include "trainscope/predictors/iteration/data_parallel.h"
#include "trainscope/predictors/iteration/gemm_alignment.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/iteration/prediction_errors.h"
#include "trainscope/predictors/profile/profile_fit.h"

namespace ts::predictors {

struct TrainingPredictor::Target {
    const GpuSpec* gpu = nullptr;
    TrainingPrecision precision = TrainingPrecision::Fp32;
    std::string reason;  // empty when supported
    std::unique_ptr<LayerTimeSource> source;
    IterationSetup setup;
    IterationSetup single;  // the same on one GPU, for the scaling efficiency
    bool fromProfile = false;
    double capacity = 0;
    int64_t batchLimit = MemoryModel::kMaxBatch;  // below the smallest batch the profile saw fail here
    std::string linkBasis;
    std::string linkUsed;
    std::string linkNotice;
    std::string tensorParallelBasis;   // the tensor-parallel group's link; empty without
    std::string tensorParallelNotice;  // why it is not NVLink; empty when it is
    std::string expertParallelBasis;   // the expert-parallel group's link; empty without
    std::string expertParallelNotice;
    std::vector<int> bucketFirstOp;  // the gradient buckets' first ops, as backward readies them
    double waitShare = 0;            // slowestGpuWaitShare of the scenario's GPUs and accumulation
    bool fits(double need, double n) const { return need <= capacity && n <= double(batchLimit); }
};

namespace {

// An analytic iteration's interval: at least as wide as the whole-iteration errors measured on
// published training runs at this precision (the per-layer constants alone understate it), and on
// a GPU outside the fit as those measured out of sample on such GPUs.
Interval withMeasuredSpread(const Interval& it, TrainingPrecision p, const GpuSpec& gpu) {
    // The published FP32 rows ran on V100s, where fp32 and fp32-strict are the same computation.
    if (p == TrainingPrecision::Fp32Strict) p = TrainingPrecision::Fp32;
    const double e = std::max(errors::wholeIterationError(trainingPrecisionName(p)),
                              errors::extrapolationError(gpu.id, gpu.architecture));
    if (it.value <= 0 || it.high >= it.value * (1 + e)) return it;
    return Interval::relative(it.value, e);
}

void checkScenario(const TrainingScenario& s, int tensorParallel, int expertParallel) {
    if (s.batch < 1) throw ModelError("--batch", "the batch size must be at least 1");
    if (s.dataParallel.gpus < 1 || s.dataParallel.gpus > 65536)
        throw ModelError("--gpus", "the number of GPUs must be between 1 and 65536");
    if (tensorParallel > 1) {
        const std::string group = "the model is a tensor-parallel shard of " + std::to_string(tensorParallel) + " GPUs";
        if (s.dataParallel.gpus % tensorParallel != 0)
            throw ModelError("--gpus", group + ": the GPUs (" + std::to_string(s.dataParallel.gpus) +
                                           ") must be a multiple of it");
        if (tensorParallel > s.dataParallel.gpusPerNode)
            throw ModelError("--gpus", group + ", more than the " + std::to_string(s.dataParallel.gpusPerNode) +
                                           " GPUs of a node: tensor parallelism stays inside one node");
    }
    if (expertParallel > 1) {
        const std::string group = "the model's experts are split over groups of " + std::to_string(expertParallel) +
                                  " GPUs (expert parallelism)";
        if (s.dataParallel.gpus % expertParallel != 0)
            throw ModelError(
                "--gpus", group + ": the GPUs (" + std::to_string(s.dataParallel.gpus) + ") must be a multiple of it");
        if (expertParallel > s.dataParallel.gpusPerNode)
            throw ModelError("--gpus", group + ", more than the " + std::to_string(s.dataParallel.gpusPerNode) +
                                           " GPUs of a node: expert parallelism across nodes is not modelled");
    }
    if (s.accumulation < 1 || s.accumulation > (int64_t(1) << 20))
        throw ModelError("--accumulation", "the gradient accumulation steps must be from 1 to 2^20, got " +
                                               std::to_string(s.accumulation));
    if (s.dataParallel.zeroStage < 0 || s.dataParallel.zeroStage > 3)
        throw ModelError("--zero",
                         "the ZeRO stage must be 0, 1, 2 or 3, got " + std::to_string(s.dataParallel.zeroStage));
}

// The data-parallel replicas of a scenario whose GPUs form tensor-parallel groups of `tensorParallel`:
// one replica per group, its GPUs' rings (one per rank of the group) leaving each node through
// their own NICs, gpusPerNode / tensorParallel GPUs of each ring per node.
DataParallel replicasOf(const DataParallel& dp, int tensorParallel) {
    DataParallel r = dp;
    r.gpus = std::max(1, dp.gpus / tensorParallel);
    r.gpusPerNode = std::max(1, dp.gpusPerNode / tensorParallel);
    return r;
}

// Dense peak FLOP/s of the math a precision runs its GEMMs in; 0 when unknown.
double peakFlops(const GpuSpec& gpu, TrainingPrecision p) {
    ComputePrecision c = ComputePrecision::Fp32;
    if (p == TrainingPrecision::Tf32) c = ComputePrecision::Tf32;
    if (p == TrainingPrecision::AmpFp16 || p == TrainingPrecision::Fp16Params) c = ComputePrecision::Fp16;
    if (p == TrainingPrecision::AmpBf16 || p == TrainingPrecision::Bf16Params) c = ComputePrecision::Bf16;
    if (p == TrainingPrecision::Fp8) c = ComputePrecision::Fp8;
    const Figure f = gpu.peakTflops(c);
    return f.known() ? *f * 1e12 : 0;
}

// Gradient accumulation: the step and the gradients' reduction once per k micro-batches; then the
// step's wait for the slowest GPU (`waitShare` of the time per micro-batch). The iteration's
// interval keeps its relative width.
void perMicroBatch(IterationTimes& it, int64_t k, double waitShare) {
    if (it.iterationMs.value <= 0) return;
    double scale = 1;
    if (k > 1) {
        const double once = it.optimizerMs.value + it.communicationMs.value - it.gatherExposedMs;
        scale = amortisedIterationMs(it.iterationMs.value, once, k) / it.iterationMs.value;
    }
    if (waitShare > 0)
        it.slowestGpuWaitMs = Interval::relative(it.iterationMs.value * scale * waitShare, errors::kSlowestGpuWait);
    scale *= 1 + waitShare;
    it.iterationMs = {it.iterationMs.value * scale, it.iterationMs.low * scale, it.iterationMs.high * scale};
}

// Gradients stay allocated through the forward and backward when the micro-batches of an
// accumulated step add to them, or when zero_grad keeps them (MemoryModel).
bool gradientsPersist(const TrainingScenario& s) {
    return s.accumulation > 1 || s.keepGradients;
}

// 16-bit weights and gradients under ZeRO (DeepSpeed's layout), or always (bf16-params).
bool halfWeightsUnderZero(TrainingPrecision p) {
    return isMixedPrecision(p);
}

}  // namespace

TrainingPredictor::TrainingPredictor(const Graph& g, int64_t seq, const KernelScalingTable& table)
    : analysis_(g, seq, table), table_(table) {}

TrainingPredictor::~TrainingPredictor() = default;

void TrainingPredictor::useProfile(const Profile& profile, const GpuDatabase& db) {
    profile_ = std::make_unique<ProfileFit>(analysis_, profile, db, table_);
}

const GpuSpec* TrainingPredictor::measuredGpu() const {
    return profile_ && profile_->onGpu() ? &profile_->measuredGpu() : nullptr;
}

std::unique_ptr<TrainingPredictor::Target> TrainingPredictor::prepare(const GpuSpec& gpu, TrainingPrecision p,
                                                                      const TrainingScenario& s,
                                                                      const Target* sameGpu) const {
    auto t = std::make_unique<Target>();
    t->gpu = &gpu;
    t->precision = p;
    if (auto why = unsupportedReason(gpu, p)) {
        t->reason = *why;
        return t;
    }
    const int tp = analysis_.tensorParallel;
    const DataParallel replicas = replicasOf(s.dataParallel, tp);
    const int gpus = replicas.gpus;
    const int ep = analysis_.expertParallel;
    // A shard's group link (its basis and notice for the prediction's notes); false with t->reason set.
    // A profile measures one process running the shard: its collectives had no one to exchange with.
    auto groupLink = [&](int size, const char* collectives, std::string& basis, std::string& notice) {
        if (size <= 1) return true;
        if (profile_ && profile_->onGpu()) {
            t->reason =
                std::string("a measured profile cannot time ") + collectives + ": predict the shard without --profile";
            return false;
        }
        const std::optional<LinkModel> group = inNodeGroupLink(gpu, size, t->reason);
        if (!group) return false;
        basis = group->basis;
        notice = group->notice;
        return true;
    };
    if (!groupLink(tp, "tensor parallelism's all-reduces", t->tensorParallelBasis, t->tensorParallelNotice) ||
        !groupLink(ep, "expert parallelism's all-to-alls", t->expertParallelBasis, t->expertParallelNotice))
        return t;
    const bool network = s.dataParallel.interconnect == InterconnectKind::InfiniBand;
    // The routed experts' own data-parallel rings: one GPU of each expert-parallel group.
    DataParallel expertReplicas = replicasOf(replicas, ep);
    const int expertGpus = expertReplicas.gpus;
    std::optional<LinkModel> expertLink;
    if (ep > 1 && expertGpus > 1) {
        if (!network) expertReplicas.gpusPerNode = s.dataParallel.gpusPerNode;
        expertLink = linkFor(gpu, expertReplicas, t->reason);
        if (!expertLink) return t;
    }
    std::optional<LinkModel> link;
    if (gpus > 1) {
        // The replicas' rings join GPUs of every group: NVLink (or PCIe) is chosen for all the GPUs,
        // InfiniBand's rings cross the nodes with gpusPerNode / tp of each ring per node.
        link = linkFor(gpu, network ? replicas : s.dataParallel, t->reason);
        if (!link) return t;
        t->linkBasis = link->basis;
        t->linkUsed = interconnectName(link->used);
        t->linkNotice = link->notice;
        t->waitShare = slowestGpuWaitShare(gpus, s.accumulation, stream_.stepTimeSpread);
    }
    LayerRegions regions;
    regions.recomputed = &analysis_.plan(s.checkpointing == Checkpointing::None ? Checkpointing::Sqrt : s.checkpointing)
                              .recomputed;
    std::vector<GradientBucket> buckets;
    if (gpus > 1) buckets = gradientBuckets(analysis_, replicas);
    for (const GradientBucket& b : buckets) regions.bucketFirstOp.push_back(b.firstOp);
    t->bucketFirstOp = regions.bucketFirstOp;

    t->fromProfile = profile_ && profile_->onGpu();
    if (t->fromProfile)
        t->source =
            profile_->source(gpu, p, regions, sameGpu && sameGpu->gpu == &gpu ? sameGpu->source.get() : nullptr);
    else
        t->source = std::make_unique<AnalyticLayerTimes>(
            analysis_, prepareIterationTimes(analysis_, gpu, p, stream_, table_, s.channelsLast), regions);

    t->setup.gpus = gpus;
    t->setup.checkpointing = s.checkpointing != Checkpointing::None;
    if (t->fromProfile) {
        // The profile's measured iteration outside its layers already holds the host's share.
        t->setup.optimizerMs = optimizerStepMs(analysis_, gpu, s.optimizer, p, table_, s.optimizerImplementation,
                                                s.masterWeights);
    } else {
        const OptimizerStepTimes step =
            optimizerStepTimes(analysis_, gpu, s.optimizer, p, s.optimizerImplementation, stream_, table_,
                               s.masterWeights);
        t->setup.optimizerMs = step.gpuMs;
        t->setup.optimizerHostMs = step.hostMs;
        // torch.amp's GradScaler reads its inf check on the host before stepping, as apex's and
        // DeepSpeed's dynamic loss scalers do for an fp16 model.
        t->setup.syncBeforeOptimizer = p == TrainingPrecision::AmpFp16 || p == TrainingPrecision::Fp16Params;
    }
    const int zero = s.dataParallel.zeroStage;
    const double replicatedStepMs = t->setup.optimizerMs;
    // A collective over the replicas of `bytes`, `expertBytes` of them routed experts, which go over
    // their own group (none where each expert has one replica).
    using Collective = double (*)(double, int, const LinkModel&);
    auto overGroups = [&](Collective collective, double bytes, double expertBytes) {
        double ms = collective(bytes - expertBytes, gpus, *link);
        if (expertLink) ms += collective(expertBytes, expertGpus, *expertLink);
        return ms;
    };
    if (zero == 0) {
        for (const GradientBucket& b : buckets)
            t->setup.bucketCommMs.push_back(overGroups(allReduceMs, b.bytes, b.expertBytes));
    } else if (gpus > 1) {
        // ZeRO (memory_model.h, ModelStates): gradients reduce-scattered bucket by bucket during
        // backward, in 16 bits under autocast; the step updates one shard.
        // bf16-params reduces its gradients in fp32, as FSDP2 under torchtitan (reduce_dtype),
        // Megatron-LM and DeepSpeed do by default for bf16 training; autocast under ZeRO and fp16-params
        // (DeepSpeed's fp16 communication data type) in 16 bits.
        const bool mixed = halfWeightsUnderZero(p);
        const bool fp32Reduce = p == TrainingPrecision::Bf16Params && s.masterWeights;
        const double reduced = mixed && !fp32Reduce ? 0.5 : 1;
        for (const GradientBucket& b : buckets)
            t->setup.bucketCommMs.push_back(overGroups(reduceScatterMs, b.bytes * reduced, b.expertBytes * reduced));
        // Each GPU steps its shard: 1 / gpus of the rest, 1 / expertGpus of its own experts.
        const double all = analysis_.parameterBytes, experts = analysis_.expertParameterBytes;
        t->setup.optimizerMs *= all > 0 ? ((all - experts) / gpus + experts / expertGpus) / all : 1.0 / gpus;
        auto trainableBytes = [&](const ParameterUnit& u) {
            return mixed ? 2 * u.trainableElements : u.trainableBytes;
        };
        auto storedBytes = [&](const ParameterUnit& u) {
            return trainableBytes(u) + ModelAnalysis::frozenStoredBytes(u, p);
        };
        const std::vector<ParameterUnit>& units = analysis_.units;
        auto gatherMs = [&](size_t u) {
            return overGroups(allGatherMs, storedBytes(units[u]), storedBytes(analysis_.expertPartOf(u)));
        };
        if (zero <= 2) {
            // The updated trainable parameters, gathered after the step.
            double trainable = 0, expertTrainable = 0;
            for (size_t u = 0; u < units.size(); ++u)
                trainable += trainableBytes(units[u]), expertTrainable += trainableBytes(analysis_.expertPartOf(u));
            t->setup.afterStepGatherMs = overGroups(allGatherMs, trainable, expertTrainable);
        } else if (!units.empty()) {
            // Stage 3: every unit gathered before its forward and again before its backward; the
            // root unit (kept through the iteration) and the first block wait, the rest is prefetched.
            double total = 0;
            for (size_t u = 0; u < units.size(); ++u) total += gatherMs(u);
            t->setup.firstGatherMs = gatherMs(0) + (units.size() > 1 ? gatherMs(1) : 0);
            t->setup.forwardGatherMs = total;
            t->setup.backwardGatherMs = total - gatherMs(0);
        }
    }
    t->single = t->setup;
    t->single.gpus = 1;
    t->single.bucketCommMs.clear();
    t->single.optimizerMs = replicatedStepMs;
    t->single.firstGatherMs = t->single.forwardGatherMs = t->single.backwardGatherMs = 0;
    t->single.afterStepGatherMs = 0;
    t->capacity = gpuCapacityBytes(gpu);
    if (t->fromProfile && profile_->sameGpu(gpu)) {
        if (profile_->measuredCapacity() > 0) t->capacity = profile_->measuredCapacity();
        if (profile_->smallestFailedBatch() > 0) t->batchLimit = profile_->smallestFailedBatch() - 1;
    }
    return t;
}

double TrainingPredictor::memoryNeed(const Target& t, double allocatorBytes, double n, MemoryBound bound) const {
    double need = allocatorBytes + MemoryModel::gpuBytes(*t.gpu, bound);
    if (t.fromProfile) need += profile_->memoryCorrection(n, *t.gpu);
    return need;
}

Interval TrainingPredictor::maxBatchOf(const Target& t, const AllocatorBytes& allocator) const {
    auto search = [&](MemoryBound bound) {
        return double(largestFitting(
            [&](int64_t n) { return memoryNeed(t, allocator(n, bound), double(n), bound) <= t.capacity; },
            t.batchLimit));
    };
    return {search(MemoryBound::Value), search(MemoryBound::High), search(MemoryBound::Low)};
}

TrainingPrediction TrainingPredictor::predict(const GpuSpec& gpu, const TrainingScenario& s, bool perLayer) const {
    checkScenario(s, analysis_.tensorParallel, analysis_.expertParallel);
    TrainingPrediction r;
    r.gpuId = gpu.id;
    r.gpuName = gpu.name;
    r.scenario = s;
    const std::unique_ptr<Target> t = prepare(gpu, s.precision, s);
    if (!t->reason.empty()) {
        r.supported = false;
        r.reason = t->reason;
        return r;
    }
    const double n = double(s.batch);
    const int tp = analysis_.tensorParallel;
    const int gpus = replicasOf(s.dataParallel, tp).gpus;  // data-parallel replicas
    LayerSums sums;
    IterationTimes it = evaluateIteration(*t->source, t->setup, n, sums);
    if (!t->fromProfile) it.iterationMs = withMeasuredSpread(it.iterationMs, s.precision, gpu);
    const int64_t k = s.accumulation;
    perMicroBatch(it, k, t->waitShare);
    r.iterationMs = it.iterationMs;
    r.stepMs = {it.iterationMs.value * double(k), it.iterationMs.low * double(k), it.iterationMs.high * double(k)};
    r.forwardMs = it.forwardMs;
    r.backwardMs = it.backwardMs;
    r.recomputeMs = it.recomputeMs;
    r.optimizerMs = it.optimizerMs;
    r.communicationMs = it.communicationMs;
    r.slowestGpuWaitMs = it.slowestGpuWaitMs;
    r.otherMs = it.otherMs;
    r.hostBoundMs = it.hostBoundMs;
    const double samples = 1000.0 * n * gpus;
    r.samplesPerS = {samples / it.iterationMs.value, samples / it.iterationMs.high, samples / it.iterationMs.low};
    if (analysis_.sequenceModel) {
        const double seq = double(analysis_.seq);
        r.tokensPerS = {r.samplesPerS.value * seq, r.samplesPerS.low * seq, r.samplesPerS.high * seq};
    }
    double flops = 0;  // per sample: the FLOPs are linear in the batch at a fixed sequence length
    for (const AnalyzedOp& op : analysis_.ops) flops += op.forwardFlops.at(n) + op.backwardFlops.at(n);
    // A tensor-parallel shard's FLOPs are one GPU's share of the sample's; the replicated norms and
    // residuals (a fraction of a percent of a transformer's) count once per GPU.
    r.modelFlopsPerSample = flops / n * tp;
    if (const double peak = peakFlops(gpu, s.precision); peak > 0) {
        const double perGpu = flops;  // per GPU per iteration
        r.mfu = {perGpu / (it.iterationMs.value * 1e-3 * peak), perGpu / (it.iterationMs.high * 1e-3 * peak),
                 perGpu / (it.iterationMs.low * 1e-3 * peak)};
    }
    r.scalingEfficiency = Interval::exact(1);
    if (gpus > 1) {
        const IterationTimes one = evaluateIteration(*t->source, t->single, n, sums);
        const double t1 = one.iterationMs.value, exposed = it.communicationMs.value;
        r.scalingEfficiency = {t1 / it.iterationMs.value,
                               t1 / (it.iterationMs.value - exposed + it.communicationMs.high),
                               t1 / (it.iterationMs.value - exposed + it.communicationMs.low)};
        r.interconnect = t->linkUsed;
        r.interconnectNotice = t->linkNotice;
        if (!t->linkNotice.empty()) r.notes.push_back(t->linkNotice);
        r.notes.push_back("all-reduce over " + t->linkBasis + " (assumed NCCL efficiency; docs/prediction.md)");
    }
    if (tp > 1) {
        r.tensorParallel = tp;
        if (!t->tensorParallelNotice.empty()) r.notes.push_back(t->tensorParallelNotice);
        const std::string collectives =
            analysis_.sequenceParallel
                ? "with sequence parallelism (norms, dropouts and residuals on 1/" + std::to_string(tp) +
                      " of the tokens); each block's all-gathers and reduce-scatters (2 of each, forward and "
                      "backward)"
                : "each block's all-reduces (2 forward, 2 backward)";
        r.notes.push_back("tensor parallelism over " + std::to_string(tp) + " GPUs: " + std::to_string(gpus) +
                          (gpus == 1 ? " replica" : " data-parallel replicas") + " of " + std::to_string(tp) + "; " +
                          collectives + " over " + t->tensorParallelBasis +
                          ", not overlapped with compute (docs/prediction.md)");
    }
    if (const int ep = analysis_.expertParallel; ep > 1) {
        r.expertParallel = ep;
        if (!t->expertParallelNotice.empty()) r.notes.push_back(t->expertParallelNotice);
        const int expertGpus = std::max(1, gpus / ep);
        r.notes.push_back("expert parallelism over " + std::to_string(ep) + " GPUs: each holds 1/" +
                          std::to_string(ep) +
                          " of the routed experts; each sparse layer's all-to-alls (2 forward, 2 "
                          "backward) over " +
                          t->expertParallelBasis +
                          ", not overlapped with compute, with balanced routing; the experts' gradients are "
                          "reduced over " +
                          std::to_string(expertGpus) + (expertGpus == 1 ? " GPU" : " GPUs") + ", the rest's over " +
                          std::to_string(gpus) + " (docs/prediction.md)");
    }
    if (perLayer) {
        r.layers = t->source->layers(n);
        r.layout.optimizerHostMs = t->setup.optimizerHostMs;
        r.layout.optimizerWaitsForGpu = t->setup.syncBeforeOptimizer;
        for (size_t j = 0; j < t->bucketFirstOp.size() && j < t->setup.bucketCommMs.size(); ++j)
            r.layout.buckets.push_back({t->bucketFirstOp[j], t->setup.bucketCommMs[j]});
    }

    const MemoryModel mm(analysis_, s.precision, s.optimizer, s.checkpointing, gpus, s.dataParallel.zeroStage,
                         s.optimizerImplementation, gradientsPersist(s), s.masterWeights);
    r.memory = mm.at(n, gpu);
    double allocator[3];
    mm.allocatorBytesAll(n, allocator);
    r.peakMemoryBytes = {memoryNeed(*t, allocator[0], n, MemoryBound::Value),
                         memoryNeed(*t, allocator[1], n, MemoryBound::Low),
                         memoryNeed(*t, allocator[2], n, MemoryBound::High)};
    if (t->fromProfile) r.memory.peakAllocated += profile_->memoryCorrection(n, gpu);
    r.capacityBytes = t->capacity;
    r.fits = t->fits(r.peakMemoryBytes.value, n);
    r.maxBatch = maxBatchOf(*t, [&](int64_t b, MemoryBound bound) { return mm.allocatorBytes(double(b), bound); });

    const std::string precision = trainingPrecisionName(s.precision);
    r.calibratedShare = it.calibratedShare;
    if (t->fromProfile) {
        r.source = PredictionSource::MeasuredProfile;
        r.sourceDetail = "per-layer times fitted on " + profile_->describe();
        if (!profile_->sameGpu(gpu)) r.sourceDetail += "; moved to this GPU by the kernel-scaling cross path";
        if (s.precision != profile_->measuredPrecision())
            r.sourceDetail += std::string("; scaled analytically to ") + precision;
        for (const std::string& note : profile_->notes()) r.notes.push_back(note);
    } else {
        r.source = it.calibratedShare >= 0.5 ? PredictionSource::ShippedCalibration : PredictionSource::Analytic;
        r.sourceDetail =
            "whole-iteration model: GPU work (achieved bandwidths and FP32 rates of the kernel-scaling table, "
            "tensor-core rates fitted on measured cuBLAS GEMMs, GEMMs in waves of tiles) overlapped with the "
            "host's dispatch; efficiencies fitted on NVIDIA's published training runs (docs/prediction.md)";
        if (profile_ && !profile_->onGpu())
            r.notes.push_back("the profile was measured on a CPU: GPU predictions are analytic");
        // A measured profile holds what misaligned GEMMs cost; the analytic rates assume aligned rows.
        if (std::string note = unalignedGemmNote(unalignedGemms(analysis_, gpu, s.precision, n)); !note.empty())
            r.notes.push_back(std::move(note));
    }
    return r;
}

SweepPlan::SweepPlan(const TrainingPredictor& predictor, const std::vector<const GpuSpec*>& gpus,
                     const std::vector<TrainingPrecision>& precisions, const TrainingScenario& base)
    : predictor_(predictor), base_(base) {
    checkScenario(base, predictor.analysis_.tensorParallel, predictor.analysis_.expertParallel);
    for (TrainingPrecision p : precisions)
        memory_.push_back(std::make_unique<MemoryModel>(predictor.analysis_, p, base.optimizer, base.checkpointing,
                                                        replicasOf(base.dataParallel, predictor.analysis_.tensorParallel).gpus,
                                                        base.dataParallel.zeroStage,
                                                        base.optimizerImplementation, gradientsPersist(base),
                                                        base.masterWeights));
    // The largest batches probe the same batch sizes on many GPUs: the allocator's part once each.
    std::vector<std::unordered_map<int64_t, std::array<double, 3>>> probed(precisions.size());
    for (const GpuSpec* g : gpus) {
        const TrainingPredictor::Target* sameGpu = nullptr;  // shares with the GPU's other precisions
        for (size_t pi = 0; pi < precisions.size(); ++pi) {
            targets_.push_back(predictor.prepare(*g, precisions[pi], base, sameGpu));
            memoryIndex_.push_back(int(pi));
            const TrainingPredictor::Target& t = *targets_.back();
            if (t.source) sameGpu = &t;
            auto allocator = [&](int64_t n, MemoryBound bound) {
                auto [it, added] = probed[pi].try_emplace(n);
                if (added) memory_[pi]->allocatorBytesAll(double(n), it->second.data());
                return it->second[bound == MemoryBound::Value ? 0 : bound == MemoryBound::Low ? 1 : 2];
            };
            maxBatch_.push_back(t.reason.empty() ? predictor.maxBatchOf(t, allocator) : Interval{});
        }
    }
}

SweepPlan::~SweepPlan() = default;

std::vector<GpuSweep> SweepPlan::evaluate(const std::vector<int64_t>& batches) const {
    for (int64_t b : batches)
        if (b < 1) throw ModelError("--batch", "the batch size must be at least 1");
    // The allocator's part of the peak is the same on every GPU: once per (precision, batch, bound).
    constexpr MemoryBound kBounds[3] = {MemoryBound::Value, MemoryBound::Low, MemoryBound::High};
    std::vector<double> allocator(memory_.size() * batches.size() * 3);
    for (size_t pi = 0; pi < memory_.size(); ++pi)
        for (size_t bi = 0; bi < batches.size(); ++bi)
            memory_[pi]->allocatorBytesAll(double(batches[bi]), &allocator[(pi * batches.size() + bi) * 3]);
    std::vector<GpuSweep> out(targets_.size());
    for (size_t ti = 0; ti < targets_.size(); ++ti) {
        const TrainingPredictor::Target& t = *targets_[ti];
        GpuSweep& sw = out[ti];
        sw.gpuId = t.gpu->id;
        sw.precision = t.precision;
        sw.supported = t.reason.empty();
        sw.reason = t.reason;
        sw.maxBatch = maxBatch_[ti];
        if (sw.supported) sw.points.reserve(batches.size());
    }
    LayerSums sums;
    const double gpus = replicasOf(base_.dataParallel, predictor_.analysis_.tensorParallel).gpus;  // replicas
    // One GPU at a time, its precisions innermost: they share what the GPU's sources computed at
    // a batch size (LayerSums::shared).
    for (size_t first = 0; first < targets_.size();) {
        size_t end = first + 1;
        while (end < targets_.size() && targets_[end]->gpu == targets_[first]->gpu) ++end;
        double fixed[3];
        for (int k = 0; k < 3; ++k) fixed[k] = MemoryModel::gpuBytes(*targets_[first]->gpu, kBounds[k]);
        for (size_t bi = 0; bi < batches.size(); ++bi) {
            const double n = double(batches[bi]);
            const double samples = 1000.0 * n * gpus;
            for (size_t ti = first; ti < end; ++ti) {
                const TrainingPredictor::Target& t = *targets_[ti];
                if (!t.reason.empty()) continue;
                SweepPoint p;
                p.batch = batches[bi];
                IterationTimes it = evaluateIteration(*t.source, t.setup, n, sums);
                if (!t.fromProfile) it.iterationMs = withMeasuredSpread(it.iterationMs, t.precision, *t.gpu);
                perMicroBatch(it, base_.accumulation, t.waitShare);
                p.iterationMs = it.iterationMs;
                p.samplesPerS = {samples / p.iterationMs.value, samples / p.iterationMs.high,
                                 samples / p.iterationMs.low};
                const double* a = &allocator[(size_t(memoryIndex_[ti]) * batches.size() + bi) * 3];
                const double correction = t.fromProfile ? predictor_.profile_->memoryCorrection(n, *t.gpu) : 0;
                p.peakMemoryBytes = {a[0] + fixed[0] + correction, a[1] + fixed[1] + correction,
                                     a[2] + fixed[2] + correction};
                p.fits = t.fits(p.peakMemoryBytes.value, n);
                out[ti].points.push_back(p);
            }
        }
        first = end;
    }
    return out;
}

}  // namespace ts::predictors
