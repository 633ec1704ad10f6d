// profileModel: one training profile of a graph at one or more batch sizes. For each batch size:
// memory by category (measured by allocator counters around each phase of a first iteration), the
// whole iteration and its phases (timed after warm-up until stable), each layer in isolation, and
// for the last batch size that fits a traced iteration for the timeline.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <array>

#include <chrono>
#include <ctime>
#include <optional>
#include <set>

#include "device_runtime.h"
#include "graph_executor.h"
#include "iteration_trace.h"
#include "layer_profiler.h"
#include "profiling/kernel_tracer.h"
#include "repeat_timer.h"
#include "training_step.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/ops.h"

namespace ts {
namespace {

using namespace torchexec;

std::string utcNow() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

bool isCancelled(const ProfileOptions& o) { return o.cancelled && o.cancelled->load(); }

// The profile so far, runs ascending, to the caller's runFinished.
void reportRuns(const Profile& p, const ProfileOptions& o) {
    if (!o.runFinished) return;
    Profile sofar = p;
    std::sort(sofar.runs.begin(), sofar.runs.end(),
              [](const ProfileRun& a, const ProfileRun& b) { return a.batch < b.batch; });
    o.runFinished(sofar);
}

void report(const ProfileOptions& o, const std::string& stage, int done, int total) {
    if (o.progress) o.progress(ProfileProgress{stage, done, total});
}

class BatchProfiler {
public:
    BatchProfiler(const Graph& g, DeviceRuntime& rt, const ProfileOptions& o, profiling::KernelTracer* tracer)
        : g_(g), rt_(rt), o_(o), tracer_(tracer), gradMask_(requiresGrad(g)) {}

    // Profiles one batch size; out of memory is recorded in the run, other errors propagate.
    ProfileRun run(int64_t batch, int64_t seq, Timeline* timeline, std::string& lossDescription) {
        ProfileRun r;
        r.batch = batch;
        auto begin = std::chrono::steady_clock::now();
        try {
            profile(r, batch, seq, timeline, lossDescription);
        } catch (const std::exception& e) {
            if (!isOutOfMemory(e)) throw;
            r.fits = false;
            r.error = "out of memory at batch " + std::to_string(batch) + ": " + shortMessage(e);
        }
        rt_.releaseCachedMemory();
        r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        return r;
    }

private:
    void profile(ProfileRun& r, int64_t batch, int64_t seq, Timeline* timeline, std::string& lossDescription) {
        const std::string stage = "batch " + std::to_string(batch);
        rt_.releaseCachedMemory();
        const int64_t base = rt_.memory().allocated;
        base_ = base;
        GraphExecutor ex(g_, batch, seq, rt_.device(), o_.seed + static_cast<uint64_t>(batch));
        ex.materializeLeaves({ValueKind::Parameter, ValueKind::Buffer, ValueKind::Constant});
        const int64_t afterWeights = rt_.memory().allocated;
        ex.materializeLeaves({ValueKind::Input});
        at::Generator labelGen = at::detail::createCPUGenerator(o_.seed + 7);
        LossFunction loss(g_, batch, seq, rt_.device(), labelGen);
        lossDescription = loss.description();
        const int64_t afterInputs = rt_.memory().allocated;
        MemoryProfile& m = r.memory;
        m.weights = static_cast<double>(afterWeights - base);
        m.inputs = static_cast<double>(afterInputs - afterWeights);

        TrainingStep step(ex, o_.optimizer, o_.precision);
        report(o_, stage + ": first iteration (memory)", 0, 1);
        measureMemory(ex, loss, step, r);
        if (isCancelled(o_)) return markCancelled(r);

        report(o_, stage + ": iteration", 0, 1);
        measureIteration(ex, loss, step, r);
        if (isCancelled(o_)) return markCancelled(r);

        if (o_.perLayer) {
            measureLayers(ex, r, stage);
            if (isCancelled(o_)) return markCancelled(r);
        }
        addParts(r);
        if (timeline) *timeline = traceIteration(ex, loss, step, rt_, o_.precision, tracer_);
    }

    static void markCancelled(ProfileRun& r) {
        r.complete = false;
        r.error = "cancelled";
    }

