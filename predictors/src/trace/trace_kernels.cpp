#include "trainscope/predictors/trace/trace_kernels.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "trainscope/core/errors.h"
#include "trainscope/core/occupancy.h"
#include "trainscope/predictors/iteration/data_parallel.h"

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

double elementBytes(const std::string& type) {
    const std::string t = lower(type, 64);
    if (t.find("half") != std::string::npos || t.find("bfloat16") != std::string::npos) return 2;
    if (t.find("double") != std::string::npos || t.find("long") != std::string::npos) return 8;
    if (t.find("float8") != std::string::npos || t.find("char") != std::string::npos || t == "bool") return 1;
    return 4;
}

double product(const std::vector<double>& d, size_t from = 0, size_t to = SIZE_MAX) {
    double p = 1;
    for (size_t i = from; i < std::min(to, d.size()); ++i) p *= d[i];
    return p;
}

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
    const bool plain = op == "aten::mm" || op == "aten::bmm" || op == "aten::matmul";
    const bool biased = op == "aten::addmm" || op == "aten::baddbmm" || op == "aten::addbmm";
    const bool attention = op.find("scaled_dot_product") != std::string::npos ||
                           op.find("flash_attention") != std::string::npos ||
                           op.find("efficient_attention") != std::string::npos;
    if (inputDims.empty()) return std::nullopt;
    const nlohmann::json dims = nlohmann::json::parse(inputDims, nullptr, false);
    if (!dims.is_array()) return std::nullopt;
    std::vector<std::vector<double>> in;
    for (const auto& d : dims) {
        std::vector<double> shape;
        if (d.is_array())
            for (const auto& x : d)
                if (x.is_number() && x.get<double>() >= 0) shape.push_back(x.get<double>());
        in.push_back(std::move(shape));
    }
    double es = 4;
    std::vector<double> sizes;  // per input
    const nlohmann::json types = nlohmann::json::parse(inputTypes, nullptr, false);
    if (types.is_array())
        for (const auto& t : types) sizes.push_back(t.is_string() ? elementBytes(t.get<std::string>()) : 0);
    if (!sizes.empty() && sizes[0] > 0) es = sizes[0];
    auto shapeOf = [&](size_t i) -> const std::vector<double>& {
        static const std::vector<double> none;
        return i < in.size() ? in[i] : none;
    };
    // A batched GEMM: a [.., M, K] x b [.., K, N], its batch the product of a's leading sizes.
    auto gemm = [&](const std::vector<double>& a, const std::vector<double>& b, bool bTransposed,
                    double extraBytes) -> std::optional<OperatorWork> {
        if (a.size() < 2 || b.size() < 2) return std::nullopt;
        const double m = a[a.size() - 2], k = a.back();
        const double n = bTransposed ? b[b.size() - 2] : b.back();
        const double batch = product(a, 0, a.size() - 2);
        if (!(m > 0 && k > 0 && n > 0 && batch > 0)) return std::nullopt;
        OperatorWork w;
        w.flops = 2 * batch * m * k * n;
        w.bytes = es * (batch * m * k + product(b) + batch * m * n) + es * extraBytes;
        return w;
    };
    if (plain) return gemm(shapeOf(0), shapeOf(1), false, 0);
    if (biased)
        return gemm(shapeOf(1), shapeOf(2), false, product(shapeOf(0)));
    if (op == "aten::linear") {  // weight [N, K]; input [.., K] seen as [batch x M, K]
        std::vector<double> a = shapeOf(0);
        if (a.size() == 1) a.insert(a.begin(), 1);
        if (a.size() > 2) a = {product(a, 0, a.size() - 1), a.back()};
        return gemm(a, shapeOf(1), true, product(shapeOf(2)));
    }
    // Scaled-dot-product attention: q [B, H, L, D], k [B, H, S, D]; forward two GEMMs (4 BHLSD),
    // backward with FlashAttention's recomputation five (10 BHLSD, the gradient of the output first).
    const bool backward = op.find("backward") != std::string::npos;
    if (attention) {
        const size_t q = backward ? 1 : 0;
        const std::vector<double>&qs = shapeOf(q), &ks = shapeOf(q + 1);
        if (qs.size() != 4 || ks.size() != 4) return std::nullopt;
        const double bh = qs[0] * qs[1], l = qs[2], d = qs[3], s = ks[2];
        if (!(bh > 0 && l > 0 && s > 0 && d > 0)) return std::nullopt;
        OperatorWork w;
        w.flops = (backward ? 10 : 4) * bh * l * s * d;
        w.bytes = es * bh * d * (backward ? 4 * l + 4 * s : 2 * l + 2 * s);
        return w;
    }
    if (plain || biased || op == "aten::linear") return std::nullopt;
    // Any other operator is taken as bandwidth-bound: it reads its tensor inputs and writes an
    // output as large as the largest (a fill writes, a copy reads one and writes the other).
    OperatorWork w;
    double largest = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i].empty()) continue;  // scalars and absent arguments
        const double bytes = product(in[i]) * (i < sizes.size() && sizes[i] > 0 ? sizes[i] : es);
        w.bytes += bytes;
        largest = std::max(largest, bytes);
    }
    const bool writesOnly = op == "aten::fill_" || op == "aten::zero_" || op == "aten::zeros" ||
                            op == "aten::empty" || op == "aten::ones";
    if (writesOnly)
        w.bytes = largest;
    else if (op != "aten::copy_")  // a copy's output is its destination, already counted
        w.bytes += largest;
    if (!(w.bytes > 0)) return std::nullopt;
    return w;
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
        classParams_[size_t(c)] = &table.forClass(c == KernelClass::Gemm        ? "linear"
                                                  : c == KernelClass::Conv      ? "conv"
                                                  : c == KernelClass::Attention ? "bmm"
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
                if (origin == ComputePrecision::Fp32 && kind == KernelClass::Conv && !has(*y_.gpu, ComputePrecision::Tf32))
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
    // What the target lacks, the library falls back from: FP8 to BF16, BF16 to FP16 (and to FP32
    // on GPUs without 16-bit tensor cores), TF32 to FP32.
    if (p == ComputePrecision::Fp8 && !has(x, p)) p = ComputePrecision::Bf16;
    if (p == ComputePrecision::Bf16 && !has(x, p)) p = ComputePrecision::Fp16;
    if (p == ComputePrecision::Fp16 && !has(x, p)) p = ComputePrecision::Fp32;
    if (p == ComputePrecision::Tf32 && !has(x, p)) p = ComputePrecision::Fp32;
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
    KernelMove m;
    m.durationUs = k.durationUs;
    if (k.device != trace_.gpuDevice || trace_.rocm) return m;
    const std::string& name = trace_.str(k.name);

    if (k.kind == KernelClass::Communication) {
        // Where the kernel records its message, the bus bandwidth the job reached: a collective
        // that stayed below 80% of its GPU's ring (another node's network, small messages, PCIe
        // contention) keeps that rate within the target's ring; one that filled it moves with the
        // ring. Without a message, the ring ratio.
        const TraceCollective* c =
            k.collective >= 0 && size_t(k.collective) < trace_.collectives.size() ? &trace_.collectives[size_t(k.collective)]
                                                                                  : nullptr;
        const int group = c && c->groupSize >= 2 ? std::min(c->groupSize, 1 << 16) : 8;
        const double ringY = ringBytesPerUs(y_, group), ringX = ringBytesPerUs(x_, group);
        const double busBytes = c ? collectiveBusBytes(*c, group) : 0;
        if (ringY > 0 && ringX > 0) {
            m.basis = MoveBasis::Link;
            const double rateY = busBytes > 0 && k.durationUs > 0 ? busBytes / k.durationUs : 0;
            if (rateY > 0 && rateY < 0.8 * ringY)
                m.durationUs = busBytes / std::min(rateY, ringX);
            else
                m.durationUs = k.durationUs * ringY / ringX;
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
    if (k.kind == KernelClass::Memcpy && (name.find("HtoD") != std::string::npos ||
                                          name.find("DtoH") != std::string::npos)) {
        // A copy runs at the slower of the host's rate and the PCIe link's. The origin's achieved
        // rate is the host's where it stayed below 80% of its link (the same kind of host is
        // assumed on the target); a copy that filled its link moves with the link.
        const double linkY = y_.hostLinkGBs * 1e3, linkX = x_.hostLinkGBs * 1e3;  // bytes per us
        if (linkY > 0 && linkX > 0 && k.bytes > 0 && k.durationUs > 0) {
            const double rateY = k.bytes / k.durationUs;
            m.durationUs = rateY >= 0.8 * linkY ? k.durationUs * linkY / linkX : k.bytes / std::min(rateY, linkX);
            m.basis = MoveBasis::Link;
        }
        if (!notedHost_) {
            notedHost_ = true;
            notes_.push_back("copies between host and GPU keep the rate the host reached in the trace, within the "
                             "target's PCIe link");
        }
        return m;
    }

    // Floors: the shortest activities are launch and ramp, not work.
    const double floorY = std::min(floorY_, k.durationUs);
    const double floorX = floorY * floorX_ / floorY_;
    const double variable = k.durationUs - floorY;

    const int64_t blocks = int64_t(std::max(0, k.grid[0])) * std::max(0, k.grid[1]) * std::max(0, k.grid[2]);
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
    auto padding = [&](double wave) {
        if (!launch) return 1.0;
        return std::ceil(double(blocks) / wave) * wave / double(blocks);
    };
    auto memoryFill = [&](const Side& s) { return blocks > 0 ? std::min(1.0, double(blocks) / s.sms) : 1.0; };

    // On its own GPU in its own arithmetic a kernel takes what it took.
    if (computeClass(k.kind)) {
        m.originMath = kernelMathPrecision(name, k.kind).value_or(ComputePrecision::Fp32);
        m.targetMath = targetMath ? *targetMath : targetMathFor(*m.originMath, k.kind);
    }
    if (y_.gpu->id == x_.gpu->id && m.originMath == m.targetMath) return m;

    // This kernel's share of its operator's work (an operator may launch several kernels).
    std::optional<OperatorWork> work;
    if (k.op >= 0 && size_t(k.op) < work_->operators.size() && work_->operators[size_t(k.op)] &&
        work_->operatorKernelUs[size_t(k.op)] > 0) {
        const OperatorWork& w = *work_->operators[size_t(k.op)];
        const double share = k.durationUs / work_->operatorKernelUs[size_t(k.op)];
        work = OperatorWork{w.flops * share, w.bytes * share};
    }
    const ScalingParams* params = classParams_[size_t(k.kind)] ? classParams_[size_t(k.kind)]
                                                               : classParams_[size_t(KernelClass::Elementwise)];

    double modelY = 0, modelX = 0;  // us of work; relative when the work is unknown
    bool absolute = false;
    if (computeClass(k.kind)) {
        const ComputePrecision py = *m.originMath, px = *m.targetMath;
        const bool conv = k.kind == KernelClass::Conv;
        const bool flops = work && work->flops > 0;
        // Compute in whole waves (per FLOP, or per unit of work); memory from the operator's bytes.
        auto model = [&](const Side& s, double wave, double rate) {
            const double compute = padding(launch ? wave : 0) / rate;
            if (!flops) return compute;
            return std::max(compute * work->flops, work->bytes / (s.memBytesPerUs * memoryFill(s)));
        };
        modelY = model(y_, waveY, computeRate(y_, py, conv));
        modelX = model(x_, waveX, computeRate(x_, px, conv));
        absolute = flops;
        m.basis = flops ? MoveBasis::Shapes : launch ? MoveBasis::Launch : MoveBasis::ClassOnly;
    } else {
        // Bandwidth-bound work (elementwise, reductions, normalisation, embeddings, optimizer
        // steps, device copies and sets): bytes over the bandwidth of the SMs its grid fills.
        const double bytes = work && work->bytes > 0 ? work->bytes : 1.0;
        modelY = bytes / (y_.memBytesPerUs * memoryFill(y_));
        modelX = bytes / (x_.memBytesPerUs * memoryFill(x_));
        absolute = work && work->bytes > 0;
        m.basis = absolute ? MoveBasis::Shapes : blocks > 0 ? MoveBasis::Launch : MoveBasis::ClassOnly;
    }
    if (!absolute || !computeClass(k.kind)) {
        // Only the ratio is known, or the kernel is ATen's or a library's own bandwidth-bound code,
        // compiled for both GPUs: it keeps all of its own efficiency.
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
