#include "trainscope/predictors/trace/trace_kernels.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "trace_shapes.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/occupancy.h"
#include "trainscope/predictors/iteration/data_parallel.h"
#include "trainscope/predictors/trace/trace_change.h"

namespace ts::predictors {
namespace {

std::string lower(const std::string& s, size_t n = 400) {
    std::string out(s.substr(0, n));
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

bool computeClass(KernelClass k) {
    return k == KernelClass::Gemm || k == KernelClass::Conv || k == KernelClass::Attention;
}

// Assumed: a kernel's shortest duration in a trace is its launch and ramp, not its work. Taken from
// the trace itself (the 2nd percentile of its kernels), within these bounds.
constexpr double kFloorQuantile = 0.02;
constexpr double kMinFloorUs = 1.0, kMaxFloorUs = 5.0;

TrainingPrecision trainingPrecisionOf(ComputePrecision p) {
    switch (p) {
        case ComputePrecision::Tf32:
            return TrainingPrecision::Tf32;
        case ComputePrecision::Fp16:
            return TrainingPrecision::AmpFp16;
        case ComputePrecision::Bf16:
            return TrainingPrecision::AmpBf16;
        case ComputePrecision::Fp8:
            return TrainingPrecision::Fp8;
        case ComputePrecision::Fp32:
            break;
    }
    return TrainingPrecision::Fp32;
}

bool has(const GpuSpec& g, ComputePrecision p) {
    const Figure f = g.peakTflops(p);
    return f.known() && *f > 0;
}

// The arithmetic `g` runs `p` in: what it lacks, the library falls back from: FP8 to BF16, BF16 to
// FP16 (and to FP32 on GPUs without 16-bit tensor cores), TF32 to FP32. Also for the traced GPU,
// whose kernels' names may claim an arithmetic its database entry lacks.
ComputePrecision availableOn(const GpuSpec& g, ComputePrecision p) {
    if (p == ComputePrecision::Fp8 && !has(g, p)) p = ComputePrecision::Bf16;
    if (p == ComputePrecision::Bf16 && !has(g, p)) p = ComputePrecision::Fp16;
    if (p == ComputePrecision::Fp16 && !has(g, p)) p = ComputePrecision::Fp32;
    if (p == ComputePrecision::Tf32 && !has(g, p)) p = ComputePrecision::Fp32;
    return p;
}

}  // namespace

double collectiveBusBytes(const TraceCollective& c, int groupSize) {
    const std::string dtype = lower(c.dtype, 32);
    const double element = dtype.find("half") != std::string::npos || dtype.find("bfloat16") != std::string::npos ? 2
                           : dtype.find("double") != std::string::npos || dtype.find("long") != std::string::npos ? 8
                           : dtype.find("byte") != std::string::npos || dtype.find("char") != std::string::npos ||
                                   dtype.find("bool") != std::string::npos
                               ? 1
                               : 4;
    const double n = std::max(2, groupSize);
    const std::string name = lower(c.name, 64);
    const double elements = double(std::max(c.inElements, c.outElements));
    if (!(elements > 0)) return 0;
    // NCCL's bus bandwidth: what each GPU's link carries.
    if (name.find("allreduce") != std::string::npos || name.find("all_reduce") != std::string::npos)
        return 2 * (n - 1) / n * elements * element;
    if (name.find("allgather") != std::string::npos || name.find("all_gather") != std::string::npos ||
        name.find("reducescatter") != std::string::npos || name.find("reduce_scatter") != std::string::npos)
        return (n - 1) / n * elements * element;
    return elements * element;
}

std::optional<ComputePrecision> kernelMathPrecision(const std::string& kernelName, KernelClass kind) {
    if (!computeClass(kind)) return std::nullopt;
    const std::string n = lower(kernelName);
    auto any = [&](std::initializer_list<const char*> words) {
        return std::any_of(words.begin(), words.end(), [&](const char* w) { return n.find(w) != std::string::npos; });
    };
    if (any({"e4m3", "e5m2", "fp8"})) return ComputePrecision::Fp8;
    if (any({"bf16", "bfloat16"})) return ComputePrecision::Bf16;
    if (any({"f16", "fp16", "half", "h884", "h1688", "h16816", "s884", "hmma"})) return ComputePrecision::Fp16;
    if (any({"tf32", "s1688", "s16816", "tensorop_s", "xmma_gemm_f32f32"})) return ComputePrecision::Tf32;
    return ComputePrecision::Fp32;
}

std::optional<OperatorWork> operatorWork(const std::string& op, const std::string& inputDims,
                                         const std::string& inputTypes) {
    const std::optional<OperatorShapes> shapes = parseOperatorShapes(inputDims, inputTypes);
    if (!shapes) return std::nullopt;
    return operatorWork(op, *shapes);
}

const char* moveBasisName(MoveBasis b) {
    switch (b) {
        case MoveBasis::Shapes:
            return "shapes";
        case MoveBasis::Launch:
            return "launch";
        case MoveBasis::ClassOnly:
            return "class";
        case MoveBasis::Link:
            return "link";
        case MoveBasis::Kept:
            break;
    }
    return "kept";
}

TraceWork analyseTraceWork(const KinetoTrace& trace) {
    TraceWork w;
    std::vector<double> durations;
    for (const TraceKernel& k : trace.kernels)
        if (k.device == trace.gpuDevice && k.kind != KernelClass::Memcpy && k.kind != KernelClass::Memset)
            durations.push_back(k.durationUs);
    w.floorUs = kMinFloorUs;
    if (!durations.empty()) {
        const size_t i = size_t(kFloorQuantile * double(durations.size() - 1));
        std::nth_element(durations.begin(), durations.begin() + long(i), durations.end());
        w.floorUs = std::clamp(durations[i], kMinFloorUs, kMaxFloorUs);
    }
    w.operators.resize(trace.operators.size());
    w.operatorKernelUs.assign(trace.operators.size(), 0);
    for (size_t i = 0; i < trace.operators.size(); ++i) {
        const TraceOperator& op = trace.operators[i];
        if (op.inputShapes >= 0)
            w.operators[i] = operatorWork(trace.str(op.name), trace.str(op.inputShapes), trace.str(op.inputTypes));
    }
    for (const TraceKernel& k : trace.kernels)
        if (k.op >= 0 && size_t(k.op) < trace.operators.size() && k.device == trace.gpuDevice &&
            k.kind != KernelClass::Communication)
            w.operatorKernelUs[size_t(k.op)] += k.durationUs;
    return w;
}

TraceWork analyseTraceWork(const KinetoTrace& trace, const TraceChange& change) {
    TraceWork w = analyseTraceWork(trace);
    auto changed = std::make_shared<TraceChangeWork>(analyseTraceChange(trace, change));
    if (changed->changesWork()) w.change = std::move(changed);
    return w;
}

TraceKernelMover::TraceKernelMover(const KinetoTrace& trace, const GpuSpec& origin, const GpuSpec& target,
                                   Fp32Math math, std::shared_ptr<const TraceWork> work, const StreamModel& model,
                                   const KernelScalingTable& table)
    : trace_(trace), math_(math), model_(model), work_(std::move(work)) {
    const ClassScaling& add = table.forClass("add");
    const ScalingParams& linear = table.forClass("linear").params;
    for (auto [side, gpu] : {std::pair{&y_, &origin}, std::pair{&x_, &target}}) {
        if (!gpu->sms.known() || *gpu->sms < 1) throw ModelError(gpu->id, "its SM count is unknown");
        if (!gpu->memoryBandwidthGBs.known() || *gpu->memoryBandwidthGBs <= 0)
            throw ModelError(gpu->id, "its memory bandwidth is unknown");
        side->gpu = gpu;
        side->sms = *gpu->sms;
        side->memBytesPerUs =
            *gpu->memoryBandwidthGBs * 1e3 * table.statsFor(add, *gpu).memEff * model.memoryEfficiency;
        std::string why;
        DataParallel pcie;
        pcie.gpus = 2;
        pcie.interconnect = InterconnectKind::Pcie;
        if (auto l = linkFor(*gpu, pcie, why)) side->hostLinkGBs = l->busBandwidthGBs;
    }
    sustainedFp32Y_ = sustainedFp32Tflops(origin, linear) * 1e6;
    sustainedFp32X_ = sustainedFp32Tflops(target, linear) * 1e6;
    if (!(sustainedFp32Y_ > 0 && sustainedFp32X_ > 0))
        throw ModelError(sustainedFp32Y_ > 0 ? target.id : origin.id, "its FP32 peak is unknown");

    if (!work_) work_ = std::make_shared<const TraceWork>(analyseTraceWork(trace));
    floorY_ = work_->floorUs;
    const double clockY = origin.boostClockMHz.known() ? *origin.boostClockMHz : 0;
    const double clockX = target.boostClockMHz.known() ? *target.boostClockMHz : 0;
    floorX_ = clockY > 0 && clockX > 0 ? floorY_ * clockY / clockX : floorY_;
    for (KernelClass c : {KernelClass::Gemm, KernelClass::Conv, KernelClass::Attention, KernelClass::Normalization,
                          KernelClass::Reduction, KernelClass::Elementwise})
        classParams_[size_t(c)] = &table
                                       .forClass(c == KernelClass::Gemm            ? "linear"
                                                 : c == KernelClass::Conv          ? "conv"
                                                 : c == KernelClass::Attention     ? "bmm"
                                                 : c == KernelClass::Normalization ? "ln"
                                                 : c == KernelClass::Reduction     ? "softmax"
                                                                                   : "add")
                                       .params;
}

double TraceKernelMover::ringBytesPerUs(const Side& s, int gpus) const {
    auto& cache = &s == &y_ ? ringY_ : ringX_;
    if (auto it = cache.find(gpus); it != cache.end()) return it->second;
    DataParallel ring;
    ring.gpus = gpus;
    std::string why;
    const std::optional<LinkModel> l = linkFor(*s.gpu, ring, why);
    return cache[gpus] = l ? l->busBandwidthGBs * 1e3 : 0;
}

double TraceKernelMover::computeRate(const Side& s, ComputePrecision p, bool conv) const {
    p = availableOn(*s.gpu, p);
    double rate = 0;
    if (p == ComputePrecision::Fp32)
        rate = &s == &y_ ? sustainedFp32Y_ : sustainedFp32X_;
    else
        rate = *s.gpu->peakTflops(p) * 1e6 * model_.tensorCoreEfficiency(*s.gpu, trainingPrecisionOf(p));
    return conv ? rate * model_.convEfficiency : rate;
}

ComputePrecision TraceKernelMover::targetMathFor(ComputePrecision origin, KernelClass kind) const {
    const GpuSpec& x = *x_.gpu;
    ComputePrecision p = origin;
    if (origin == ComputePrecision::Fp32 || origin == ComputePrecision::Tf32) {
        switch (math_) {
            case Fp32Math::AsRecorded:
                // A GPU without TF32 cannot show whether the job allows it; for convolutions
                // PyTorch does by default (cudnn.allow_tf32), for matrix multiplies it does not.
                if (origin == ComputePrecision::Fp32 && kind == KernelClass::Conv &&
                    !has(*y_.gpu, ComputePrecision::Tf32))
                    p = ComputePrecision::Tf32;
                break;
            case Fp32Math::PyTorchDefault:
                p = kind == KernelClass::Conv ? ComputePrecision::Tf32 : ComputePrecision::Fp32;
                break;
            case Fp32Math::Tf32:
                p = ComputePrecision::Tf32;
                break;
            case Fp32Math::Strict:
                p = ComputePrecision::Fp32;
                break;
        }
    }
    p = availableOn(x, p);
    if (p != origin && origin != ComputePrecision::Fp32 && origin != ComputePrecision::Tf32 && !notedUnsupported_) {
        notedUnsupported_ = true;
        notes_.push_back(std::string(x.name) + " lacks the " + precisionName(origin) +
                         " tensor math some kernels ran in: they are predicted in " + precisionName(p) +
                         " (PyTorch may refuse or emulate it)");
    }
    return p;
}

double TraceKernelMover::blocksPerWave(const Side& s, const TraceKernel& k, bool& fits) const {
    KernelLaunch launch;
    launch.threadsPerBlock = std::max(1, k.block[0]) * std::max(1, k.block[1]) * std::max(1, k.block[2]);
    launch.registersPerThread = std::max(1, k.registersPerThread);
    launch.dynamicSharedBytes = std::max(0, k.sharedMemoryBytes);
    fits = true;
    try {
        const Occupancy o = computeOccupancy(*s.gpu, launch);
        if (o.blocksPerSm > 0) return double(o.blocksPerSm) * s.sms;
    } catch (const ModelError&) {
    }
    fits = false;
    return 0;
}

KernelMove TraceKernelMover::move(const TraceKernel& k, std::optional<ComputePrecision> targetMath) const {
    if (k.device != trace_.gpuDevice || trace_.rocm) {
        KernelMove m;
        m.durationUs = k.durationUs;
        return m;
    }
    const TraceChangeWork* change = work_->change.get();
    const OperatorChange* op =
        change && k.op >= 0 && size_t(k.op) < change->operators.size() ? &change->operators[size_t(k.op)] : nullptr;
    if (op && op->removed && k.kind != KernelClass::Communication) {
        KernelMove m;
        m.removed = m.changed = true;
        m.basis = MoveBasis::Shapes;
        return m;
    }
    KernelMove m = moveWork(k, op, targetMath);
    // Autocast's casts (or the grad scaler's unscale) run just before it on its stream: each a
    // bandwidth-bound kernel with the floor of the trace's kernels.
    if (change && !change->addedBefore.empty() && &k >= trace_.kernels.data() &&
        &k < trace_.kernels.data() + trace_.kernels.size()) {
        auto it = change->addedBefore.find(size_t(&k - trace_.kernels.data()));
        if (it != change->addedBefore.end()) {
            m.addedUs = it->second.kernels * floorX_ + it->second.bytes / x_.memBytesPerUs;
            m.durationUs += m.addedUs;
        }
    }
    return m;
}

KernelMove TraceKernelMover::moveWork(const TraceKernel& k, const OperatorChange* op,
                                      std::optional<ComputePrecision> targetMath) const {
    const TraceChangeWork* change = work_->change.get();
    KernelMove m;
    m.durationUs = k.durationUs;
    const std::string& name = trace_.str(k.name);

    if (k.kind == KernelClass::Communication) {
        // Where the kernel records its message, the bus bandwidth the job reached: a collective
        // that stayed below 80% of its GPU's ring (another node's network, small messages, PCIe
        // contention) keeps that rate within the target's ring; one that filled it moves with the
        // ring. Without a message, the ring ratio.
        const TraceCollective* c = k.collective >= 0 && size_t(k.collective) < trace_.collectives.size()
                                       ? &trace_.collectives[size_t(k.collective)]
                                       : nullptr;
        const int group = c && c->groupSize >= 2 ? std::min(c->groupSize, 1 << 16) : 8;
        const double ringY = ringBytesPerUs(y_, group), ringX = ringBytesPerUs(x_, group);
        const double busBytes = c ? collectiveBusBytes(*c, group) : 0;
        // At another batch, all-to-all and send/receive (activations: model-parallel embeddings,
        // pipeline stages) move more bytes; all-reduces (gradients) and the rest the same.
        const std::string lowered = lower(name + " " + (c ? c->name : std::string()));
        const bool activations = lowered.find("alltoall") != std::string::npos ||
                                 lowered.find("all_to_all") != std::string::npos ||
                                 lowered.find("sendrecv") != std::string::npos;
        const double scale = change && activations ? change->batchRatio : 1;
        m.changed = scale != 1;
        m.durationUs = k.durationUs * scale;
        if (ringY > 0 && ringX > 0) {
            m.basis = MoveBasis::Link;
            const double rateY = busBytes > 0 && k.durationUs > 0 ? busBytes / k.durationUs : 0;
            if (rateY > 0 && rateY < 0.8 * ringY)
                m.durationUs = busBytes * scale / std::min(rateY, ringX);
            else
                m.durationUs = k.durationUs * scale * ringY / ringX;
        }
        if (!notedLink_) {
            notedLink_ = true;
            notes_.push_back(
                "collectives keep the bus bandwidth the job reached, within the target's ring (NVLink where its "
                "topology joins the group, else PCIe); those that filled their GPU's ring, or record no message "
                "size, scale with the rings: the trace does not say how the job's GPUs were connected");
        }
        return m;
    }
    if (k.kind == KernelClass::Memcpy &&
        (name.find("HtoD") != std::string::npos || name.find("DtoH") != std::string::npos)) {
        // A copy runs at the slower of the host's rate and the PCIe link's. The origin's achieved
        // rate is the host's where it stayed below 80% of its link (the same kind of host is
        // assumed on the target); a copy that filled its link moves with the link.
        // At another batch or precision it copies its operator's new bytes at the same rate.
        const double linkY = y_.hostLinkGBs * 1e3, linkX = x_.hostLinkGBs * 1e3;  // bytes per us
        const double bytesRatio = op ? op->bytesRatio : 1;
        m.changed = bytesRatio != 1;
        if (linkY > 0 && linkX > 0 && k.bytes > 0 && k.durationUs > 0) {
            const double rateY = k.bytes / k.durationUs;
            m.durationUs =
                (rateY >= 0.8 * linkY ? k.durationUs * linkY / linkX : k.bytes / std::min(rateY, linkX)) * bytesRatio;
            m.basis = MoveBasis::Link;
        } else {
            m.durationUs *= bytesRatio;
        }
        if (!notedHost_) {
            notedHost_ = true;
            notes_.push_back(
                "copies between host and GPU keep the rate the host reached in the trace, within the "
                "target's PCIe link");
        }
        return m;
    }

    // Floors: the shortest activities are launch and ramp, not work.
    const double floorY = std::min(floorY_, k.durationUs);
    const double floorX = floorY * floorX_ / floorY_;
    const double variable = k.durationUs - floorY;

    const int64_t blocks = int64_t(std::max(0, k.grid[0])) * std::max(0, k.grid[1]) * std::max(0, k.grid[2]);
    // At another batch the grid follows the operator's output; a weight-gradient kernel's the weight.
    const bool weightGradient = name.find("wgrad") != std::string::npos;
    const double gridRatio = op && !weightGradient ? op->gridRatio : 1;
    const double gridX = std::clamp(double(blocks) * gridRatio, 1.0, 0x1p52);  // finite, in int64_t's range
    const int64_t blocksX = blocks > 0 ? int64_t(std::llround(gridX)) : 0;
    bool fitsY = false, fitsX = false;
    const double waveY = blocks > 0 ? blocksPerWave(y_, k, fitsY) : 0;
    const double waveX = blocks > 0 ? blocksPerWave(x_, k, fitsX) : 0;
    const bool launch = blocks > 0 && fitsY && fitsX;
    if (blocks > 0 && fitsY && !fitsX && !notedFit_) {
        notedFit_ = true;
        notes_.push_back("some kernels' launches do not fit " + x_.gpu->name +
                         "'s SMs (shared memory or registers): their waves are scaled by the SM count");
    }

    // Model time per unit of work on one side: whole waves of the grid for compute, the SMs the
    // grid can fill for memory.
    auto padding = [&](double wave, int64_t grid) {
        if (!launch) return 1.0;
        return std::ceil(double(grid) / wave) * wave / double(grid);
    };
    auto memoryFill = [&](const Side& s, int64_t grid) { return grid > 0 ? std::min(1.0, double(grid) / s.sms) : 1.0; };

    // On its own GPU in its own arithmetic a kernel takes what it took.
    if (computeClass(k.kind)) {
        m.originMath = kernelMathPrecision(name, k.kind).value_or(ComputePrecision::Fp32);
        m.targetMath = targetMath       ? *targetMath
                       : op && op->math ? targetMathFor(*op->math, k.kind)
                                        : targetMathFor(*m.originMath, k.kind);
    }
    m.changed = op && (op->computeRatio != 1 || op->bytesRatio != 1 || blocksX != blocks || op->math);
    const bool sameGpu = y_.gpu->id == x_.gpu->id;
    if (sameGpu && m.originMath == m.targetMath && !m.changed) return m;

    // This kernel's share of its operator's work (an operator may launch several kernels).
    // At another batch or precision, the same share of its new work (workX).
    std::optional<OperatorWork> work, workX;
    if (k.op >= 0 && size_t(k.op) < work_->operators.size() && work_->operators[size_t(k.op)] &&
        work_->operatorKernelUs[size_t(k.op)] > 0) {
        const OperatorWork& w = *work_->operators[size_t(k.op)];
        const double share = k.durationUs / work_->operatorKernelUs[size_t(k.op)];
        work = OperatorWork{w.flops * share, w.bytes * share};
        workX = work;
        if (op && op->work) workX = OperatorWork{op->work->flops * share, op->work->bytes * share};
    }
    const double computeRatio = op ? op->computeRatio : 1, bytesRatio = op ? op->bytesRatio : 1;
    const ScalingParams* params =
        classParams_[size_t(k.kind)] ? classParams_[size_t(k.kind)] : classParams_[size_t(KernelClass::Elementwise)];

    double modelY = 0, modelX = 0;  // us of work; relative when the work is unknown
    bool absolute = false;
    if (computeClass(k.kind)) {
        const ComputePrecision py = *m.originMath, px = *m.targetMath;
        const bool conv = k.kind == KernelClass::Conv;
        const bool flops = work && work->flops > 0 && workX && workX->flops > 0;
        // Compute in whole waves (per FLOP, or per unit of work: then the new work's ratio); memory
        // from the operator's bytes.
        auto model = [&](const Side& s, double wave, double rate, int64_t grid, const std::optional<OperatorWork>& w,
                         double ratio) {
            const double compute = padding(launch ? wave : 0, grid) / rate;
            if (!flops) return compute * ratio;
            return std::max(compute * w->flops, w->bytes / (s.memBytesPerUs * memoryFill(s, grid)));
        };
        modelY = model(y_, waveY, computeRate(y_, py, conv), blocks, work, 1);
        modelX = model(x_, waveX, computeRate(x_, px, conv), blocksX, workX, computeRatio);
        absolute = flops;
        m.basis = flops ? MoveBasis::Shapes : launch ? MoveBasis::Launch : MoveBasis::ClassOnly;
    } else {
        // Bandwidth-bound work (elementwise, reductions, normalisation, embeddings, optimizer
        // steps, device copies and sets): bytes over the bandwidth of the SMs its grid fills.
        absolute = work && work->bytes > 0 && workX && workX->bytes > 0;
        const double bytes = absolute ? work->bytes : 1.0, bytesX = absolute ? workX->bytes : bytesRatio;
        modelY = bytes / (y_.memBytesPerUs * memoryFill(y_, blocks));
        modelX = bytesX / (x_.memBytesPerUs * memoryFill(x_, blocksX));
        m.basis = absolute ? MoveBasis::Shapes : blocks > 0 ? MoveBasis::Launch : MoveBasis::ClassOnly;
    }
    if (!absolute || !computeClass(k.kind) || sameGpu) {
        // Only the ratio is known, or the kernel is ATen's or a library's own bandwidth-bound code,
        // compiled for both GPUs, or it stays on its GPU at another batch or precision (the same
        // library): it keeps all of its own efficiency.
        m.durationUs = floorX + variable * modelX / modelY;
        return m;
    }
    // The kernel-scaling table's cross path: the share of the origin's efficiency against the
    // model that transfers (alpha, clipped to maxRatio), fitted per class on measured GPU pairs.
    const double r = variable > 0 && modelY > 0 ? variable / modelY : 1.0;
    m.durationUs = floorX + modelX * std::pow(std::clamp(r, 1 / params->maxRatio, params->maxRatio), params->alpha);
    return m;
}

std::vector<std::string> TraceKernelMover::notes() const {
    return notes_;
}

}  // namespace ts::predictors