    // A first iteration with allocator counters read between phases; then, once the optimizer's state
    // exists, the peak of a steady iteration.
    void measureMemory(GraphExecutor& ex, const LossFunction& loss, TrainingStep& step, ProfileRun& r) {
        MemoryProfile& m = r.memory;
        const size_t nOps = g_.ops.size();
        std::vector<std::optional<c10::weak_intrusive_ptr<c10::StorageImpl>>> outputs(nOps);
        // fp16 loss scaling skips steps whose gradients overflow (the optimizer's state then does not
        // exist yet): iterate until a step is taken, as real training does.
        for (int attempt = 0; attempt < 32; ++attempt) {
            step.zeroGrad();
            rt_.synchronize();
            const int64_t before = rt_.memory().allocated;
            at::Tensor l;
            {
                PrecisionScope precision(o_.precision, ex.device());
                ex.forward(LoweringOptions{.training = true}, false, [&](int op) {
                    if (attempt > 0) return;
                    for (int v : g_.ops[static_cast<size_t>(op)].outputs) {
                        if (v < 0 || !ex.value(v).defined() || !ex.value(v).has_storage()) continue;
                        outputs[static_cast<size_t>(op)] = ex.value(v).storage().getWeakStorageImpl();
                        break;
                    }
                });
                l = loss(ex);
            }
            ex.clearActivations();
            rt_.synchronize();
            const int64_t afterForward = rt_.memory().allocated;
            if (attempt == 0) {
                m.activations = std::max(0.0, static_cast<double>(afterForward - before) - static_cast<double>(l.nbytes()));
                attributeSavedOutputs(outputs);
            }
            step.backward(l);
            l = at::Tensor();
            rt_.synchronize();
            const int64_t afterBackward = rt_.memory().allocated;
            if (attempt == 0) m.gradients = std::max<double>(0, static_cast<double>(afterBackward - before));
            step.step();
            rt_.synchronize();
            if (!step.lastStepSkipped()) {
                m.optimizerState = std::max<double>(0, static_cast<double>(rt_.memory().allocated - afterBackward));
                break;
            }
        }
        // Steady state: the optimizer's state exists; gradients are freed by zero_grad(set_to_none).
        step.zeroGrad();
        rt_.synchronize();
        rt_.resetPeak();
        const int64_t base = base_;
        oneIteration(ex, loss, step);
        rt_.synchronize();
        MemoryCounters c = rt_.memory();
        m.peakAllocated = std::max<double>(0, static_cast<double>(c.peakAllocated - base));
        m.peakReserved = rt_.device().is_cuda() ? static_cast<double>(c.peakReserved) : m.peakAllocated;
        m.cudaContext = static_cast<double>(rt_.memoryOutsideAllocator());
        double steady = m.weights + m.inputs + m.optimizerState + m.activations + m.gradients;
        m.workspace = std::max(0.0, m.peakAllocated - steady);
    }

    // Which operations' outputs are still alive after the forward pass (autograd saved them): their
    // bytes count as that operation's saved activations.
    void attributeSavedOutputs(const std::vector<std::optional<c10::weak_intrusive_ptr<c10::StorageImpl>>>& outputs) {
        std::set<const c10::StorageImpl*> seen;
        savedOutputBytes_.assign(g_.ops.size(), 0.0);
        for (size_t op = 0; op < outputs.size(); ++op) {
            if (!outputs[op]) continue;
            auto strong = outputs[op]->lock();
            if (strong && seen.insert(strong.get()).second) savedOutputBytes_[op] = static_cast<double>(strong->nbytes());
        }
    }

    void oneIteration(GraphExecutor& ex, const LossFunction& loss, TrainingStep& step) {
        step.zeroGrad();
        at::Tensor l;
        {
            PrecisionScope precision(o_.precision, ex.device());
            ex.forward(LoweringOptions{.training = true});
            l = loss(ex);
        }
        ex.clearActivations();
        step.backward(l);
        step.step();
    }

