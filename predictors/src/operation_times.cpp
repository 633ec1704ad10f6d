#include "trainscope/predictors/operation_times.h"

#include <algorithm>
#include <cmath>

#include "trainscope/core/errors.h"
#include "trainscope/predictors/kernel_scaling.h"
#include "trainscope/predictors/prediction_errors.h"

namespace ts::predictors {
namespace {

// Launch of one recurrent time step (cuDNN runs a kernel or more per step): an estimate.
constexpr double kRecurrentStepUs = 5;

// A recurrent layer's backward runs two kernels per step (data and weight gradient) like a GEMM's.
double backwardKernelsOf(const AnalyzedOp& op) {
    return op.kind == OpKind::Recurrent ? 2 : op.backwardKernels;
}

bool gemmLike(OpKind k) {
    return k == OpKind::Gemm || k == OpKind::Conv || k == OpKind::Recurrent;
}

bool autocast(TrainingPrecision p) {
    return p != TrainingPrecision::Fp32 && p != TrainingPrecision::Tf32;
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

}  // namespace

double TimeRow::kernelMs(double n) const {
    return std::max(computeMs.at(n), memoryMs.at(n)) + fixedMs;
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

std::optional<std::string> unsupportedReason(const GpuSpec& gpu, TrainingPrecision p) {
    if (!gpu.memoryBandwidthGBs.known() || *gpu.memoryBandwidthGBs <= 0)
        return gpu.name + ": its memory bandwidth is unknown, so no time can be predicted";
    if (!gpu.fp32Tflops.known() || *gpu.fp32Tflops <= 0)
        return gpu.name + ": its FP32 peak is unknown, so no time can be predicted";
    if (p == TrainingPrecision::Fp32) return std::nullopt;
    if (!gpu.limits.tensorCores) {
        std::string why = gpu.name + " has no tensor cores";
        if (p == TrainingPrecision::AmpFp16 && peak(gpu, ComputePrecision::Fp16) > 0)
            why += " (its FP16 runs packed on CUDA cores, which this predictor does not model)";
        return why;
    }
    switch (p) {
        case TrainingPrecision::Tf32:
            return missing(gpu, ComputePrecision::Tf32, "TF32 tensor math");
        case TrainingPrecision::AmpFp16:
            return missing(gpu, ComputePrecision::Fp16, "FP16 tensor math");
        case TrainingPrecision::AmpBf16:
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
            return 1;
        case TrainingPrecision::Tf32:
            return peak(gpu, ComputePrecision::Tf32) / fp32;
        case TrainingPrecision::AmpFp16:
            return peak(gpu, ComputePrecision::Fp16) / fp32;
        case TrainingPrecision::AmpBf16:
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
    for (const AnalyzedOp& op : m.ops) {
        if (!op.hasWork()) continue;
        const bool calibrated = !op.opClass.empty();
        const bool gemm = gemmLike(op.kind);
        const ClassScaling& c = calibrated ? table.forClass(op.opClass) : gemm ? linear : add;
        const ScalingParams& sp = c.params;
        const GpuOpStats st = table.statsFor(c, gpu);
        const double arch = architectureFactor(gpu, sp);
        const OpBytes& b = m.bytes(op, p);
        double e = calibrated ? errors::modelOnlyClassError(op.opClass) : errors::kUncalibratedRoofline;
        if (gemm && p != TrainingPrecision::Fp32)
            e = errors::combine(e, errors::kTensorCorePrecision);
        else if (!gemm && autocast(p))
            e = errors::combine(e, errors::kNarrowerElements);

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
        if (gemm) {
            const double rate =
                sustainedFp32Tflops(gpu, sp) * 1e12 * precisionRateRatio(gpu, p, op.opClass == "linear");
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

BatchPoly backwardBytes(const AnalyzedOp& op, const OpBytes& b) {
    if (gemmLike(op.kind)) return (b.read + b.write) * backwardKernelsOf(op);
    return b.write + b.readActivations + b.saved;
}

double optimizerStepMs(const ModelAnalysis& m, const GpuSpec& gpu, Optimizer o, TrainingPrecision p,
                       const KernelScalingTable& table) {
    // Bytes per parameter and passes of torch.optim's default foreach implementations (fp32 state):
    // sgd: p -= lr g (12 B); momentum: buf *= m; buf += g; p -= lr buf (32 B, 3 passes);
    // adam: m.lerp_(g); v *= b2; v.addcmul_(g, g); d = v.sqrt(); d /= c2; d += eps; p.addcdiv_(m, d)
    // (72 B, 7 passes); adamw adds p *= 1 - lr wd (80 B, 8). Autocast adds the grad scaler's
    // unscale and inf check (8 B, 1 pass).
    double bytes = 12, passes = 1;
    if (o == Optimizer::SgdMomentum) bytes = 32, passes = 3;
    if (o == Optimizer::Adam) bytes = 72, passes = 7;
    if (o == Optimizer::AdamW) bytes = 80, passes = 8;
    if (autocast(p)) bytes += 8, passes += 1;
    const ClassScaling& add = table.forClass("add");
    const GpuOpStats st = table.statsFor(add, gpu);
    const double bw = *gpu.memoryBandwidthGBs * 1e9;
    // multi_tensor_apply launches a kernel per chunk of tensors (at most 110 per launch, fewer for
    // several operand lists): ~64 on average.
    const double launches = passes * std::ceil(double(std::max<int64_t>(1, m.parameterTensors)) / 64);
    return double(m.parameters) * bytes / (bw * st.memEff) * 1e3 + passes * st.floorMs +
           launches * add.params.tauUs * 1e-3;
}

}  // namespace ts::predictors
