#include "trainscope/predictors/memory/memory_model.h"

#include <algorithm>

#include "trainscope/predictors/iteration/prediction_errors.h"

namespace ts::predictors {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

bool autocast(TrainingPrecision p) {
    return p != TrainingPrecision::Fp32 && p != TrainingPrecision::Tf32 && p != TrainingPrecision::Fp32Strict;
}

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

double optimizerStatePerParameterByte(Optimizer o) {
    switch (o) {
        case Optimizer::Sgd:
            return 0;
        case Optimizer::SgdMomentum:
            return 1;  // momentum buffer
        case Optimizer::Adam:
        case Optimizer::AdamW:
            return 2;  // exp_avg, exp_avg_sq
    }
    return 0;
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

MemoryModel::MemoryModel(const ModelAnalysis& m, TrainingPrecision p, Optimizer o, bool checkpointing,
                         int dataParallelGpus)
    : m_(m), precision_(p), optimizer_(o), checkpointing_(checkpointing), gpus_(std::max(1, dataParallelGpus)) {
    const size_t n = m.ops.size();
    savedByOp_.assign(n, BatchPoly{});
    transient_.assign(n, BatchPoly{});
    gradientsFrom_.assign(n + 1, 0);
    for (const SavedActivation& s : m.memoryFor(p).saved) savedByOp_[s.freedAfter] += s.bytes;
    for (size_t i = n; i-- > 0;) {
        const AnalyzedOp& op = m.ops[i];
        gradientsFrom_[i] = gradientsFrom_[i + 1] + op.parameterBytes;
        if (op.backward) transient_[i] = m.bytes(op, p).write + m.bytes(op, p).readActivations;
        parameterWaste_ += blockWaste(op.parameterBytes);
    }
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
    const double grads = m_.parameterBytes;
    const double bucketBuffers = gpus_ > 1 ? grads : 0;
    const double weights = m_.parameterBytes + m_.bufferBytes;
    const double optimizer = grads * optimizerStatePerParameterByte(optimizer_);
    const double cast = autocast(precision_) ? pm.castWeightBytes : 0;
    const double inputs = m_.inputBytes.at(n);
    // Unscaled activations and the largest transient; the backward peak per scale (its argmax
    // moves with the scales, so each keeps its own maximum).
    double activations = 0, largestTransient = 0, backwardPeak[3] = {0, 0, 0};
    if (!checkpointing_) {
        for (size_t i = 0; i < m_.ops.size(); ++i) {
            activations += savedByOp_[i].at(n);
            const double t = transient_[i].at(n);
            largestTransient = std::max(largestTransient, t);
            for (int k = 0; k < count; ++k)
                backwardPeak[k] = std::max(
                    backwardPeak[k], scales[k].activations * activations + gradientsFrom_[i] + scales[k].transient * t);
        }
    } else {
        double segment = 0;
        for (const BatchPoly& seg : pm.segmentSaved) segment = std::max(segment, seg.at(n));
        activations = pm.checkpointBoundaries.at(n) + segment;
        for (const BatchPoly& t : transient_) largestTransient = std::max(largestTransient, t.at(n));
        for (int k = 0; k < count; ++k)
            backwardPeak[k] = scales[k].activations * activations + grads + scales[k].transient * largestTransient;
    }
    // foreach Adam's one parameter-sized temporary (the denominator sqrt(v) / c2 + eps).
    const double stepTemporaries =
        optimizer_ == Optimizer::Adam || optimizer_ == Optimizer::AdamW ? m_.parameterBytes : 0;
    const double savedTotal = pm.savedTotal.at(n);
    const double savedScale = checkpointing_ && savedTotal > 0 ? activations / savedTotal : 1;
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
