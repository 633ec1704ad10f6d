#include "trace_timeline.h"

#include <algorithm>
#include <map>

namespace ts::gui {

TraceTimeline buildTraceTimeline(const TraceDocument& doc, size_t step) {
    const KinetoTrace& t = doc.trace;
    TraceTimeline out;
    if (doc.summary.steps.empty()) return out;
    step = std::min(step, doc.summary.steps.size() - 1);
    const TraceStepSummary& summary = doc.summary.steps[step];
    out.step = step;
    out.number = summary.number;
    out.cpuMs = summary.cpuMs;
    const double originUs = doc.stepStartUs(step);
    auto ms = [originUs](double us) { return (us - originUs) / 1000; };
    double endMs = out.cpuMs;

    std::map<int32_t, std::vector<size_t>> threads;  // thread -> its top-level operators
    for (size_t i = 0; i < t.operators.size(); ++i) {
        const TraceOperator& op = t.operators[i];
        if (op.depth == 0 && doc.inStep(op.step, step)) threads[op.thread].push_back(i);
    }
    std::map<int32_t, std::vector<size_t>> streams;  // stream -> its activities
    for (size_t i = 0; i < t.kernels.size(); ++i) {
        const TraceKernel& k = t.kernels[i];
        if (!doc.inStep(k.step, step)) continue;
        if (k.device != t.gpuDevice) {
            ++out.otherDeviceActivities;
            continue;
        }
        streams[k.stream].push_back(i);
    }

    for (auto& [thread, ops] : threads) {
        const int row = int(out.rows.size());
        const std::string tid = size_t(thread) < t.threads.size() ? t.threads[size_t(thread)].tid : "?";
        out.rows.push_back({"thread " + tid, false, thread});
        std::sort(ops.begin(), ops.end(),
                  [&](size_t a, size_t b) { return t.operators[a].startUs < t.operators[b].startUs; });
        for (size_t i : ops) {
            const TraceOperator& op = t.operators[i];
            out.bars.push_back({row, ms(op.startUs), op.durationUs / 1000, int32_t(i)});
        }
    }
    std::vector<std::pair<double, double>> busy;
    for (const auto& [stream, acts] : streams) {
        const int row = int(out.rows.size());
        out.rows.push_back({"GPU stream " + std::to_string(stream), true, stream});
        for (size_t i : acts) {  // the trace keeps activities in start order
            const TraceKernel& k = t.kernels[i];
            out.bars.push_back({row, ms(k.startUs), k.durationUs / 1000, int32_t(i)});
            busy.emplace_back(ms(k.startUs), ms(k.startUs + k.durationUs));
            endMs = std::max(endMs, ms(k.startUs + k.durationUs));
        }
    }
    out.spanMs = endMs;

    // Gaps in the union of the activities, from the step's start to the end of the span (the
    // summary measures idle time over the same window).
    std::sort(busy.begin(), busy.end());
    if (!busy.empty()) {
        double idleSince = std::min(0.0, busy.front().first);
        for (const auto& [from, to] : busy) {
            if (from > idleSince) out.idle.push_back({idleSince, from - idleSince});
            idleSince = std::max(idleSince, to);
        }
        if (endMs > idleSince) out.idle.push_back({idleSince, endMs - idleSince});
    }
    for (const HostBoundStretch& h : doc.summary.hostBound)
        if (h.step == out.number) out.hostBound.push_back({h.startMs, h.durationMs});
    std::sort(out.hostBound.begin(), out.hostBound.end(),
              [](const TraceTimelineStretch& a, const TraceTimelineStretch& b) { return a.startMs < b.startMs; });
    return out;
}

}  // namespace ts::gui
