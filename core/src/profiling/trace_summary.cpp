// Per-step GPU busy/idle time, exposed communication and host-bound stretches, and the totals by
// operator, kernel and kernel class, all from the trace's own timestamps (docs/traces.md).
#include "trainscope/core/trace_summary.h"

#include <algorithm>
#include <map>

#include "trainscope/core/gpu_database.h"

namespace ts {
namespace {

using Interval = std::pair<double, double>;

// Sorted by start in, merged out.
std::vector<Interval> mergeSorted(const std::vector<Interval>& in) {
    std::vector<Interval> out;
    for (const Interval& i : in) {
        if (!out.empty() && i.first <= out.back().second)
            out.back().second = std::max(out.back().second, i.second);
        else
            out.push_back(i);
    }
    return out;
}

double lengthOf(const std::vector<Interval>& merged) {
    double sum = 0;
    for (const Interval& i : merged) sum += i.second - i.first;
    return sum;
}

double overlapOf(const std::vector<Interval>& a, const std::vector<Interval>& b) {
    double sum = 0;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
        if (hi > lo) sum += hi - lo;
        if (a[i].second < b[j].second)
            ++i;
        else
            ++j;
    }
    return sum;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct StepWork {
    TraceStepSummary summary;
    std::vector<HostBoundStretch> stretches;
};

// One step's (or the whole trace's) GPU activities, sorted by start, on the traced GPU.
StepWork analyseStep(const KinetoTrace& t, const std::vector<const TraceKernel*>& acts, double cpuStart,
                     double cpuDuration, int64_t number) {
    StepWork w;
    TraceStepSummary& s = w.summary;
    s.number = number;
    s.cpuMs = cpuDuration / 1000;
    s.kernels = int(acts.size());
    double start = cpuStart, end = cpuStart + cpuDuration;
    std::vector<Interval> all, comm, compute;
    for (const TraceKernel* k : acts) {
        const Interval i{k->startUs, k->startUs + k->durationUs};
        start = std::min(start, i.first);
        end = std::max(end, i.second);
        all.push_back(i);
        (k->kind == KernelClass::Communication ? comm : compute).push_back(i);
        s.kernelMs += k->durationUs / 1000;
    }
    const std::vector<Interval> busy = mergeSorted(all);
    const std::vector<Interval> commMerged = mergeSorted(comm), computeMerged = mergeSorted(compute);
    s.gpuWindowMs = (end - start) / 1000;
    s.busyMs = lengthOf(busy) / 1000;
    s.idleMs = std::max(0.0, s.gpuWindowMs - s.busyMs);
    s.communicationMs = lengthOf(commMerged) / 1000;
    s.exposedCommunicationMs = std::max(0.0, s.communicationMs - overlapOf(commMerged, computeMerged) / 1000);

    // Gaps of the busy time. A gap is host-bound when the activity that ends it was launched only
    // after the GPU had gone idle (or when nothing follows before the step ends).
    auto addStretch = [&](double from, double to, const TraceKernel* next) {
        if (to <= from) return;
        s.hostBoundMs += (to - from) / 1000;
        HostBoundStretch h{number, (from - cpuStart) / 1000, (to - from) / 1000, ""};
        if (next && next->op >= 0)
            h.nextOperator = t.str(t.operators[size_t(next->op)].name);
        else if (!next)
            h.nextOperator = "(end of step)";
        w.stretches.push_back(std::move(h));
    };
    double idleSince = start;
    size_t a = 0;
    for (const Interval& b : busy) {
        while (a < acts.size() && acts[a]->startUs < b.first) ++a;  // first activity of this busy stretch
        const TraceKernel* next = a < acts.size() ? acts[a] : nullptr;
        if (b.first > idleSince && next && next->launchUs >= 0 && next->launchUs >= idleSince)
            addStretch(idleSince, b.first, next);
        idleSince = b.second;
    }
    if (!acts.empty()) addStretch(idleSince, end, nullptr);
    return w;
}

}  // namespace

TraceSummary summarizeTrace(const KinetoTrace& t, const GpuDatabase& db, size_t top) {
    TraceSummary sum;
    sum.source = t.source;
    sum.rocm = t.rocm;
    sum.recordShapes = t.recordShapes;
    sum.withStack = t.withStack;
    sum.events = t.eventsRead;
    sum.operators = int64_t(t.operators.size());
    sum.notes = t.notes;
    if (const DeviceProperties* gpu = t.gpu())
        sum.gpuName = gpu->name;
    else if (!t.devices.empty())
        sum.gpuName = t.devices.front().name;
    std::string how;
    if (const GpuSpec* spec = matchTraceGpu(t, db, &how)) {
        sum.gpuId = spec->id;
        sum.gpuMatch = how;
    } else {
        sum.gpuMatch = t.rocm                ? "not matched: an AMD GPU, and the database holds NVIDIA GPUs only"
                       : sum.gpuName.empty() ? "no GPU in the trace"
                                             : "not in the GPU database (add it: docs/gpu-database.md)";
    }

    // The traced GPU's activities, by step.
    const bool bySteps = !t.steps.empty();
    std::vector<std::vector<const TraceKernel*>> perStep(bySteps ? t.steps.size() : 1);
    for (const TraceKernel& k : t.kernels) {
        if (k.device != t.gpuDevice) continue;
        if (bySteps && k.step < 0) continue;
        perStep[bySteps ? size_t(k.step) : 0].push_back(&k);
        ++sum.gpuActivities;
    }
    std::vector<HostBoundStretch> stretches;
    std::vector<double> stepMs;
    if (bySteps) {
        for (size_t i = 0; i < t.steps.size(); ++i) {
            StepWork w = analyseStep(t, perStep[i], t.steps[i].startUs, t.steps[i].durationUs, t.steps[i].number);
            stepMs.push_back(w.summary.cpuMs);
            sum.steps.push_back(w.summary);
            stretches.insert(stretches.end(), w.stretches.begin(), w.stretches.end());
        }
    } else if (!perStep[0].empty() || !t.operators.empty()) {
        double lo = perStep[0].empty() ? t.operators.front().startUs : perStep[0].front()->startUs, hi = lo;
        for (const TraceKernel* k : perStep[0]) hi = std::max(hi, k->startUs + k->durationUs);
        if (perStep[0].empty())
            for (const TraceOperator& op : t.operators) {
                lo = std::min(lo, op.startUs);
                hi = std::max(hi, op.startUs + op.durationUs);
            }
        StepWork w = analyseStep(t, perStep[0], lo, hi - lo, -1);
        stepMs.push_back(w.summary.cpuMs);
        sum.steps.push_back(w.summary);
        stretches = std::move(w.stretches);
    }
    sum.medianStepMs = median(stepMs);
    std::stable_sort(stretches.begin(), stretches.end(),
                     [](const HostBoundStretch& a, const HostBoundStretch& b) { return a.durationMs > b.durationMs; });
    if (stretches.size() > top) stretches.resize(top);
    sum.hostBound = std::move(stretches);

    // Totals over the steps (or the whole trace).
    std::map<int32_t, TraceOperatorTotal> ops;
    for (const TraceOperator& op : t.operators) {
        if (bySteps && op.step < 0) continue;
        TraceOperatorTotal& o = ops[op.name];
        ++o.calls;
        o.cpuMs += op.durationUs / 1000;
    }
    std::map<int32_t, TraceKernelTotal> kernels;
    std::map<KernelClass, TraceClassTotal> classes;
    for (const auto& acts : perStep)
        for (const TraceKernel* k : acts) {
            if (k->op >= 0) {
                TraceOperatorTotal& o = ops[t.operators[size_t(k->op)].name];
                o.gpuMs += k->durationUs / 1000;
                ++o.kernels;
            }
            TraceKernelTotal& kt = kernels[k->name];
            if (kt.calls == 0) {
                kt.kind = k->kind;
                std::copy(k->grid, k->grid + 3, kt.grid);
                std::copy(k->block, k->block + 3, kt.block);
                kt.registersPerThread = k->registersPerThread;
                kt.sharedMemoryBytes = k->sharedMemoryBytes;
                kt.occupancyPercent = k->occupancyPercent;
            }
            ++kt.calls;
            kt.gpuMs += k->durationUs / 1000;
            TraceClassTotal& c = classes[k->kind];
            c.kind = k->kind;
            ++c.calls;
            c.gpuMs += k->durationUs / 1000;
        }
    for (auto& [name, o] : ops) {
        o.name = t.str(name);
        sum.topOperators.push_back(std::move(o));
    }
    std::stable_sort(sum.topOperators.begin(), sum.topOperators.end(), [](const auto& a, const auto& b) {
        return a.gpuMs != b.gpuMs ? a.gpuMs > b.gpuMs : a.cpuMs > b.cpuMs;
    });
    if (sum.topOperators.size() > top) sum.topOperators.resize(top);
    for (auto& [name, k] : kernels) {
        k.name = t.str(name);
        sum.topKernels.push_back(std::move(k));
    }
    std::stable_sort(sum.topKernels.begin(), sum.topKernels.end(),
                     [](const auto& a, const auto& b) { return a.gpuMs > b.gpuMs; });
    if (sum.topKernels.size() > top) sum.topKernels.resize(top);
    for (auto& [kind, c] : classes) sum.classes.push_back(c);
    std::stable_sort(sum.classes.begin(), sum.classes.end(),
                     [](const auto& a, const auto& b) { return a.gpuMs > b.gpuMs; });
    return sum;
}

}  // namespace ts
