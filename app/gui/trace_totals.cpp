#include "trace_totals.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace ts::gui {

std::vector<int32_t> topLevelOperators(const KinetoTrace& trace) {
    const std::vector<TraceOperator>& ops = trace.operators;
    // Per thread in start order, an operator at depth > 0 lies inside the last depth-0 one before it
    // (outer first when two start together).
    std::vector<int32_t> order(ops.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        const TraceOperator &x = ops[size_t(a)], &y = ops[size_t(b)];
        if (x.thread != y.thread) return x.thread < y.thread;
        if (x.startUs != y.startUs) return x.startUs < y.startUs;
        return x.depth < y.depth;
    });
    std::vector<int32_t> top(ops.size(), -1);
    int32_t thread = -1, current = -1;
    for (int32_t i : order) {
        const TraceOperator& op = ops[size_t(i)];
        if (op.thread != thread) {
            thread = op.thread;
            current = -1;
        }
        if (op.depth == 0) current = i;
        top[size_t(i)] = current;
    }
    return top;
}

std::vector<TraceScopeTotal> traceScopeTotals(const TraceDocument& doc) {
    const KinetoTrace& t = doc.trace;
    const bool bySteps = doc.bySteps();
    const double steps = double(std::max<size_t>(doc.summary.steps.size(), 1));
    std::vector<TraceScopeTotal> totals;
    std::map<std::pair<int32_t, int32_t>, size_t> index;  // (scope, name) -> totals
    std::vector<int64_t> entryOfOp(t.operators.size(), -1);
    for (size_t i = 0; i < t.operators.size(); ++i) {
        const TraceOperator& op = t.operators[i];
        if (op.depth != 0 || (bySteps && op.step < 0)) continue;
        auto [it, added] = index.try_emplace({op.scope, op.name}, totals.size());
        if (added) totals.push_back({t.str(op.scope), t.str(op.name)});
        TraceScopeTotal& total = totals[it->second];
        total.calls += 1;
        total.cpuMs += op.durationUs / 1000;
        entryOfOp[i] = int64_t(it->second);
    }
    const std::vector<int32_t> top = topLevelOperators(t);
    for (const TraceKernel& k : t.kernels) {
        if (k.device != t.gpuDevice || k.op < 0 || (bySteps && k.step < 0)) continue;
        const int32_t owner = top[size_t(k.op)];
        if (owner < 0 || entryOfOp[size_t(owner)] < 0) continue;
        TraceScopeTotal& total = totals[size_t(entryOfOp[size_t(owner)])];
        total.gpuMs += k.durationUs / 1000;
        total.kernels += 1;
    }
    for (TraceScopeTotal& total : totals) {
        total.calls /= steps;
        total.cpuMs /= steps;
        total.gpuMs /= steps;
        total.kernels /= steps;
    }
    return totals;
}

}  // namespace ts::gui
