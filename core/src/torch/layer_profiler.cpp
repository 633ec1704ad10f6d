#include "layer_profiler.h"

#include <torch/csrc/autograd/autograd.h>

#include <set>

#include "repeat_timer.h"
#include "training_step.h"

namespace ts::torchexec {
namespace {

// Bytes of the distinct storages behind `tensors` that are still alive.
double aliveStorageBytes(const std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>>& storages) {
    std::set<const c10::StorageImpl*> seen;
    double bytes = 0;
    for (const auto& w : storages) {
        auto strong = w.lock();
        if (strong && seen.insert(strong.get()).second) bytes += static_cast<double>(strong->nbytes());
    }
    return bytes;
}

}  // namespace

LayerProfiler::LayerProfiler(DeviceRuntime& rt, const ProfileOptions& options, profiling::KernelTracer* tracer)
    : rt_(rt), o_(options), tracer_(tracer && tracer->active() ? tracer : nullptr) {}

LayerProfile LayerProfiler::measure(const GraphExecutor& ex, int op, const std::vector<bool>& gradMask) {
    const Graph& g = ex.graph();
    const Operation& o = g.ops[static_cast<size_t>(op)];
    LayerProfile lp;
    lp.op = op;
    lp.name = o.name;
    lp.type = o.type;
    lp.modulePath = o.modulePath;

    // Leaves of an isolated autograd graph: the real inputs, detached, needing a gradient where the
    // training graph needs one (activations on a trainable path, parameters).
    std::vector<at::Tensor> inputs;
    std::vector<at::Tensor> needGrad;
    for (int v : o.inputs) {
        if (v < 0 || !ex.value(v).defined()) {
            inputs.emplace_back();
            continue;
        }
        at::Tensor t = ex.value(v).detach();
        if (gradMask[static_cast<size_t>(v)] && t.is_floating_point()) {
            t.requires_grad_(true);
            needGrad.push_back(t);
        }
        inputs.push_back(t);
    }
    LoweringOptions lowering;
    lowering.training = true;
    lowering.device = ex.device();
    lowering.batch = ex.batch();
    lowering.seq = ex.seq();
    PrecisionScope precision(o_.precision, ex.device());
    RepeatTimer timer(rt_, o_);

    // One call, to learn the outputs' shapes and what the operation keeps for backward.
    {
        int64_t before = rt_.memory().allocated;
        std::vector<at::Tensor> outs = runOperation(g, op, inputs, lowering);
        if (!outs.empty() && outs[0].defined()) lp.outputShape.assign(outs[0].sizes().begin(), outs[0].sizes().end());
        std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> storages;
        std::vector<std::decay_t<decltype(outs[0].grad_fn())>> graphs;  // keeps the saved tensors alive
        for (const at::Tensor& t : outs)
            if (t.defined()) {
                lp.outputBytes += static_cast<double>(t.nbytes());
                if (t.has_storage()) storages.push_back(t.storage().getWeakStorageImpl());
                if (t.grad_fn()) graphs.push_back(t.grad_fn());
                if (t.requires_grad() && t.is_floating_point()) lp.hasBackward = true;
            }
        outs.clear();
        rt_.synchronize();
        double retained = static_cast<double>(rt_.memory().allocated - before);
        // Outputs the operation saved itself are counted with the model's live outputs; the rest
        // of what it retains are extra buffers (masks, indices, statistics).
        lp.savedBytes = std::max(0.0, retained - aliveStorageBytes(storages));
    }
    if (needGrad.empty()) lp.hasBackward = false;

    if (tracer_) tracer_->collect();  // drop what earlier work launched
    int calls = 0;
    lp.forward = timer.measure({}, [&] { runOperation(g, op, inputs, lowering); }, &calls);
    if (tracer_) lp.forwardKernels = profiling::summarizeKernels(tracer_->collect(), std::max(1, calls));

    if (lp.hasBackward && !(o_.cancelled && o_.cancelled->load())) {
        std::vector<at::Tensor> outputs, gradOutputs;
        // Kernels of the untimed forward calls are told apart by time: only those launched inside
        // a backward window are the backward's.
        std::vector<std::pair<uint64_t, uint64_t>> windows;
        auto setup = [&] {
            if (tracer_ && !windows.empty() && windows.back().second == 0) windows.back().second = tracer_->timestampNs();
            outputs.clear();
            gradOutputs.clear();
            for (at::Tensor& t : runOperation(g, op, inputs, lowering))
                if (t.defined() && t.requires_grad() && t.is_floating_point()) {
                    gradOutputs.push_back(at::randn_like(t));
                    outputs.push_back(std::move(t));
                }
        };
        auto work = [&] {
            if (tracer_) windows.emplace_back(tracer_->timestampNs(), 0);
            torch::autograd::grad(outputs, needGrad, gradOutputs, /*retain_graph=*/false, /*create_graph=*/false,
                                  /*allow_unused=*/true);
        };
        lp.backward = timer.measure(setup, work, &calls);
        rt_.synchronize();
        if (tracer_) {
            if (!windows.empty() && windows.back().second == 0) windows.back().second = tracer_->timestampNs();
            std::vector<profiling::KernelActivity> inside;
            for (auto& k : tracer_->collect())
                for (auto& [start, end] : windows)
                    if (k.startNs >= start && k.startNs < end) {
                        inside.push_back(k);
                        break;
                    }
            lp.backwardKernels = profiling::summarizeKernels(inside, std::max(1, calls));
        }
    }
    return lp;
}

}  // namespace ts::torchexec
