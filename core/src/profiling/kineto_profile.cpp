// A Kineto trace as TrainScope's measured-profile types (profile.h), as far as they fit: see
// profileFromKinetoTrace in kineto_trace.h and docs/traces.md.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "trainscope/core/kineto_trace.h"

namespace ts {
namespace {

TimingStat timingOf(std::vector<double> ms) {
    TimingStat t;
    if (ms.empty()) return t;
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    t.medianMs = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    t.minMs = ms.front();
    t.maxMs = ms.back();
    t.repeats = int(n);
    double mean = 0, var = 0;
    for (double x : ms) mean += x / double(n);
    for (double x : ms) var += (x - mean) * (x - mean) / double(n);
    t.cv = mean > 0 ? std::sqrt(var) / mean : 0;
    return t;
}

bool isBackward(const std::string& op) {
    return op.rfind("autograd::", 0) == 0 || op.find("Backward") != std::string::npos;
}

}  // namespace

Profile profileFromKinetoTrace(const KinetoTrace& t) {
    Profile p;
    const DeviceProperties* gpu = t.gpu();
    p.environment.device = gpu ? "cuda:" + std::to_string(gpu->index) : "cpu";
    p.environment.deviceName = gpu ? gpu->name : "";
    if (gpu) p.environment.gpu = *gpu;
    p.environment.software.trainscope = "kineto trace";
    p.scenario.modelName = std::filesystem::path(t.source).filename().string();
    p.kernelsRecorded = !t.kernels.empty();
    if (!p.kernelsRecorded) p.kernelsMissingReason = "the trace holds no GPU kernels";
    p.notes = t.notes;
    p.notes.push_back(
        "read from a PyTorch profiler trace: the model, batch size, precision and optimizer are not "
        "recorded in it; steps, streams and collectives are in the trace summary");

    ProfileRun run;
    run.batch = 0;
    std::vector<double> steps;
    for (const TraceStep& s : t.steps) steps.push_back(s.durationUs / 1000);
    run.iteration = timingOf(steps);
    const double stepCount = std::max<double>(1, double(t.steps.size()));

    // One layer per distinct operator (name, input shapes) that launched GPU work; its kernels
    // merged by name and launch configuration, their time per call of the operator.
    using Key = std::tuple<int32_t, int32_t>;
    struct Acc {
        LayerProfile layer;
        std::vector<double> cpuMs;
        std::map<std::tuple<int32_t, int, int, int, int, int, int>, size_t> kernelIndex;
    };
    std::map<Key, Acc> layers;
    std::map<Key, std::vector<int32_t>> opsOf;
    double gpuBusyUs = 0;
    for (const TraceKernel& k : t.kernels) {
        if (k.device != t.gpuDevice || (!t.steps.empty() && k.step < 0)) continue;
        gpuBusyUs += k.durationUs;
        if (k.op < 0) continue;
        const TraceOperator& op = t.operators[size_t(k.op)];
        Acc& a = layers[{op.name, op.inputShapes}];
        if (a.layer.name.empty()) {
            a.layer.name = t.str(op.name);
            a.layer.type = t.str(op.name);
            a.layer.modulePath = t.str(op.scope);
        }
        opsOf[{op.name, op.inputShapes}].push_back(k.op);
        const bool backward = isBackward(t.str(op.name));
        std::vector<KernelRecord>& list = backward ? a.layer.backwardKernels : a.layer.forwardKernels;
        a.layer.hasBackward = a.layer.hasBackward || backward;
        const auto kkey = std::make_tuple(k.name, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]);
        auto it = a.kernelIndex.find(kkey);
        if (it == a.kernelIndex.end() || it->second >= list.size() || list[it->second].name != t.str(k.name)) {
            KernelRecord r;
            r.name = t.str(k.name);
            for (int i = 0; i < 3; ++i) {
                r.grid[i] = std::max(1, k.grid[i]);
                r.block[i] = std::max(1, k.block[i]);
            }
            r.registersPerThread = k.registersPerThread;
            r.staticSharedBytes = k.sharedMemoryBytes;
            r.launches = 0;
            r.tensorCore = r.name.find("gemm") != std::string::npos &&
                           (r.name.find("tensorop") != std::string::npos || r.name.find("hmma") != std::string::npos ||
                            r.name.find("s1688") != std::string::npos || r.name.find("s16816") != std::string::npos);
            a.kernelIndex[kkey] = list.size();
            list.push_back(r);
            it = a.kernelIndex.find(kkey);
        }
        list[it->second].durationUs += k.durationUs;
        ++list[it->second].launches;
    }
    for (auto& [key, a] : layers) {
        std::vector<int32_t>& ops = opsOf[key];
        std::sort(ops.begin(), ops.end());
        ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
        std::vector<double> cpu;
        for (int32_t i : ops) cpu.push_back(t.operators[size_t(i)].durationUs / 1000);
        const double calls = std::max<double>(1, double(ops.size()));
        // Per call of the operator: durations and launches are means over its calls.
        for (auto* list : {&a.layer.forwardKernels, &a.layer.backwardKernels})
            for (KernelRecord& r : *list) {
                r.durationUs /= calls;
                r.launches = std::max(1, int(std::lround(r.launches / calls)));
            }
        (a.layer.hasBackward ? a.layer.backward : a.layer.forward) = timingOf(cpu);
        a.layer.note = "host time of the operator (inclusive), not its GPU time";
        run.layers.push_back(std::move(a.layer));
    }
    if (run.iteration.measured()) {
        const double busyMs = std::min(run.iteration.medianMs, gpuBusyUs / 1000 / stepCount);
        run.parts.push_back({"GPU activities (mean per step, streams overlapping counted once or more)", busyMs});
        run.parts.push_back({"rest of the step (GPU idle or overlapped)", run.iteration.medianMs - busyMs});
    }
    p.runs.push_back(std::move(run));
    return p;
}

}  // namespace ts
