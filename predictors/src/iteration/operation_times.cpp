#include "trainscope/predictors/iteration/operation_times.h"

#include <algorithm>
#include <cmath>

#include "trainscope/core/errors.h"
#include "trainscope/predictors/iteration/data_parallel.h"
#include "trainscope/predictors/iteration/gemm_alignment.h"
#include "trainscope/predictors/iteration/prediction_errors.h"
#include "trainscope/predictors/scaling/kernel_scaling.h"

namespace ts::predictors {
namespace {

// Launch of one recurrent time step (cuDNN runs a kernel or more per step): an estimate.
constexpr double kRecurrentStepUs = 5;

// The collectives of a shard on `gpu`: the tensor-parallel group's all-reduce and the expert-parallel
// group's all-to-all (none for a whole model).
struct GroupCosts {
    CollectiveCost allReduce, allToAll;
    const CollectiveCost& of(const AnalyzedOp& op) const { return op.allToAll ? allToAll : allReduce; }
};

GroupCosts groupCosts(const ModelAnalysis& m, const GpuSpec& gpu) {
    GroupCosts c;
    auto link = [&](int gpus, const char* what) {
        std::string reason;
        const std::optional<LinkModel> l = inNodeGroupLink(gpu, gpus, reason);
        if (!l)
            throw ModelError(gpu.id,
                             std::string(what) + " parallelism over " + std::to_string(gpus) + " GPUs: " + reason);
        return *l;
    };
    if (m.tensorParallel > 1) c.allReduce = allReduceCost(m.tensorParallel, link(m.tensorParallel, "tensor"));
    if (m.expertParallel > 1) c.allToAll = allToAllCost(m.expertParallel, link(m.expertParallel, "expert"));
    return c;
}

// A collective's rows (prepareOperationTimes' rule): its message over the link in the pass that
// reduces, the ring's step latencies as its fixed time; the other pass launches no kernel. An
// all-to-all moves its message in both passes (the gradients go back the way the tokens came).
void pushCollectiveRows(const AnalyzedOp& op, const OpBytes& b, const CollectiveCost& cost, double hostForwardMs,
                        double hostBackwardMs, OperationTimes& out) {
    TimeRow f;
    f.op = op.op;
    f.link = true;
    f.relError = errors::kCommunication;
    f.hostMs = hostForwardMs;
    TimeRow r = f;
    r.hostMs = hostBackwardMs;
    if (op.allToAll) {
        for (TimeRow* row : {&f, &r}) {
            row->memoryMs = b.message * cost.msPerByte;
            row->fixedMs = cost.fixedMs;
        }
    } else if (op.sequenceParallel) {
        // An all-gather and a reduce-scatter, one each way: each half an all-reduce's bytes and steps.
        for (TimeRow* row : {&f, &r}) {
            row->memoryMs = b.message * (cost.msPerByte / 2);
            row->fixedMs = cost.fixedMs / 2;
        }
    } else {
        TimeRow& reducing = op.reducesInBackward ? r : f;
        reducing.memoryMs = b.message * cost.msPerByte;
        reducing.fixedMs = cost.fixedMs;
    }
    out.forward.push_back(f);
    if (op.backward) out.backward.push_back(r);
}

// A recurrent layer's backward runs two kernels per step (data and weight gradient) like a GEMM's.
double backwardKernelsOf(const AnalyzedOp& op) {
    return op.kind == OpKind::Recurrent ? 2 : op.backwardKernels;
}

// Directions of a recurrent layer: a bidirectional one runs both, one after the other per layer.
double directionsOf(const AnalyzedOp& op) {
    return op.bidirectional ? 2 : 1;
}

bool gemmLike(OpKind k) {
    return k == OpKind::Gemm || k == OpKind::Conv || k == OpKind::Recurrent;
}

// Kernels of one scaled_dot_product_attention: the fused backends run the forward as one kernel and
// the backward as three (FlashAttention-2's dO.O product, the main kernel, dQ's conversion); the
// math backend runs its products and softmax (and dropout) as kernels of their own, each through
// memory (PyTorch's reference implementation). Counted from PyTorch's kernels: assumed, not timed.
struct AttentionKernels {
    double forward = 1, backward = 3;
};
AttentionKernels attentionKernelsOf(const AnalyzedOp& op) {
    if (op.attentionBackend != AttentionBackend::Math) return {1, 3};
    return {4, 7};  // QK^T, softmax, dropout, PV; and dP, dV, the softmax and dropout backward, dQ, dK
}

double peak(const GpuSpec& gpu, ComputePrecision p) {
    const Figure f = gpu.peakTflops(p);
    return f.known() ? *f : 0;
}

std::optional<std::string> missing(const GpuSpec& gpu, ComputePrecision p, const std::string& what) {
    const Figure f = gpu.peakTflops(p);
    if (f.known() && *f > 0) return std::nullopt;
    const std::string why = !f.note.empty() ? f.note : !f.unknown.empty() ? f.unknown : "not in the database";
    return gpu.name + " has no " + what + " (" + why + ")";
}

// DRAM bytes per parameter and passes of torch.optim's default foreach implementations (fp32
// state): sgd: p -= lr g (12 B); momentum: buf *= m; buf += g; p -= lr buf (32 B, 3 passes);
// adam: m.lerp_(g); v *= b2; v.addcmul_(g, g); d = v.sqrt(); d /= c2; d += eps; p.addcdiv_(m, d)
// (72 B, 7 passes); adamw adds p *= 1 - lr wd (80 B, 8). A fused step reads and writes each
// tensor once: momentum 20 B (p, g, buf in; p, buf out), adam and adamw 28 B (p, g, m, v in; p, m, v
// out). A for-loop runs foreach's passes one tensor at a time. Mixed precision adds a pass writing
// the 16-bit copy (autocast: the grad scaler's unscale and inf check; 8 B, 1 pass). Without master
// weights (bf16-params) the same passes move bf16 tensors, but for fp32 adapters.
struct OptimizerTraffic {
    double bytesPerParameter = 12;
    double passes = 1;
};
OptimizerTraffic optimizerTraffic(const ModelAnalysis& m, Optimizer o, TrainingPrecision p,
                                  OptimizerImplementation implementation, bool masterWeights) {
    OptimizerTraffic t;
    const bool fused = implementation == OptimizerImplementation::Fused;
    if (o == Optimizer::SgdMomentum) t = fused ? OptimizerTraffic{20, 1} : OptimizerTraffic{32, 3};
    if (o == Optimizer::Adam) t = fused ? OptimizerTraffic{28, 1} : OptimizerTraffic{72, 7};
    if (o == Optimizer::AdamW) t = fused ? OptimizerTraffic{28, 1} : OptimizerTraffic{80, 8};
    // bitsandbytes' fused 8-bit step: reads parameter, gradient and both 1-byte states, writes the
    // parameter and the states (4 + 4 + 1 + 1 + 4 + 1 + 1; the block constants are negligible).
    if (o == Optimizer::Adam8bit) t = {16, 1};
    if (p == TrainingPrecision::Bf16Params && !masterWeights) {
        const double trainable = double(std::max<int64_t>(1, m.trainableParameters));
        const double adapters = double(std::min(m.adapterParameters, m.trainableParameters));
        t.bytesPerParameter *= ModelAnalysis::bf16CopyBytes(trainable, adapters) / (4 * trainable);
    } else if (isMixedPrecision(p)) {
        t.bytesPerParameter += 8, t.passes += 1;  // the 16-bit copy of the master
    }
    return t;
}

// The expected relative error of an operation's row at `p` (prediction_errors.h): its class's
// model-only error, widened where the precision moves it beyond what was measured.
double rowError(const AnalyzedOp& op, const GpuSpec& gpu, TrainingPrecision p) {
    const bool gemm = gemmLike(op.kind);
    double e = !op.opClass.empty() ? errors::modelOnlyClassError(op.opClass) : errors::kUncalibratedRoofline;
    if (gemm && mathPrecisionOf(op, gpu, p) != TrainingPrecision::Fp32)
        return errors::combine(e, errors::kTensorCorePrecision);
    if (!gemm && isMixedPrecision(p)) return errors::combine(e, errors::kNarrowerElements);
    return e;
}

}  // namespace

double TimeRow::tiledMs(double n) const {
    const double compute = computeMs.at(n);
    if (compute >= waveMs) return compute + waveMs / 2;
    return std::max(compute + std::max(compute, splitWaveMs) / 2, splitWaveMs);
}

double TimeRow::kernelMs(double n) const {
    return std::max(tiledMs(n), memoryMs.at(n)) + fixedMs;
}

double TimeRow::at(double n) const {
    return softMax(floorMs, kernelMs(n), softness) + castMs.at(n);
}

double OperationTimes::calibratedShare(double n) const {
    double all = 0, calibrated = 0;
    for (const std::vector<TimeRow>* rows : {&forward, &backward})
        for (const TimeRow& r : *rows) {
            const double t = r.at(n);
            all += t;
            if (r.calibrated) calibrated += t;
        }
    return all > 0 ? calibrated / all : 0;
}

TrainingPrecision mathPrecisionOf(const AnalyzedOp& op, const GpuSpec& gpu, TrainingPrecision p) {
    // A depthwise convolution has no reduction over channels for a tensor core to take: PyTorch's own
    // kernels (channels-first FP32) and cuDNN's depthwise ones (16-bit, channels-last) run on CUDA cores.
    if (op.depthwiseConv()) return TrainingPrecision::Fp32;
    if (p == TrainingPrecision::Fp32Strict) return TrainingPrecision::Fp32;
    if (p == TrainingPrecision::Bf16Params) return TrainingPrecision::AmpBf16;  // the same bf16 tensor math
    if (p == TrainingPrecision::Fp16Params) return TrainingPrecision::AmpFp16;  // the same fp16 tensor math
    if (p == TrainingPrecision::Fp32 && op.kind == OpKind::Conv && gpu.limits.tensorCores &&
        peak(gpu, ComputePrecision::Tf32) > 0)
        return TrainingPrecision::Tf32;
    return p;
}

std::optional<std::string> unsupportedReason(const GpuSpec& gpu, TrainingPrecision p) {
    if (!gpu.memoryBandwidthGBs.known() || *gpu.memoryBandwidthGBs <= 0)
        return gpu.name + ": its memory bandwidth is unknown, so no time can be predicted";
    if (!gpu.fp32Tflops.known() || *gpu.fp32Tflops <= 0)
        return gpu.name + ": its FP32 peak is unknown, so no time can be predicted";
    if (p == TrainingPrecision::Fp32 || p == TrainingPrecision::Fp32Strict) return std::nullopt;
    if (!gpu.limits.tensorCores) {
        std::string why = gpu.name + " has no tensor cores";
        if ((p == TrainingPrecision::AmpFp16 || p == TrainingPrecision::Fp16Params) &&
            peak(gpu, ComputePrecision::Fp16) > 0)
            why += " (its FP16 runs packed on CUDA cores, which this predictor does not model)";
        return why;
    }
    switch (p) {
        case TrainingPrecision::Tf32:
            return missing(gpu, ComputePrecision::Tf32, "TF32 tensor math");
        case TrainingPrecision::AmpFp16:
        case TrainingPrecision::Fp16Params:
            return missing(gpu, ComputePrecision::Fp16, "FP16 tensor math");
        case TrainingPrecision::AmpBf16:
        case TrainingPrecision::Bf16Params:
            return missing(gpu, ComputePrecision::Bf16, "BF16 tensor math");
        case TrainingPrecision::Fp8:
            if (auto why = missing(gpu, ComputePrecision::Fp8, "FP8 tensor math")) return why;
            return missing(gpu, ComputePrecision::Bf16, "BF16 tensor math for the layers FP8 leaves out");
        default:
            return std::nullopt;
    }
}

double precisionRateRatio(const GpuSpec& gpu, TrainingPrecision p, bool linearLayer) {
    const double fp32 = peak(gpu, ComputePrecision::Fp32);
    if (fp32 <= 0) return 1;
    switch (p) {
        case TrainingPrecision::Fp32:
        case TrainingPrecision::Fp32Strict:
            return 1;
        case TrainingPrecision::Tf32:
            return peak(gpu, ComputePrecision::Tf32) / fp32;
        case TrainingPrecision::AmpFp16:
        case TrainingPrecision::Fp16Params:
            return peak(gpu, ComputePrecision::Fp16) / fp32;
        case TrainingPrecision::AmpBf16:
        case TrainingPrecision::Bf16Params:
            return peak(gpu, ComputePrecision::Bf16) / fp32;
        case TrainingPrecision::Fp8:
            return peak(gpu, linearLayer ? ComputePrecision::Fp8 : ComputePrecision::Bf16) / fp32;
    }
    return 1;
}

OperationTimes prepareOperationTimes(const ModelAnalysis& m, const GpuSpec& gpu, TrainingPrecision p,
                                     const KernelScalingTable& table) {
    if (auto why = unsupportedReason(gpu, p)) throw ModelError(gpu.id, *why);
    OperationTimes out;
    out.gpuId = gpu.id;
    out.precision = p;
    const ClassScaling& add = table.forClass("add");
    const ClassScaling& linear = table.forClass("linear");
    const GpuOpStats addStats = table.statsFor(add, gpu);
    const double bw = *gpu.memoryBandwidthGBs * 1e9;
    const double castMsPerByte = 1e3 / (bw * addStats.memEff);
    const GroupCosts collectives = groupCosts(m, gpu);
    for (const AnalyzedOp& op : m.ops) {
        if (!op.hasWork()) continue;
        if (op.kind == OpKind::Collective) {
            pushCollectiveRows(op, m.bytes(op, p), collectives.of(op), 0, 0, out);
            continue;
        }
        const bool calibrated = !op.opClass.empty();
        const bool gemm = gemmLike(op.kind);
        const bool attention = op.kind == OpKind::Attention;
        const ClassScaling& c = calibrated ? table.forClass(op.opClass) : gemm ? linear : add;
        const ScalingParams& sp = c.params;
        const GpuOpStats st = table.statsFor(c, gpu);
        const double arch = architectureFactor(gpu, sp);
        const OpBytes& b = m.bytes(op, p);
        const double e = rowError(op, gpu, p);

        TimeRow f;
        f.op = op.op;
        f.calibrated = calibrated;
        f.floorMs = st.floorMs;
        f.softness = sp.softness;
        f.relError = e;
        f.architectureFactor = arch;
        f.alpha = sp.alpha;
        f.maxRatio = sp.maxRatio;
        const double steps = op.kind == OpKind::Recurrent ? op.steps * kRecurrentStepUs * 1e-3 : 0;
        double msPerFlop = 0, msPerByte = 0;
        if (attention) {  // its products at a GEMM's sustained rate, its score traffic at its class's bandwidth
            const double rate = sustainedFp32Tflops(gpu, linear.params) * 1e12 *
                                precisionRateRatio(gpu, mathPrecisionOf(op, gpu, p), false);
            msPerFlop = 1e3 * arch / rate;
            msPerByte = 1e3 * arch / (bw * st.memEff);
        } else if (gemm) {
            const double rate = sustainedFp32Tflops(gpu, sp) * 1e12 *
                                precisionRateRatio(gpu, mathPrecisionOf(op, gpu, p), op.opClass == "linear");
            msPerFlop = 1e3 * arch / rate;
            msPerByte = 1e3 * arch / bw;  // the roofline form of the GEMM classes: datasheet bandwidth
        } else {
            msPerByte = 1e3 * arch / (bw * st.memEff);
        }
        f.computeMs = op.forwardFlops * msPerFlop;
        f.memoryMs = (b.read + b.write) * msPerByte;
        f.fixedMs = (sp.tauUs * 1e-3 + steps) * arch;
        f.castMs = b.castForward * castMsPerByte;
        out.forward.push_back(f);
        if (!op.backward) continue;

        TimeRow r = f;
        r.relError = errors::combine(e, errors::kBackwardPass);
        r.computeMs = op.backwardFlops * msPerFlop;
        r.memoryMs = backwardBytes(op, b) * msPerByte;
        if (gemm) r.fixedMs = (sp.tauUs * 1e-3 * backwardKernelsOf(op) + 2 * steps) * arch;
        r.castMs = b.castBackward * castMsPerByte;
        out.backward.push_back(r);
    }
    return out;
}

namespace {

// The narrowest tile width a GEMM library picks for `columns` output columns: powers of two from
// 8 (the tensor-core minimum) to `widest`.
double tileColumns(double columns, double widest) {
    double w = 8;
    while (w < widest && w < columns) w *= 2;
    return w;
}

// Normalisation kernels of one thread block per plane (AnalyzedOp::normPlanes): a block streams its
// plane at about its SM's share of the bandwidth (the stored traces' cuDNN batch norms over 64
// channels of a ResNet-50 at batch 32: about 85% of that share on an A100, 94% on a V100), so fewer
// planes than SMs leave the rest of the GPU idle. Batch norm's planes are its channels whatever the
// batch (its time scales by SMs / C); instance norm's are N x C, so its pass takes at least one
// plane per SM: the wave term, a plane's time at the full bandwidth times the SMs.
struct PlaneBound {
    double scale = 1;           // on the pass's bandwidth-bound time
    double perSampleShare = 0;  // SMs / planes of one sample: the wave is memory(n) / n x this
    bool active() const { return scale != 1 || perSampleShare > 0; }
    double waveMs(const BatchPoly& memory) const { return memory.c1 * perSampleShare; }
};

PlaneBound planeBound(const AnalyzedOp& op, double sms, bool channelsLast) {
    PlaneBound p;
    // Channels-last batch norms run cuDNN's NHWC kernels (and PyTorch's), which split the batch and
    // the spatial positions over blocks; an instance norm needing channels-first runs on a copy.
    if (op.normPlanes > 0 && !channelsLast) p.scale = std::max(1.0, sms / op.normPlanes);
    if (op.normPlanesPerSample > 0) p.perSampleShare = sms / op.normPlanesPerSample;
    return p;
}

}  // namespace

LayoutTransposes layoutTransposes(const AnalyzedOp& op, const OpBytes& b, TrainingPrecision math, bool channelsLast) {
    LayoutTransposes t;
    if (op.needsChannelsFirst) {
        if (!channelsLast) return t;
        // On channels-last activations PyTorch's instance norm copies its input to channels-first, and
        // the next convolution copies the channels-first output back (pytorch/pytorch#59168: nnU-Net's
        // step 24% slower in channels_last_3d, the copies and cuDNN's conversions in its profile);
        // backward, their gradients go through the same two copies.
        t.forwardBytes = (b.readActivations + b.write) * 2.0;
        t.forwardKernels = 2;
        if (op.backward) {
            t.backwardBytes = (b.write + b.readActivations) * 2.0;
            t.backwardKernels = 2;
        }
        return t;
    }
    if (op.kind != OpKind::Conv || channelsLast || math == TrainingPrecision::Fp32 || op.depthwiseConv()) return t;
    // Tensor-core convolution kernels read channels-last tensors; on channels-first ones cuDNN
    // converts around them (A100 training traces of channels-first models: nchwToNhwc and
    // nhwcToNchw kernels 3 to 1, a quarter of the convolutions' own time; none in FP32 on a V100).
    // Forward converts the input; the output is written channels-first by the kernel itself.
    t.forwardBytes = b.readActivations * 2.0;
    t.forwardKernels = 1;
    if (op.backward) {
        // Backward converts the output gradient, the input again for the weight gradient and, where
        // the input needs a gradient, that gradient back to channels-first.
        const bool inputGradient = op.backwardKernels > 1;
        t.backwardBytes = b.write * 2.0 + b.readActivations * (inputGradient ? 4.0 : 2.0);
        t.backwardKernels = inputGradient ? 3 : 2;
    }
    return t;
}

OperationTimes prepareIterationTimes(const ModelAnalysis& m, const GpuSpec& gpu, TrainingPrecision p,
                                     const StreamModel& model, const KernelScalingTable& table, bool channelsLast) {
    if (auto why = unsupportedReason(gpu, p)) throw ModelError(gpu.id, *why);
    OperationTimes out;
    out.gpuId = gpu.id;
    out.precision = p;
    const ClassScaling& linear = table.forClass("linear");
    // Every GPU at the kernel-scaling table's estimate for a GPU it has not measured: the constants
    // below were fitted with it on published runs of GPUs the table lacks, and one rule keeps GPUs
    // that share a memory system in order (with their own isolated-operator efficiencies the
    // measured A100 PCIe came out faster than the A100 SXM4, the V100 PCIe than the V100 SXM2).
    const GpuOpStats addStats = table.forClass("add").unseen;
    const double bw = *gpu.memoryBandwidthGBs * 1e9;
    const double castMsPerByte = 1e3 / (bw * addStats.memEff * model.memoryEfficiency);
    const double sms = gpu.sms.known() && *gpu.sms > 0 ? *gpu.sms : 1;
    const double overheadMs = model.kernelOverheadUs * 1e-3;
    const GroupCosts collectives = groupCosts(m, gpu);
    for (const AnalyzedOp& op : m.ops) {
        if (!op.hasWork()) continue;
        if (op.kind == OpKind::Collective) {
            pushCollectiveRows(op, m.bytes(op, p), collectives.of(op), model.hostForwardUs * 1e-3,
                               model.hostBackwardUs * 1e-3, out);
            continue;
        }
        const bool calibrated = !op.opClass.empty();
        const bool gemm = gemmLike(op.kind);
        const ClassScaling& c = calibrated ? table.forClass(op.opClass) : gemm ? linear : table.forClass("add");
        const GpuOpStats st = c.unseen;
        const OpBytes& b = m.bytes(op, p);
        const double e = rowError(op, gpu, p);

        TimeRow f;
        f.op = op.op;
        f.calibrated = calibrated;
        f.floorMs = 0;
        f.softness = 4;
        f.relError = e;
        const double castKernels = b.castForward.isZero() ? 0 : 1;
        const double castBackKernels = b.castBackward.isZero() ? 0 : 1;
        // Conversion kernels beside the op's own: autocast's casts, cuDNN's layout transposes.
        const LayoutTransposes layout = layoutTransposes(op, b, mathPrecisionOf(op, gpu, p), channelsLast);
        f.castMs = b.castForward * castMsPerByte + layout.forwardBytes * castMsPerByte +
                   BatchPoly{(castKernels + layout.forwardKernels) * overheadMs, 0, 0};
        f.hostMs = (model.hostForwardUs + castKernels * model.hostCastUs) * 1e-3;
        const double steps = op.kind == OpKind::Recurrent ? op.steps * kRecurrentStepUs * 1e-3 : 0;
        double msPerFlop = 0, msPerByte = 1e3 / (bw * st.memEff * model.memoryEfficiency), waveMs = 0, splitWaveMs = 0,
               padding = 1;
        if (gemm) {
            const TrainingPrecision math = mathPrecisionOf(op, gpu, p);
            const bool tensorCores = math != TrainingPrecision::Fp32;
            double rate = tensorCores ? peak(gpu, ComputePrecision::Fp32) * 1e12 *
                                            precisionRateRatio(gpu, math, op.opClass == "linear") *
                                            model.tensorCoreEfficiency(gpu, math)
                                      : sustainedFp32Tflops(gpu, linear.params) * 1e12 * model.fp32Efficiency;
            if (op.kind == OpKind::Conv) rate *= model.convEfficiency;
            if (tensorCores) rate /= oddWidthGemmSlowdown(op, math);  // cuBLAS's fallback kernels
            if (!tensorCores && op.winogradEligible) {
                const double in = op.gemmReduction / 9, out = op.gemmColumns;
                rate *= model.winogradSpeedup / (1 + model.winogradTransformChannels * (1 / in + 1 / out));
            }
            msPerFlop = 1e3 / rate;
            msPerByte = 1e3 / (bw * linear.params.memoryEff);
            // One wave: every SM computes one output tile over the whole reduction. A kernel takes
            // at least one wave and, on average, half a wave more than its FLOPs at the full rate
            // (the last wave is partly empty). Where its tiles do not fill the GPU, the library
            // splits a reduction longer than splitReduction over several (split-K, stream-K): one
            // wave then covers splitReduction of it (TimeRow::tiledMs).
            // A depthwise convolution is no GEMM: each output element is its own k x k taps, no tiles.
            if (op.gemmReduction > 0 && op.gemmColumns > 0 && !op.depthwiseConv()) {
                const double rows = tensorCores ? model.tensorTileRows : model.simtTileRows;
                const double cols =
                    tileColumns(op.gemmColumns, tensorCores ? model.tensorTileColumns : model.simtTileColumns);
                padding = cols * std::ceil(op.gemmColumns / cols) / op.gemmColumns;
                waveMs = 2 * rows * cols * op.gemmReduction * sms * msPerFlop;
                splitWaveMs = op.kind != OpKind::Recurrent && model.splitReduction > 0
                                  ? waveMs * std::min(1.0, model.splitReduction / op.gemmReduction)
                                  : waveMs;
                // A recurrent layer's time steps run one after another, each at least one wave.
                if (op.kind == OpKind::Recurrent) {
                    waveMs *= std::max(1.0, op.steps * directionsOf(op));
                    splitWaveMs = waveMs;
                }
            }
        }
        AttentionKernels attentionKernels;
        if (op.kind == OpKind::Attention) {
            attentionKernels = attentionKernelsOf(op);
            const TrainingPrecision math = mathPrecisionOf(op, gpu, p);
            double rate = math != TrainingPrecision::Fp32
                              ? peak(gpu, ComputePrecision::Fp32) * 1e12 * precisionRateRatio(gpu, math, false) *
                                    model.tensorCoreEfficiency(gpu, math)
                              : sustainedFp32Tflops(gpu, linear.params) * 1e12;
            rate *= model.attentionEfficiency(op.attentionBackend, gpu);
            msPerFlop = 1e3 / rate;
        }
        if (op.depthwiseConv())
            msPerFlop /= model.depthwiseConvEfficiency;
        else if (op.groupedConv)
            msPerFlop /= model.groupedConvEfficiency, msPerByte /= model.groupedConvEfficiency;
        f.computeMs = op.forwardFlops * (msPerFlop * padding);
        f.memoryMs = (b.read + b.write) * msPerByte;
        // The math backend's products and softmax are kernels one after another, each through memory:
        // their times add. A fused backend keeps the scores on chip and is bound by the larger.
        const bool sequentialAttention = op.kind == OpKind::Attention && op.attentionBackend == AttentionBackend::Math;
        if (sequentialAttention) f.computeMs = f.computeMs + f.memoryMs, f.memoryMs = BatchPoly{};
        // Batch normalisation in training computes the batch's statistics before it normalises: its
        // kernels (PyTorch's and cuDNN's, channels-first) read the input once more forward, and the
        // input and the output gradient once more backward (reduce, then the elementwise pass).
        // Instance normalisation is the same kernels (at::instance_norm runs batch_norm on the input
        // viewed as one sample of N x C channels), and group normalisation's own kernels take the same
        // passes (a moments kernel, then the elementwise one; backward, the gradients' sums first).
        const bool statisticsPass =
            op.type == "BatchNormalization" || op.type == "InstanceNormalization" || op.type == "GroupNormalization";
        if (statisticsPass) f.memoryMs = (b.read + b.write + b.readActivations) * msPerByte;
        const PlaneBound planes = planeBound(op, sms, channelsLast);
        if (planes.active()) waveMs = splitWaveMs = planes.waveMs(f.memoryMs), f.memoryMs = f.memoryMs * planes.scale;
        f.waveMs = waveMs;
        f.splitWaveMs = splitWaveMs;
        f.fixedMs = (op.kind == OpKind::Attention ? attentionKernels.forward : 1) * overheadMs + steps;
        out.forward.push_back(f);
        if (!op.backward) continue;

        TimeRow r = f;
        const double kernels = gemm                           ? backwardKernelsOf(op)
                               : op.kind == OpKind::Attention ? attentionKernels.backward
                               : op.gradientPassThrough       ? op.reductionKernels
                                                              : 1;
        r.relError = errors::combine(e, errors::kBackwardPass);
        r.computeMs = op.backwardFlops * (msPerFlop * padding);
        r.memoryMs = streamBackwardBytes(op, b) * msPerByte;
        if (statisticsPass) r.memoryMs = (streamBackwardBytes(op, b) + b.readActivations + b.write) * msPerByte;
        if (sequentialAttention) r.computeMs = r.computeMs + r.memoryMs, r.memoryMs = BatchPoly{};
        r.waveMs = waveMs * kernels;
        r.splitWaveMs = splitWaveMs * kernels;
        if (planes.active())
            r.waveMs = r.splitWaveMs = planes.waveMs(r.memoryMs), r.memoryMs = r.memoryMs * planes.scale;
        r.fixedMs = (kernels + op.accumulationKernels) * overheadMs + 2 * steps;
        r.castMs = b.castBackward * castMsPerByte + layout.backwardBytes * castMsPerByte +
                   BatchPoly{(castBackKernels + layout.backwardKernels) * overheadMs, 0, 0};
        r.hostMs = (model.hostBackwardUs + castBackKernels * model.hostCastUs) * 1e-3;
        out.backward.push_back(r);
    }
    return out;
}

// Kernels of one optimizer step: multi_tensor_apply (foreach, fused) launches a kernel per chunk of
// tensors per pass (at most 110 per launch, fewer for several operand lists: ~64 on average); a
// for-loop launches one per tensor per pass.
double optimizerLaunches(const ModelAnalysis& m, const OptimizerTraffic& t, OptimizerImplementation implementation) {
    const double tensors = double(std::max<int64_t>(1, m.parameterTensors));
    return t.passes * (implementation == OptimizerImplementation::ForLoop ? tensors : std::ceil(tensors / 64));
}

OptimizerStepTimes optimizerStepTimes(const ModelAnalysis& m, const GpuSpec& gpu, Optimizer o, TrainingPrecision p,
                                      OptimizerImplementation implementation, const StreamModel& model,
                                      const KernelScalingTable& table, bool masterWeights) {
    const OptimizerTraffic t = optimizerTraffic(m, o, p, implementation, masterWeights);
    const GpuOpStats st = table.forClass("add").unseen;  // as prepareIterationTimes
    const double bw = *gpu.memoryBandwidthGBs * 1e9;
    const double launches = optimizerLaunches(m, t, implementation);
    OptimizerStepTimes s;
    s.gpuMs = double(m.trainableParameters) * t.bytesPerParameter / (bw * st.memEff * model.memoryEfficiency) * 1e3 +
              launches * model.kernelOverheadUs * 1e-3;
    // A for-loop's every kernel is one eager operator from Python (assumed to cost the host what a
    // cast's dispatch does); foreach and fused pay a list operator per pass plus each launch.
    s.hostMs = implementation == OptimizerImplementation::ForLoop
                   ? launches * model.hostCastUs * 1e-3
                   : t.passes * model.hostOptimizerPassUs * 1e-3 + launches * model.hostCastUs * 1e-3;
    return s;
}

BatchPoly streamBackwardBytes(const AnalyzedOp& op, const OpBytes& b) {
    if (op.gradientPassThrough) return b.gradientReduction + b.gradientAccumulation;
    return backwardBytes(op, b) + b.gradientAccumulation;
}

BatchPoly backwardBytes(const AnalyzedOp& op, const OpBytes& b) {
    if (gemmLike(op.kind)) return (b.read + b.write) * backwardKernelsOf(op);
    return b.write + b.readActivations + b.saved;
}

double optimizerStepMs(const ModelAnalysis& m, const GpuSpec& gpu, Optimizer o, TrainingPrecision p,
                       const KernelScalingTable& table, OptimizerImplementation implementation,
                       bool masterWeights) {
    const OptimizerTraffic t = optimizerTraffic(m, o, p, implementation, masterWeights);
    const double bytes = t.bytesPerParameter, passes = t.passes;
    const ClassScaling& add = table.forClass("add");
    const GpuOpStats st = table.statsFor(add, gpu);
    const double bw = *gpu.memoryBandwidthGBs * 1e9;
    const double launches = optimizerLaunches(m, t, implementation);
    return double(m.trainableParameters) * bytes / (bw * st.memEff) * 1e3 + passes * st.floorMs +
           launches * add.params.tauUs * 1e-3;
}

}  // namespace ts::predictors
