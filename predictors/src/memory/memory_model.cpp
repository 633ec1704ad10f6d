#include "trainscope/predictors/memory/memory_model.h"

#include <algorithm>

#include "trainscope/core/fine_tuning.h"
#include "trainscope/predictors/iteration/prediction_errors.h"

namespace ts::predictors {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// Expected bytes the caching allocator loses to one tensor of `s` bytes (c10 CUDACachingAllocator:
// sizes rounded up to 512 B; tensors up to 1 MiB share 2 MiB segments; 1-10 MiB ones share 20 MiB
// segments, which leave a remainder: about 15% on average, at most 1 MiB counted; larger ones are
// rounded up to 2 MiB: 1 MiB on average). Non-decreasing in s, so the peak grows with the batch.
double blockWaste(double s) {
    if (s <= 0) return 0;
    if (s <= kMiB) return 256;
    if (s < 10 * kMiB) return std::min(0.15 * s, kMiB);
    return kMiB;
}

// Optimizer state of trainable parameters, at full size (before any sharding); `copyBytes` is one
// copy of them in the states' dtype (their own, or fp32 beside 16-bit weights); `elements` of them,
// `small` in tensors under bitsandbytes' min_8bit_size.
double optimizerStateBytes(Optimizer o, double copyBytes, double elements, double small) {
    switch (o) {
        case Optimizer::Sgd:
            return 0;
        case Optimizer::SgdMomentum:
            return copyBytes;  // momentum buffer
        case Optimizer::Adam:
        case Optimizer::AdamW:
            return 2 * copyBytes;  // exp_avg, exp_avg_sq
        case Optimizer::Adam8bit: {
            // bitsandbytes: two 1-byte states per element plus one fp32 absmax per 2048-element block
            // of each (Dettmers et al. 2022, block-wise quantisation); tensors under 4096 elements
            // keep 32-bit states.
            const double large = std::max(0.0, elements - small);
            return large * (2 + 2 * 4.0 / 2048) + small * 8;
        }
    }
    return 0;
}

double frozenOpBytes(const AnalyzedOp& op, TrainingPrecision p) {
    return op.nf4Elements * kNf4BytesPerElement + (isMixedPrecision(p) ? 2 * op.frozenElements : op.frozenBytes);
}

}  // namespace

double cudaContextBytes(const GpuSpec& gpu) {
    // Estimates, not measurements (docs/prediction.md): a CUDA 12 context with lazy module loading
    // plus the kernels PyTorch, cuBLAS and cuDNN load for training; newer architectures carry more
    // kernel images and a larger context.
    const int cc = gpu.ccMajor * 10 + gpu.ccMinor;
    if (cc >= 90) return 0.9 * kGiB;
    if (cc >= 80) return 0.7 * kGiB;
    return 0.6 * kGiB;
}

double cublasWorkspaceBytes(const GpuSpec& gpu) {
    const double cublas = gpu.ccMajor >= 9 ? 4096.0 * 1024 * 8 : (4096.0 * 2 + 16 * 8) * 1024;
    return cublas + kMiB;
}

double gpuCapacityBytes(const GpuSpec& gpu) {
    return gpu.memoryGB.known() ? *gpu.memoryGB * kGiB : 0;
}

MemoryModel::MemoryModel(const ModelAnalysis& m, TrainingPrecision p, Optimizer o, Checkpointing checkpointing,
                         int dataParallelGpus, int zeroStage, OptimizerImplementation implementation,
                         bool gradientsPersist, bool masterWeights)
    : m_(m),
      precision_(p),
      optimizer_(o),
      checkpointing_(checkpointing),
      gpus_(std::max(1, dataParallelGpus)),
      gradientsPersist_(gradientsPersist) {
    states_ = modelStates(m, p, o, gpus_, zeroStage, implementation, masterWeights);
    const size_t n = m.ops.size();
    savedByOp_.assign(n, BatchPoly{});
    transient_.assign(n, BatchPoly{});
    gradientsFrom_.assign(n + 1, 0);
    for (const SavedActivation& s : m.memoryFor(p).saved) savedByOp_[s.freedAfter] += s.bytes;
    for (size_t i = n; i-- > 0;) {
        const AnalyzedOp& op = m.ops[i];
        gradientsFrom_[i] = gradientsFrom_[i + 1] + op.parameterBytes;
        if (op.backward)
            transient_[i] = m.bytes(op, p).write + m.bytes(op, p).readActivations + m.bytes(op, p).backwardScratch;
        parameterWaste_ += blockWaste(op.parameterBytes) + blockWaste(frozenOpBytes(op, p));
    }
}