    void measureIteration(GraphExecutor& ex, const LossFunction& loss, TrainingStep& step, ProfileRun& r) {
        RepeatTimer timer(rt_, o_);
        r.iteration = timer.measure({}, [&] { oneIteration(ex, loss, step); });
        // The phases, each timed on its own (the device is synchronized between them).
        std::vector<double> zero, fwd, lossMs, bwd, opt;
        int n = std::max(o_.minRepeats, std::min(r.iteration.repeats, 20));
        at::Tensor l;
        for (int i = 0; i < n && !isCancelled(o_); ++i) {
            zero.push_back(rt_.timeMs([&] { step.zeroGrad(); }));
            {
                PrecisionScope precision(o_.precision, ex.device());
                fwd.push_back(rt_.timeMs([&] { ex.forward(LoweringOptions{.training = true}); }));
                lossMs.push_back(rt_.timeMs([&] { l = loss(ex); }));
            }
            ex.clearActivations();
            bwd.push_back(rt_.timeMs([&] { step.backward(l); }));
            l = at::Tensor();
            opt.push_back(rt_.timeMs([&] { step.step(); }));
        }
        phases_ = {timingStat(zero), timingStat(fwd), timingStat(lossMs), timingStat(bwd), timingStat(opt)};
    }

    void measureLayers(GraphExecutor& ex, ProfileRun& r, const std::string& stage) {
        LayerProfiler layers(rt_, o_, tracer_);
        c10::NoGradGuard noGrad;  // the walk only provides each layer's inputs
        PrecisionScope precision(o_.precision, ex.device());
        const int total = static_cast<int>(g_.ops.size());
        for (int op = 0; op < total; ++op) {
            if (isCancelled(o_)) break;
            report(o_, stage + ": layers", op, total);
            LayerProfile lp;
            {
                c10::AutoGradMode grad(true);
                lp = layers.measure(ex, op, gradMask_);
            }
            if (op < static_cast<int>(savedOutputBytes_.size())) lp.savedBytes += savedOutputBytes_[static_cast<size_t>(op)];
            r.layers.push_back(std::move(lp));
            ex.runOp(op, LoweringOptions{.training = true});
            ex.releaseDeadAfter(op);
        }
        ex.clearActivations();
        report(o_, stage + ": layers", total, total);
    }

    // The iteration broken down into named parts that sum to its median.
    void addParts(ProfileRun& r) {
        double layersFwd = 0, layersBwd = 0;
        for (const LayerProfile& lp : r.layers) {
            layersFwd += lp.forward.medianMs;
            layersBwd += lp.backward.medianMs;
        }
        const TimingStat &zero = phases_[0], &fwd = phases_[1], &lossMs = phases_[2], &bwd = phases_[3], &opt = phases_[4];
        auto& p = r.parts;
        p.clear();
        if (!r.layers.empty()) {
            p.push_back({"layers forward (sum of isolated layers)", layersFwd});
            p.push_back({"forward outside layers (launch gaps, allocator, graph walk)", fwd.medianMs - layersFwd});
        } else {
            p.push_back({"forward", fwd.medianMs});
        }
        p.push_back({"loss", lossMs.medianMs});
        if (!r.layers.empty()) {
            p.push_back({"layers backward (sum of isolated layers)", layersBwd});
            p.push_back({"backward outside layers (autograd engine, gradient accumulation, gaps)",
                         bwd.medianMs - layersBwd});
        } else {
            p.push_back({"backward", bwd.medianMs});
        }
        p.push_back({"optimizer step", opt.medianMs});
        p.push_back({"zero grad", zero.medianMs});
        double phases = zero.medianMs + fwd.medianMs + lossMs.medianMs + bwd.medianMs + opt.medianMs;
        p.push_back({"unattributed (overlap between phases, synchronization)", r.iteration.medianMs - phases});
    }

