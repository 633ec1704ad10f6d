// The join of a Kineto trace's compact records: operators and scopes nested per thread, kernels
// joined to the runtime call that launched them (correlation id) and through it to the innermost
// operator around that call, everything assigned to its ProfilerStep#N; then what the trace cannot
// give, in sentences.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>

#include "kineto_raw.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"

namespace ts {

const char* kernelClassName(KernelClass c) {
    switch (c) {
        case KernelClass::Gemm:
            return "gemm";
        case KernelClass::Conv:
            return "conv";
        case KernelClass::Attention:
            return "attention";
        case KernelClass::Elementwise:
            return "elementwise";
        case KernelClass::Reduction:
            return "reduction";
        case KernelClass::Normalization:
            return "normalization";
        case KernelClass::Embedding:
            return "embedding";
        case KernelClass::Optimizer:
            return "optimizer";
        case KernelClass::Communication:
            return "nccl";
        case KernelClass::Memcpy:
            return "memcpy";
        case KernelClass::Memset:
            return "memset";
        case KernelClass::Other:
            return "other";
    }
    return "other";
}

// By the library and function names that cuBLAS, cuDNN, CUTLASS, NCCL and ATen give their kernels.
// Order matters: cuDNN's convolution kernels contain "gemm", its batch-norm kernels "cudnn".
KernelClass classifyKernelName(const std::string& name) {
    std::string n(name.substr(0, 400));
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    auto has = [&](std::initializer_list<const char*> words) {
        return std::any_of(words.begin(), words.end(), [&](const char* w) { return n.find(w) != std::string::npos; });
    };
    // FBGEMM (Meta's sparse and embedding library) names every kernel "fbgemm_gpu::...": its
    // "gemm" says nothing about the kernel.
    for (size_t at = n.find("fbgemm"); at != std::string::npos; at = n.find("fbgemm", at)) n.replace(at, 6, "fb_lib");
    if (has({"nccl", "rccl"})) return KernelClass::Communication;
    if (has({"flash", "fmha", "attention", "sdpa", "mha_"})) return KernelClass::Attention;
    if (has({"batch_norm", "batchnorm", "bn_fw", "bn_bw", "layer_norm", "layernorm", "group_norm", "rms_norm",
             "rmsnorm"}))
        return KernelClass::Normalization;
    if (has({"conv", "scudnn", "fprop", "dgrad", "wgrad", "winograd", "implicit_convolve", "precomputed_convolve"}))
        return KernelClass::Conv;
    if (has({"gemm", "gemv", "cutlass", "cublas", "matmul", "s1688", "s884", "h1688", "h884", "hmma", "xmma", "ampere_",
             "volta_", "turing_", "sm90_", "splitkreduce", "dot_kernel", "cijk_"}))
        return KernelClass::Gemm;
    if (has({"embedding", "index_select", "indexselect", "gather", "scatter"})) return KernelClass::Embedding;
    if (has({"multi_tensor_apply", "adam", "adagrad", "sgd", "optimizer"})) return KernelClass::Optimizer;
    if (has({"reduce", "softmax", "sum_kernel", "cross_entropy", "nll_loss", "norm_kernel", "cub::", "scan", "topk",
             "sort", "argmax"}))
        return KernelClass::Reduction;
    if (has({"elementwise", "vectorized", "unrolled", "copy", "fill", "cat", "at::native", "pointwise", "triton_poi"}))
        return KernelClass::Elementwise;
    return KernelClass::Other;
}

const std::string& KinetoTrace::str(int32_t i) const {
    static const std::string empty;
    return i >= 0 && size_t(i) < strings.size() ? strings[size_t(i)] : empty;
}

const DeviceProperties* KinetoTrace::gpu() const {
    for (const DeviceProperties& d : devices)
        if (d.index == gpuDevice) return &d;
    return gpuDevice >= 0 && devices.size() == 1 ? &devices[0] : nullptr;
}

namespace kineto {
namespace {

int kindOrder(HostKind k) {
    switch (k) {
        case HostKind::Step:
            return 0;
        case HostKind::Annotation:
            return 1;
        case HostKind::ModuleScope:
            return 2;
        case HostKind::Operator:
            return 3;
        case HostKind::Runtime:
            return 4;
    }
    return 5;
}

struct Launch {
    double ts = 0;
    int32_t op = -1;
};

// The step whose CPU span holds `t`, or -1.
int32_t stepAt(const std::vector<TraceStep>& steps, double t) {
    auto it =
        std::upper_bound(steps.begin(), steps.end(), t, [](double x, const TraceStep& s) { return x < s.startUs; });
    if (it == steps.begin()) return -1;
    --it;
    return t < it->startUs + it->durationUs ? int32_t(it - steps.begin()) : -1;
}

bool isAmdName(const std::string& name) {
    return name.find("AMD") != std::string::npos || name.find("Radeon") != std::string::npos ||
           name.find("Instinct") != std::string::npos;
}

}  // namespace

KinetoTrace joinTrace(RawTrace raw) {
    KinetoTrace& t = raw.trace;
    std::vector<HostEvent>& host = raw.host;
    std::sort(host.begin(), host.end(), [](const HostEvent& a, const HostEvent& b) {
        if (a.thread != b.thread) return a.thread < b.thread;
        if (a.ts != b.ts) return a.ts < b.ts;
        if (a.dur != b.dur) return a.dur > b.dur;
        return kindOrder(a.kind) < kindOrder(b.kind);
    });

    // Steps first: operators and kernels are assigned to them.
    std::map<int64_t, TraceStep> stepsByNumber;
    for (const HostEvent& h : host)
        if (h.kind == HostKind::Step && !stepsByNumber.count(h.stepNumber))
            stepsByNumber[h.stepNumber] = TraceStep{h.stepNumber, h.ts, h.dur};
    for (auto& [n, s] : stepsByNumber) t.steps.push_back(s);
    std::sort(t.steps.begin(), t.steps.end(),
              [](const TraceStep& a, const TraceStep& b) { return a.startUs < b.startUs; });

    // One sweep per thread with a stack of open spans: the scope of an operator is the chain of
    // record_function labels and nn.Module calls around it; a runtime call belongs to the innermost
    // operator around it.
    struct Frame {
        double end;
        int32_t op;     // operator index, -1 for a scope
        int32_t scope;  // scope string of everything up to this frame
        int32_t operators;
    };
    std::vector<Frame> stack;
    std::unordered_map<int64_t, Launch> launches;
    launches.reserve(host.size() / 4);
    int32_t thread = -1;
    for (const HostEvent& h : host) {
        if (h.thread != thread) {
            stack.clear();
            thread = h.thread;
        }
        while (!stack.empty() && stack.back().end <= h.ts) stack.pop_back();
        const int32_t scope = stack.empty() ? -1 : stack.back().scope;
        const int32_t depth = stack.empty() ? 0 : stack.back().operators;
        switch (h.kind) {
            case HostKind::Runtime: {
                int32_t op = -1;
                for (auto it = stack.rbegin(); it != stack.rend() && op < 0; ++it) op = it->op;
                launches[h.correlation] = Launch{h.ts, op};
                if (h.dur >= kHostCallMinUs) t.hostCalls.push_back({h.thread, h.ts, h.dur});
                break;
            }
            case HostKind::Step:
                stack.push_back({h.ts + h.dur, -1, scope, depth});
                break;
            case HostKind::Annotation:
            case HostKind::ModuleScope: {
                const std::string& name = t.str(h.name);
                const int32_t inner = raw.intern(scope < 0 ? name : t.str(scope) + "/" + name);
                stack.push_back({h.ts + h.dur, -1, inner, depth});
                break;
            }
            case HostKind::Operator: {
                TraceOperator op;
                op.name = h.name;
                op.inputShapes = h.inputShapes;
                op.inputTypes = h.inputTypes;
                op.scope = scope >= 0 ? scope : h.moduleHierarchy;
                op.thread = h.thread;
                op.depth = depth;
                op.startUs = h.ts;
                op.durationUs = h.dur;
                op.step = stepAt(t.steps, h.ts);
                if (h.inputShapes >= 0) t.recordShapes = true;
                stack.push_back({h.ts + h.dur, int32_t(t.operators.size()), scope, depth + 1});
                t.operators.push_back(op);
                break;
            }
        }
    }
    host.clear();
    host.shrink_to_fit();
    std::stable_sort(t.hostCalls.begin(), t.hostCalls.end(),
                     [](const TraceHostCall& a, const TraceHostCall& b) { return a.startUs < b.startUs; });

    std::stable_sort(t.kernels.begin(), t.kernels.end(),
                     [](const TraceKernel& a, const TraceKernel& b) { return a.startUs < b.startUs; });
    std::map<int32_t, double> busyByDevice;
    for (TraceKernel& k : t.kernels) {
        auto it = k.correlation >= 0 ? launches.find(k.correlation) : launches.end();
        if (it != launches.end()) {
            k.launchUs = it->second.ts;
            k.op = it->second.op;
        } else {
            ++t.unjoinedKernels;
        }
        k.step = stepAt(t.steps, k.launchUs >= 0 ? k.launchUs : k.startUs);
        busyByDevice[k.device] += k.durationUs;
    }
    for (const auto& [device, us] : busyByDevice)
        if (t.gpuDevice < 0 || us > busyByDevice[t.gpuDevice]) t.gpuDevice = device;

    const DeviceProperties* gpu = t.gpu();
    t.rocm =
        raw.hipRuntime || (gpu && isAmdName(gpu->name)) ||
        std::any_of(t.devices.begin(), t.devices.end(), [](const DeviceProperties& d) { return isAmdName(d.name); });
    if (t.kernels.empty() && t.devices.empty())
        t.notes.push_back(
            "a CPU-only trace: no GPU kernels and no GPU properties, so no GPU time, idle time, kernel "
            "classes or communication on a GPU");
    else if (t.kernels.empty())
        t.notes.push_back("no GPU kernels were recorded (torch.profiler without ProfilerActivity.CUDA?)");
    if (t.rocm)
        t.notes.push_back(
            "recorded on an AMD GPU (ROCm): TrainScope's GPU database, occupancy and kernel figures are "
            "NVIDIA-only, so the GPU is not matched and no NVIDIA figures are given; times are as measured");
    if (t.steps.empty())
        t.notes.push_back(
            "no ProfilerStep#N marks: the trace is taken as one span from its first to its last GPU activity");
    if (!t.recordShapes && !t.operators.empty())
        t.notes.push_back("recorded without record_shapes: operators have no input shapes");
    if (t.unjoinedKernels > 0)
        t.notes.push_back(std::to_string(t.unjoinedKernels) +
                          " GPU activities have no launch in the trace (no correlation id, or launched before "
                          "recording began): they count in GPU time but belong to no operator");
    return std::move(raw.trace);
}

}  // namespace kineto

bool isKinetoTraceFile(const std::string& path) {
    auto endsWith = [&](const char* suffix) {
        const size_t n = std::char_traits<char>::length(suffix);
        return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
    };
    const bool gz = endsWith(".json.gz");
    if (!gz && !endsWith(".json")) return false;
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    if (gz) return true;  // a compressed .json is not a TrainScope model or profile: the reader decides
    std::string head(4096, '\0');
    in.read(head.data(), std::streamsize(head.size()));
    head.resize(size_t(in.gcount()));
    return head.find("\"traceEvents\"") != std::string::npos || head.find("\"schemaVersion\"") != std::string::npos;
}

std::string tracePredictionUnavailable(const KinetoTrace& trace) {
    std::string what = "a PyTorch profiler trace";
    if (!trace.steps.empty()) what += " of " + std::to_string(trace.steps.size()) + " steps";
    return what +
           " holds no model graph, so it opens only where its kernels are what is predicted: "
           "`trainscope-cli predict TRACE` and `report TRACE` move its steps to other GPUs, `inspect TRACE` explains it";
}

const GpuSpec* matchTraceGpu(const KinetoTrace& trace, const GpuDatabase& db, std::string* how) {
    const DeviceProperties* gpu = trace.gpu();
    if (!gpu || trace.rocm) return nullptr;
    if (const GpuSpec* spec = db.matchDevice(gpu->name)) {
        if (how) *how = "by its device name";
        return spec;
    }
    // Same compute capability and SMs, memory within 10%: the first such entry in database order.
    std::vector<const GpuSpec*> candidates;
    for (const GpuSpec& spec : db.gpus()) {
        if (spec.ccMajor != gpu->ccMajor || spec.ccMinor != gpu->ccMinor) continue;
        if (!spec.sms.known() || int(*spec.sms) != gpu->sms) continue;
        if (!spec.memoryGB.known() || gpu->totalMemoryBytes == 0) continue;
        const double gb = double(gpu->totalMemoryBytes) / 1e9;
        if (std::abs(gb - *spec.memoryGB * 1.073741824) > 0.1 * gb && std::abs(gb - *spec.memoryGB) > 0.1 * gb)
            continue;
        candidates.push_back(&spec);
    }
    if (candidates.empty()) return nullptr;
    if (how) {
        *how = "by its properties (compute capability " + std::to_string(gpu->ccMajor) + "." +
               std::to_string(gpu->ccMinor) + ", " + std::to_string(gpu->sms) + " SMs, memory); the database lacks " +
               "its name";
        if (candidates.size() > 1) {
            *how += "; also matches";
            for (size_t i = 1; i < candidates.size(); ++i) *how += " " + candidates[i]->id;
        }
    }
    return candidates.front();
}

}  // namespace ts