ModelStates modelStates(const ModelAnalysis& m, TrainingPrecision p, Optimizer o, int gpus, int zeroStage,
                        OptimizerImplementation implementation, bool masterWeights) {
    const double n = std::max(1, gpus);
    // DeepSpeed's mixed precision under ZeRO: 16-bit weights and gradients, the fp32 master copy
    // with the optimizer states (the ZeRO paper's 2 + 2 + K bytes per parameter, K = 12 for Adam).
    // A 16-bit model (bf16-params, fp16-params) keeps that layout on any stage (FSDP's sharded fp32
    // parameters, apex's and DeepSpeed's fp32 copies are the master), unless bf16-params trains
    // without master weights: then weights, gradients and optimizer states are all bf16, but for the
    // adapters a set-up added, which PEFT keeps in fp32.
    // fp16-params always has its master copy (fp16 updates and states underflow; the CLI refuses the option).
    const bool zeroMixed = (zeroStage > 0 && isAutocast(p)) || p == TrainingPrecision::Fp16Params ||
                           (p == TrainingPrecision::Bf16Params && masterWeights);
    const bool pureBf16 = p == TrainingPrecision::Bf16Params && !masterWeights;
    // One copy (weights or gradients) of `elements` trainable elements, `adapters` of them adapters,
    // `atDtype` bytes at the graph's dtypes.
    auto copyBytes = [&](double elements, double adapters, double atDtype) {
        if (zeroMixed) return 2 * elements;
        if (pureBf16) return ModelAnalysis::bf16CopyBytes(elements, adapters);
        return atDtype;
    };
    const double trainable = double(m.trainableParameters);
    const double trained = copyBytes(trainable, double(m.adapterParameters), m.parameterBytes);
    auto unitBytes = [&](const ParameterUnit& u) {
        return copyBytes(u.trainableElements, u.adapterElements, u.trainableBytes) +
               ModelAnalysis::frozenStoredBytes(u, p);
    };
    auto unitGradients = [&](const ParameterUnit& u) {
        return copyBytes(u.trainableElements, u.adapterElements, 4 * u.trainableElements);
    };
    // Expert parallelism: the routed experts' data-parallel group is n / expertParallel GPUs (the
    // others of their expert-parallel group hold other experts), the rest's all n. `split` shards a
    // whole of which `experts` are routed experts.
    ParameterUnit experts;
    for (const ParameterUnit& u : m.expertUnits) {
        experts.trainableElements += u.trainableElements, experts.trainableBytes += u.trainableBytes;
        experts.adapterElements += u.adapterElements, experts.frozenElements += u.frozenElements;
        experts.frozenBytes += u.frozenBytes, experts.nf4Elements += u.nf4Elements;
    }
    const double ne = std::max(1.0, n / std::max(1, m.expertParallel));
    auto split = [&](double whole, double expert) { return (whole - expert) / n + expert / ne; };
    auto gathered = [&](double whole, double expert) {
        return (whole - expert) * (n - 1) / n + expert * (ne - 1) / ne;
    };
    const double expertTrained = copyBytes(experts.trainableElements, experts.adapterElements, experts.trainableBytes);
    ModelStates s;
    const double weights = trained + m.frozenStoredBytes(p);
    const double expertWeights = expertTrained + ModelAnalysis::frozenStoredBytes(experts, p);
    const double gradients = trained;
    const double small = double(m.smallTrainableParameters);
    const double optimizer = zeroMixed ? optimizerStateBytes(o, m.parameterBytes, trainable, small) + 4 * trainable
                                       : optimizerStateBytes(o, trained, trainable, small);
    const double expertOptimizer = zeroMixed
                                       ? optimizerStateBytes(o, experts.trainableBytes, experts.trainableElements, 0) +
                                             4 * experts.trainableElements
                                       : optimizerStateBytes(o, expertTrained, experts.trainableElements, 0);
    double largestUnit = 0, largestUnitGradients = 0;
    for (size_t u = 1; u < m.units.size(); ++u) {
        const ParameterUnit& unit = m.units[u];
        const ParameterUnit& ex = m.expertPartOf(u);
        largestUnit = std::max(largestUnit, gathered(unitBytes(unit), unitBytes(ex)));
        largestUnitGradients = std::max(largestUnitGradients, gathered(unitGradients(unit), unitGradients(ex)));
    }
    const double root = m.units.empty() ? 0 : gathered(unitBytes(m.units[0]), unitBytes(m.expertPartOf(0)));
    // Stage 3 (FSDP FULL_SHARD): a shard of everything, plus the gathered root unit (kept through
    // the iteration), the block being computed and the one prefetched.
    s.gatheredWeights = zeroStage >= 3 ? root + 2 * largestUnit : 0;
    s.weights = zeroStage >= 3 ? split(weights, expertWeights) + s.gatheredWeights : weights;
    // Stage 2 and 3: a shard of the gradients, plus one block's being reduce-scattered.
    s.gradients = zeroStage >= 2 ? split(gradients, expertTrained) + largestUnitGradients : gradients;
    s.gradientScale = m.parameterBytes > 0 ? s.gradients / m.parameterBytes : 0;
    s.optimizerState = zeroStage >= 1 ? split(optimizer, expertOptimizer) : optimizer;
    // DDP's buckets copy the gradients in their own dtype: the parameters' (bf16 under bf16-params, with
    // or without the optimizer's fp32 master weights; fp32 under autocast).
    s.ddpBuckets = gpus > 1 && zeroStage == 0 ? trained : 0;
    s.castCopies = isAutocast(p) && !zeroMixed;
    // Adam's denominator sqrt(v) / c2 + eps is a temporary: foreach Adam computes it for every
    // tensor at once (parameter-sized; the GPU's shard under ZeRO), a for-loop one tensor at a time
    // (the largest tensor's size), a fused kernel in registers (none); bitsandbytes' fused 8-bit
    // step has none.
    const bool adam = o == Optimizer::Adam || o == Optimizer::AdamW;
    const double stateCopy = pureBf16 ? trained : m.parameterBytes;
    const double expertStateCopy = pureBf16 ? expertTrained : experts.trainableBytes;
    const double shard = zeroStage >= 1 ? split(stateCopy, expertStateCopy) : stateCopy;
    const bool largestInBf16 = pureBf16 && m.adapterParameters < m.trainableParameters;  // adapters are small
    const double largestTensor = largestInBf16 ? m.largestParameterBytes / 2 : m.largestParameterBytes;
    if (adam && implementation == OptimizerImplementation::Foreach) s.stepTemporaries = shard;
    if (adam && implementation == OptimizerImplementation::ForLoop)
        s.stepTemporaries = std::min(shard, largestTensor);
    return s;
}