    const Graph& g_;
    DeviceRuntime& rt_;
    const ProfileOptions& o_;
    profiling::KernelTracer* tracer_;
    std::vector<bool> gradMask_;
    std::vector<double> savedOutputBytes_;
    int64_t base_ = 0;  // allocated bytes before the run's tensors existed
    std::array<TimingStat, 5> phases_;
};

std::vector<int64_t> autoBatchSizes(int64_t cap) {
    std::vector<int64_t> b;
    for (int64_t n = 1; n <= cap; n *= 2) b.push_back(n);
    return b;
}

}  // namespace

ProfileResult profileModel(const Graph& g, const ProfileOptions& o) {
    if (auto why = unprofilableReason(o.precision, o.optimizer)) throw ExecutionError(*why);
    ProfileResult result;
    Profile& p = result.profile;
    std::unique_ptr<DeviceRuntime> rt = DeviceRuntime::open(o.device);
    rt->describe(p.environment);
    p.environment.startedAt = utcNow();
    if (rt->isCuda()) p.environment.gpu = o.deviceProperties;
    int64_t seq = o.seq > 0 ? o.seq : g.defaults.seq;
    p.scenario.model = o.modelSpec.empty() ? g.source : o.modelSpec;
    p.scenario.modelName = g.name;
    p.scenario.seq = seq;
    p.scenario.precision = trainingPrecisionName(o.precision);
    p.scenario.optimizer = optimizerName(o.optimizer);
    p.scenario.cudnnBenchmark = rt->isCuda();
    if (rt->isCuda()) at::globalContext().setBenchmarkCuDNN(true);  // as in training
    if (!rt->isCuda() && o.precision == TrainingPrecision::Tf32)
        p.notes.push_back("tf32 changes nothing on the CPU: the CPU run is fp32");

    std::unique_ptr<profiling::KernelTracer> tracer;
    if (!rt->isCuda()) {
        p.kernelsMissingReason = "kernels are recorded on a GPU only (this is a CPU profile)";
    } else if (!o.recordKernels) {
        p.kernelsMissingReason = "kernel recording was turned off";
    } else {
        tracer = std::make_unique<profiling::KernelTracer>();
        if (tracer->start()) {
            p.kernelsRecorded = true;
            p.environment.software.cupti = tracer->cuptiVersion();
        } else {
            p.kernelsMissingReason = tracer->reason();
            tracer.reset();
        }
    }

    for (int i = 0; i < static_cast<int>(g.ops.size()); ++i)
        if (!torchexec::canExecute(g.ops[static_cast<size_t>(i)].type))
            throw ExecutionError(g.source + ": operation " + g.ops[static_cast<size_t>(i)].name + " (" +
                                 g.ops[static_cast<size_t>(i)].type + ") cannot be executed by TrainScope yet");

    std::vector<int64_t> batches = o.batches;
    if (o.autoBatch) batches = autoBatchSizes(o.autoBatchCap > 0 ? o.autoBatchCap : (rt->isCuda() ? 4096 : 8));
    if (batches.empty()) batches.push_back(g.defaults.batch);

    BatchProfiler profiler(g, *rt, o, tracer.get());
    int64_t lastFit = 0;
    for (size_t i = 0; i < batches.size(); ++i) {
        Timeline timeline;
        try {
            ProfileRun run = profiler.run(batches[i], seq, &timeline, p.scenario.loss);
            bool fits = run.fits, complete = run.complete;
            p.runs.push_back(std::move(run));
            reportRuns(p, o);
            if (fits && complete) {
                result.timeline = std::move(timeline);
                lastFit = batches[i];
            }
            if (!complete) break;
            if (!fits && o.autoBatch) {
                // One more between the last size that fitted and the first that did not.
                int64_t mid = (lastFit + batches[i]) / 2;
                if (lastFit > 0 && mid > lastFit && mid < batches[i]) {
                    ProfileRun between = profiler.run(mid, seq, &timeline, p.scenario.loss);
                    if (between.fits && between.complete) result.timeline = std::move(timeline);
                    p.runs.push_back(std::move(between));
                    reportRuns(p, o);
                }
                break;
            }
        } catch (const ExecutionError& e) {
            p.complete = false;
            p.incompleteReason = "batch " + std::to_string(batches[i]) + ": " + e.what();
            break;
        } catch (const c10::Error& e) {
            p.complete = false;
            p.incompleteReason = "batch " + std::to_string(batches[i]) + ": " + shortMessage(e);
            break;
        }
    }
    std::sort(p.runs.begin(), p.runs.end(), [](const ProfileRun& a, const ProfileRun& b) { return a.batch < b.batch; });
    for (const ProfileRun& r : p.runs)
        if (!r.complete) {
            p.complete = false;
            if (p.incompleteReason.empty())
                p.incompleteReason = "cancelled during batch " + std::to_string(r.batch) + "; what was measured is kept";
        }
    if (isCancelled(o) && p.incompleteReason.empty()) {
        p.complete = false;
        p.incompleteReason = "cancelled before every batch size was profiled";
    }
    return result;
}

}  // namespace ts
