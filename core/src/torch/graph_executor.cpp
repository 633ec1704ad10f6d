#include "graph_executor.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>

#include <algorithm>

#include "trainscope/core/errors.h"

namespace ts::torchexec {

GraphExecutor::GraphExecutor(const Graph& g, int64_t batch, int64_t seq, at::Device device, uint64_t seed)
    : g_(g), batch_(batch), seq_(seq), device_(device), gen_(at::detail::createCPUGenerator(seed)),
      values_(g.values.size()), lastUse_(g.values.size(), -1) {
    for (size_t op = 0; op < g.ops.size(); ++op)
        for (int in : g.ops[op].inputs)
            if (in >= 0) lastUse_[static_cast<size_t>(in)] = static_cast<int>(op);
    for (int out : g.outputs) lastUse_[static_cast<size_t>(out)] = static_cast<int>(g.ops.size());
}

void GraphExecutor::materializeLeaves(const std::map<std::string, HostTensor>& feeds) {
    for (size_t i = 0; i < g_.values.size(); ++i) {
        const Value& v = g_.values[i];
        if (v.producer >= 0) continue;
        auto fed = feeds.find(v.name);
        if (fed != feeds.end()) {
            values_[i] = fromHost(fed->second, "input '" + v.name + "'").to(device_);
            if (v.kind == ValueKind::Parameter && values_[i].is_floating_point()) values_[i].requires_grad_(true);
        } else {
            values_[i] = initialValue(g_, static_cast<int>(i), batch_, seq_, device_, gen_);
        }
    }
}

void GraphExecutor::materializeLeaves(const std::vector<ValueKind>& kinds) {
    for (size_t i = 0; i < g_.values.size(); ++i) {
        const Value& v = g_.values[i];
        if (v.producer >= 0 || std::find(kinds.begin(), kinds.end(), v.kind) == kinds.end()) continue;
        values_[i] = initialValue(g_, static_cast<int>(i), batch_, seq_, device_, gen_);
    }
}

void GraphExecutor::regenerateInputs() {
    for (int in : g_.inputs) values_[static_cast<size_t>(in)] = initialValue(g_, in, batch_, seq_, device_, gen_);
}

std::vector<at::Tensor> GraphExecutor::inputsOf(int op) const {
    std::vector<at::Tensor> in;
    for (int v : g_.ops[static_cast<size_t>(op)].inputs) in.push_back(v >= 0 ? values_[static_cast<size_t>(v)] : at::Tensor());
    return in;
}

void GraphExecutor::runOp(int op, const LoweringOptions& options) {
    const Operation& o = g_.ops[static_cast<size_t>(op)];
    std::vector<at::Tensor> out;
    LoweringOptions here = options;
    here.device = device_;
    here.batch = batch_;
    here.seq = seq_;
    try {
        out = runOperation(g_, op, inputsOf(op), here);
    } catch (const c10::OutOfMemoryError&) {
        throw;  // the profiler records "does not fit"
    } catch (const c10::Error& e) {
        std::string msg = e.what_without_backtrace();
        throw ExecutionError(o.name + " (" + o.type + "): " + msg.substr(0, msg.find('\n')));
    }
    if (out.size() < o.outputs.size())
        throw ExecutionError(o.name + " (" + o.type + "): produced " + std::to_string(out.size()) + " outputs, the graph expects " +
                             std::to_string(o.outputs.size()));
    for (size_t k = 0; k < o.outputs.size(); ++k)
        if (o.outputs[k] >= 0) values_[static_cast<size_t>(o.outputs[k])] = std::move(out[k]);
}

void GraphExecutor::forward(const LoweringOptions& options, bool keepAll, const std::function<void(int)>& afterOp) {
    for (size_t op = 0; op < g_.ops.size(); ++op) {
        runOp(static_cast<int>(op), options);
        if (!keepAll) releaseDeadAfter(static_cast<int>(op));
        if (afterOp) afterOp(static_cast<int>(op));
    }
}

void GraphExecutor::releaseDeadAfter(int op) {
    // Release what no later operation reads, as eager PyTorch's reference counting would.
    const Operation& o = g_.ops[static_cast<size_t>(op)];
    for (int in : o.inputs)
        if (in >= 0 && g_.values[static_cast<size_t>(in)].producer >= 0 && lastUse_[static_cast<size_t>(in)] == op)
            values_[static_cast<size_t>(in)] = at::Tensor();
    for (int out : o.outputs)
        if (out >= 0 && lastUse_[static_cast<size_t>(out)] < 0) values_[static_cast<size_t>(out)] = at::Tensor();
}

std::vector<int> GraphExecutor::parameterValues() const {
    std::vector<int> idx;
    for (size_t i = 0; i < g_.values.size(); ++i)
        if (g_.values[i].kind == ValueKind::Parameter && values_[i].defined() && values_[i].requires_grad())
            idx.push_back(static_cast<int>(i));
    return idx;
}

std::vector<at::Tensor> GraphExecutor::parameters() const {
    std::vector<at::Tensor> p;
    for (int i : parameterValues()) p.push_back(values_[static_cast<size_t>(i)]);
    return p;
}

void GraphExecutor::clearActivations() {
    for (size_t i = 0; i < g_.values.size(); ++i)
        if (g_.values[i].producer >= 0) values_[i] = at::Tensor();
}

HostTensor toHost(const at::Tensor& t) {
    HostTensor h;
    at::Tensor c = t.detach().to(at::kCPU).contiguous();
    h.dtype = dtypeOf(c.scalar_type());
    h.shape.assign(c.sizes().begin(), c.sizes().end());
    at::Tensor d = c.to(at::kDouble).contiguous();
    const double* p = d.data_ptr<double>();
    h.values.assign(p, p + d.numel());
    return h;
}

at::Tensor fromHost(const HostTensor& h, const std::string& what) {
    int64_t n = 1;
    for (int64_t d : h.shape) {
        if (d < 0) throw ExecutionError(what + ": negative dimension");
        n *= d;
    }
    if (n != static_cast<int64_t>(h.values.size()))
        throw ExecutionError(what + ": " + std::to_string(h.values.size()) + " values for " + std::to_string(n) +
                             " elements");
    at::Tensor d = at::empty(h.shape, at::TensorOptions().dtype(at::kDouble));
    std::copy(h.values.begin(), h.values.end(), d.data_ptr<double>());
    return d.to(scalarTypeOf(h.dtype));
}

}  // namespace ts::torchexec

namespace ts {

bool executionSupported() { return true; }

std::vector<HostTensor> runForward(const Graph& g, const std::map<std::string, HostTensor>& feeds, int64_t batch,
                                   int64_t seq) {
    at::NoGradGuard noGrad;
    torchexec::GraphExecutor ex(g, batch, seq > 0 ? seq : g.defaults.seq, at::Device(at::kCPU), 0);
    try {
        ex.materializeLeaves(feeds);
        ex.forward(torchexec::LoweringOptions{.training = false});
    } catch (const c10::Error& e) {
        std::string msg = e.what_without_backtrace();
        throw ExecutionError(g.source + ": " + msg.substr(0, msg.find('\n')));
    }
    std::vector<HostTensor> out;
    for (int v : g.outputs) out.push_back(torchexec::toHost(ex.value(v)));
    return out;
}

}  // namespace ts