MemoryModel::Scale MemoryModel::scaleFor(MemoryBound b) {
    using namespace errors;
    if (b == MemoryBound::Low) return {1 / (1 + kActivationBytes), 1 / (1 + kWorkspace), 0.5, 1 / (1 + kCudaContext)};
    if (b == MemoryBound::High) return {1 + kActivationBytes, 1 + kWorkspace, 2, 1 + kCudaContext};
    return {};
}

void MemoryModel::allocatorPeaks(double n, const Scale* scales, int count, double* peak, double* fragmentation,
                                 MemoryBreakdown* parts) const {
    const PrecisionMemory& pm = m_.memoryFor(precision_);
    const double grads = states_.gradients;
    // The gradients alive at op i's backward: those of ops >= i, or all of them when they persist.
    auto gradientsAt = [&](size_t i) { return gradientsPersist_ ? grads : gradientsFrom_[i] * states_.gradientScale; };
    const double bucketBuffers = states_.ddpBuckets;
    const double weights = states_.weights + m_.bufferBytes;
    const double optimizer = states_.optimizerState;
    const double cast = states_.castCopies ? pm.castWeightBytes : 0;
    const double inputs = m_.inputBytes.at(n);
    // Unscaled activations and the largest transient; the backward peak per scale (its argmax
    // moves with the scales, so each keeps its own maximum).
    double activations = 0, largestTransient = 0, backwardPeak[3] = {0, 0, 0};
    if (checkpointing_ == Checkpointing::None) {
        for (size_t i = 0; i < m_.ops.size(); ++i) {
            activations += savedByOp_[i].at(n);
            const double t = transient_[i].at(n);
            largestTransient = std::max(largestTransient, t);
            for (int k = 0; k < count; ++k)
                backwardPeak[k] =
                    std::max(backwardPeak[k], scales[k].activations * activations + gradientsAt(i) +
                                                  scales[k].transient * t);
        }
    } else {
        // At the backward of op i: what ops <= i keep, the inputs of the regions begun by i, and
        // the whole of i's region saved again by its rerun.
        const CheckpointPlan& plan = m_.plan(checkpointing_);
        const CheckpointPlan::Memory& pm2 = m_.planMemory(checkpointing_, precision_);
        activations = pm2.peak(n);
        double kept = 0, inputs = 0;
        size_t nextKept = 0, nextRegion = 0;
        for (size_t i = 0; i < m_.ops.size(); ++i) {
            for (; nextKept < pm2.kept.size() && pm2.kept[nextKept].op <= int(i); ++nextKept)
                kept += pm2.kept[nextKept].bytes.at(n);
            for (; nextRegion < plan.regionFirstOp.size() && plan.regionFirstOp[nextRegion] <= int(i); ++nextRegion)
                inputs += pm2.regionInputs[nextRegion].at(n);
            const int r = plan.region[i];
            const double alive = kept + inputs + (r >= 0 ? pm2.regionSaved[size_t(r)].at(n) : 0);
            const double t = transient_[i].at(n);
            largestTransient = std::max(largestTransient, t);
            for (int k = 0; k < count; ++k)
                backwardPeak[k] =
                    std::max(backwardPeak[k], scales[k].activations * alive + gradientsAt(i) + scales[k].transient * t);
        }
    }
    const double stepTemporaries = states_.stepTemporaries;
    const double savedTotal = pm.savedTotal.at(n);
    const double savedScale = checkpointing_ != Checkpointing::None && savedTotal > 0 ? activations / savedTotal : 1;
    double waste[3] = {parameterWaste_, parameterWaste_, parameterWaste_};
    for (const SavedActivation& a : pm.saved) {
        const double bytes = a.bytes.at(n) * savedScale;
        for (int k = 0; k < count; ++k) waste[k] += blockWaste(bytes * scales[k].activations);
    }
    for (int k = 0; k < count; ++k) {
        peak[k] =
            weights + optimizer + inputs + bucketBuffers + std::max(backwardPeak[k] + cast, grads + stepTemporaries);
        fragmentation[k] = (waste[k] + scales[k].transient * largestTransient) * scales[k].fragmentation;
    }
    if (parts) {
        parts->weights = weights;
        parts->castWeightCopies = cast;
        parts->gradients = grads + bucketBuffers;
        parts->optimizerState = optimizer;
        parts->activations = scales[0].activations * activations;
        parts->inputs = inputs;
        parts->workspace = std::max(scales[0].transient * largestTransient, stepTemporaries);
    }
}

