#include "iteration_trace.h"

#include <algorithm>
#include <chrono>
#include <mutex>

namespace ts::torchexec {
namespace {

constexpr uint64_t kForwardIdBase = 1;  // external correlation id of op i's forward: i + 1

struct HookEvent {
    int op;
    double us;
};

}  // namespace

Timeline traceIteration(GraphExecutor& ex, const LossFunction& loss, TrainingStep& step, DeviceRuntime& rt,
                        TrainingPrecision precision, profiling::KernelTracer* tracer) {
    const Graph& g = ex.graph();
    if (tracer && !tracer->active()) tracer = nullptr;
    Timeline t;
    rt.synchronize();
    if (tracer) tracer->collect();
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t cupti0 = tracer ? tracer->timestampNs() : 0;
    auto now = [&] { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count(); };
    auto span = [&](std::string name, std::string category, double start, std::string layer = "") {
        t.spans.push_back(TraceSpan{std::move(name), std::move(category), "host", start, now() - start, std::move(layer)});
    };

    double s = now();
    step.zeroGrad();
    span("zero_grad", "optimizer", s);

    std::mutex hookMutex;
    std::vector<HookEvent> hooks;  // when each layer's output gradient arrived: its backward starts
    at::Tensor l;
    {
        PrecisionScope scope(precision, ex.device());
        for (int op = 0; op < static_cast<int>(g.ops.size()); ++op) {
            const Operation& o = g.ops[static_cast<size_t>(op)];
            s = now();
            if (tracer) tracer->push(kForwardIdBase + static_cast<uint64_t>(op));
            ex.runOp(op, LoweringOptions{.training = true});
            if (tracer) tracer->pop();
            span(o.name, "forward", s, o.name);
            for (int v : o.outputs) {
                if (v < 0) continue;
                at::Tensor& out = ex.value(v);
                if (!out.defined() || !out.requires_grad()) continue;
                out.register_hook([&hooks, &hookMutex, &now, op](const at::Tensor&) {
                    std::lock_guard<std::mutex> lock(hookMutex);
                    hooks.push_back({op, now()});
                });
                break;
            }
            ex.releaseDeadAfter(op);
        }
        s = now();
        l = loss(ex);
        span("loss", "loss", s);
    }
    ex.clearActivations();
    s = now();
    step.backward(l);
    l = at::Tensor();
    rt.synchronize();
    double backwardEnd = now();
    span("backward", "backward", s);
    std::sort(hooks.begin(), hooks.end(), [](const HookEvent& a, const HookEvent& b) { return a.us < b.us; });
    for (size_t i = 0; i < hooks.size(); ++i) {
        double end = i + 1 < hooks.size() ? hooks[i + 1].us : backwardEnd;
        const std::string& name = g.ops[static_cast<size_t>(hooks[i].op)].name;
        t.spans.push_back(TraceSpan{name + " (backward)", "backward", "host backward", hooks[i].us, end - hooks[i].us, name});
    }
    s = now();
    step.step();
    rt.synchronize();
    span("optimizer step", "optimizer", s);

    if (tracer) {
        for (const profiling::KernelActivity& k : tracer->collect()) {
            if (k.startNs < cupti0) continue;
            std::string layer;
            if (k.externalId >= kForwardIdBase && k.externalId < kForwardIdBase + g.ops.size())
                layer = g.ops[static_cast<size_t>(k.externalId - kForwardIdBase)].name;
            t.spans.push_back(TraceSpan{k.kernel.name, "kernel", "gpu stream " + std::to_string(k.streamId),
                                        static_cast<double>(k.startNs - cupti0) / 1000.0,
                                        static_cast<double>(k.endNs - k.startNs) / 1000.0, layer});
        }
    }
    return t;
}

}  // namespace ts::torchexec