MemoryBreakdown MemoryModel::at(double n, const GpuSpec& gpu, MemoryBound bound) const {
    const Scale s = scaleFor(bound);
    MemoryBreakdown b;
    double peak = 0, fragmentation = 0;
    allocatorPeaks(n, &s, 1, &peak, &fragmentation, &b);
    const double cublas = cublasWorkspaceBytes(gpu);
    b.workspace += cublas;
    b.peakAllocated = peak + cublas;
    b.fragmentation = fragmentation;
    b.cudaContext = cudaContextBytes(gpu) * s.context;
    return b;
}

double MemoryModel::allocatorBytes(double n, MemoryBound bound) const {
    const Scale s = scaleFor(bound);
    double peak = 0, fragmentation = 0;
    allocatorPeaks(n, &s, 1, &peak, &fragmentation, nullptr);
    return peak + fragmentation;
}

void MemoryModel::allocatorBytesAll(double n, double out[3]) const {
    const Scale s[3] = {scaleFor(MemoryBound::Value), scaleFor(MemoryBound::Low), scaleFor(MemoryBound::High)};
    double peak[3], fragmentation[3];
    allocatorPeaks(n, s, 3, peak, fragmentation, nullptr);
    for (int k = 0; k < 3; ++k) out[k] = peak[k] + fragmentation[k];
}

double MemoryModel::gpuBytes(const GpuSpec& gpu, MemoryBound bound) {
    return cublasWorkspaceBytes(gpu) + cudaContextBytes(gpu) * scaleFor(bound).context;
}

double MemoryModel::deviceBytes(double n, const GpuSpec& gpu, MemoryBound bound) const {
    return allocatorBytes(n, bound) + gpuBytes(gpu, bound);
}

int64_t largestFitting(const std::function<bool(int64_t)>& fits, int64_t limit) {
    if (limit < 1 || !fits(1)) return 0;
    int64_t lo = 1, hi = 2;  // fits(lo); hi is the next candidate
    while (hi <= limit && fits(hi)) lo = hi, hi *= 2;
    hi = std::min(hi, limit + 1);
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

int64_t MemoryModel::maxBatch(double capacity, const GpuSpec& gpu, MemoryBound bound) const {
    const double fixed = gpuBytes(gpu, bound);
    return largestFitting([&](int64_t n) { return allocatorBytes(double(n), bound) + fixed <= capacity; }, kMaxBatch);
}

}  // namespace ts::predictors
