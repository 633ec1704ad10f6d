// A recorded job at another batch size or precision: every operator's shapes and types rewritten
// (trace_batch.cpp, then autocast's rules here), its work at the new ones, and the casts autocast
// adds or removes (trace_change.h says what is assumed).
#include "trainscope/predictors/trace/trace_change.h"

#include <cmath>
#include <cstdio>

#include "trace_change_internal.h"
#include "trainscope/core/errors.h"
#include "trainscope/predictors/iteration/operation_times.h"

namespace ts::predictors {
namespace {

bool isAmp(TrainingPrecision p) {
    return p == TrainingPrecision::AmpFp16 || p == TrainingPrecision::AmpBf16;
}

bool isCastName(const std::string& op) {
    return op == "aten::to" || op == "aten::_to_copy" || op == "aten::copy_";
}

// A copy between fp32 and a 16-bit type: what autocast's casts run (aten::to -> _to_copy -> copy_).
bool isCast(const std::string& op, const OperatorShapes& s) {
    if (op != "aten::copy_") return false;
    bool fp32 = false, sixteen = false;
    for (size_t i = 0; i < s.dims.size(); ++i)
        if (s.tensor(i)) fp32 |= isFloat32Type(s.type(i)), sixteen |= is16BitFloatType(s.type(i));
    return fp32 && sixteen;
}

bool isGradScaler(const std::string& op) {
    return op.find("_amp_") !=
           std::string::npos;  // aten::_amp_foreach_non_finite_check_and_unscale_, ..._update_scale_
}

std::string megabytes(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
    return buf;
}

// Autocast's element sizes and casts for the new precision, on shapes already at the new batch.
class AutocastRewrite {
public:
    AutocastRewrite(const KinetoTrace& t, TraceChangeWork& w, std::vector<std::optional<OperatorShapes>>& shapes,
                    const std::vector<std::optional<OperatorShapes>>& recorded, const std::set<Shape>& parameters,
                    const std::vector<long>& firstKernel)
        : t_(t), w_(w), shapes_(shapes), recorded_(recorded), parameters_(parameters), firstKernel_(firstKernel) {
        sixteen_ = w.precision == TrainingPrecision::AmpBf16 ? "c10::BFloat16" : "c10::Half";
        math16_ = w.precision == TrainingPrecision::AmpBf16 ? ComputePrecision::Bf16 : ComputePrecision::Fp16;
    }

    void run() {
        if (isAmp(w_.precision) && isAmp(w_.recorded.precision))
            switchType();
        else if (isAmp(w_.precision))
            turnOn();
        else
            turnOff();
        unlistedGemms();
    }

private:
    // Whether input j of operator i is a parameter: by its recorded shape (a parameter's shape does
    // not change with the batch; an activation's may meet one's at another batch).
    bool parameter(size_t i, size_t j) const {
        const OperatorShapes* s = recorded_[i] ? &*recorded_[i] : nullptr;
        return s && j < s->dims.size() && parameters_.count(s->dims[j]) > 0;
    }

    // GEMM, convolution and attention kernels launched by an operator autocast's lists do not name
    // (torch.compile's CompiledFunction, an autograd CppNode, a custom op): every ATen GEMM,
    // convolution and attention is on the lower-precision list, so they move as autocast runs them.
    void unlistedGemms() {
        const ComputePrecision math = isAmp(w_.precision) ? math16_ : ComputePrecision::Fp32;
        double us = 0;
        std::set<int32_t> ops;
        for (const TraceKernel& k : t_.kernels) {
            if (k.device != t_.gpuDevice || k.op < 0 || size_t(k.op) >= w_.operators.size()) continue;
            if (k.kind != KernelClass::Gemm && k.kind != KernelClass::Conv && k.kind != KernelClass::Attention)
                continue;
            OperatorChange& c = w_.operators[size_t(k.op)];
            if (c.removed || (c.math && !ops.count(k.op))) continue;
            c.math = math;
            ops.insert(k.op);
            us += k.durationUs;
        }
        if (ops.empty()) return;
        const double steps = std::max<double>(1, double(t_.steps.size()));
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f ms per step", us / 1000 / steps);
        w_.notes.push_back("GEMM, convolution and attention kernels of " + std::to_string(ops.size()) +
                           " operators autocast's lists do not name (torch.compile's CompiledFunction, autograd "
                           "CppNodes, custom ops; " +
                           buf +
                           " measured) moved as autocast runs every ATen GEMM, convolution and attention; "
                           "their other kernels keep their bytes");
    }

    // fp16 <-> bf16: the same bytes and casts, the other arithmetic.
    void switchType() {
        for (size_t i = 0; i < shapes_.size(); ++i) {
            if (!shapes_[i]) continue;
            for (std::string& type : shapes_[i]->types)
                if (is16BitFloatType(type)) type = sixteen_;
            if (autocastRuleOfAtenOp(t_.str(t_.operators[i].name)) == AutocastRule::Lower)
                w_.operators[i].math = math16_;
        }
    }

    // Autocast on, in operator order per thread: the precision of the tensors a non-listed operator
    // gets is that of the last listed operator's output before it (fp32 until the first), except
    // that a reduction's fp32 result (a loss, a bias gradient) is not taken as the next input.
    // Autocast is off in backward: there only the gradients of the forward casts are cast back,
    // which the same rule counts at the backward GEMMs (a parameter's gradient, a gradient that
    // arrives in fp32), and fp32-list operators cast nothing.
    void turnOn() {
        const StreamModel& model = StreamModel::shipped();
        const std::vector<bool> backward = inBackward();
        int32_t thread = -1;
        bool sixteenBit = false;
        for (size_t i = 0; i < shapes_.size(); ++i) {
            const TraceOperator& op = t_.operators[i];
            if (op.thread != thread) thread = op.thread, sixteenBit = false;
            if (!shapes_[i] || firstKernel_[i] < 0) continue;
            OperatorShapes& s = *shapes_[i];
            const std::string& name = t_.str(op.name);
            AutocastRule rule = autocastRuleOfAtenOp(name);
            const bool reduction = rule == AutocastRule::Fp32 && isReduction(name);
            if (reduction && backward[i]) rule = AutocastRule::Follow;  // no autocast: it runs in what it gets
            AddedWork cast;
            for (size_t j = 0; j < s.dims.size(); ++j) {
                if (!s.tensor(j) || !isFloat32Type(s.type(j))) continue;
                const bool weight = parameter(i, j);
                const double elements = product(s.dims[j]);
                if (rule == AutocastRule::Lower) {
                    // A parameter is cast for each use (its cached copy and, in backward, its
                    // gradient back); an activation when it arrives in fp32.
                    if (weight || !sixteenBit) cast.bytes += 6 * elements, ++cast.kernels;
                    s.types[j] = sixteen_;
                } else if (rule == AutocastRule::Fp32) {
                    if (!weight && sixteenBit && !backward[i]) cast.bytes += 6 * elements, ++cast.kernels;
                } else if (!weight && sixteenBit) {
                    s.types[j] = sixteen_;
                }
            }
            if (rule == AutocastRule::Lower) w_.operators[i].math = math16_, sixteenBit = true;
            if (rule == AutocastRule::Fp32 && !reduction) sixteenBit = false;
            if (cast.kernels > 0) {
                AddedWork& a = w_.addedBefore[size_t(firstKernel_[i])];
                a.bytes += cast.bytes;
                a.kernels += cast.kernels;
                w_.castsAdded += cast.kernels;
                castBytes_ += cast.bytes;
                w_.hostExtraUs.emplace_back(op.startUs, cast.kernels * model.hostCastUs);
            }
        }
        addGradScaler(model);
        const double steps = std::max<double>(1, double(t_.steps.size()));
        w_.notes.push_back(std::to_string(int64_t(w_.castsAdded / steps + 0.5)) + " autocast casts per step added (" +
                           megabytes(castBytes_ / steps) + " read and written per step, " +
                           std::to_string(int(model.hostCastUs)) + " us of host time each, assumed)");
    }

    // Whether each operator runs in backward: under an autograd node (evaluate_function, XBackward).
    std::vector<bool> inBackward() const {
        const std::vector<int32_t> parents = operatorParents(t_);
        std::vector<bool> out(parents.size(), false);
        for (size_t i = 0; i < parents.size(); ++i) {
            const std::string& name = t_.str(t_.operators[i].name);
            out[i] = name.find("autograd::engine") != std::string::npos || name.find("Backward") != std::string::npos ||
                     (parents[i] >= 0 && out[size_t(parents[i])]);  // parents come first
        }
        return out;
    }

    // fp32-list operators whose small result (a loss, a bias gradient) is not the next one's input.
    static bool isReduction(const std::string& op) {
        for (const char* r :
             {"aten::sum", "aten::norm", "aten::linalg_vector_norm", "aten::logsumexp", "aten::cross_entropy_loss"})
            if (op == r) return true;
        return op.rfind("aten::nll_loss", 0) == 0;
    }

    // The grad scaler's unscale of every gradient before the optimizer step: it reads and writes
    // each fp32 gradient (8 bytes per parameter) in one pass, as the stream model counts it.
    void addGradScaler(const StreamModel& model) {
        std::vector<double> elements(std::max<size_t>(1, t_.steps.size()), 0), lastEnd(elements.size(), -1);
        for (const TraceOperator& op : t_.operators) {
            if (!isAccumulateGrad(t_.str(op.name))) continue;
            const std::optional<OperatorShapes> s = operatorShapesOf(t_, op);
            const size_t step = t_.steps.empty() ? 0 : size_t(std::max(0, op.step));
            if (!s || !s->tensor(0) || step >= elements.size() || (!t_.steps.empty() && op.step < 0)) continue;
            elements[step] += product(s->dims[0]);
            lastEnd[step] = std::max(lastEnd[step], op.startUs + op.durationUs);
        }
        bool added = false;
        for (size_t step = 0; step < elements.size(); ++step) {
            if (!(elements[step] > 0)) continue;
            for (size_t k = 0; k < t_.kernels.size(); ++k) {
                const TraceKernel& kernel = t_.kernels[k];
                if (kernel.device != t_.gpuDevice || kernel.launchUs < lastEnd[step]) continue;
                if (!t_.steps.empty() && kernel.step != int32_t(step)) continue;
                AddedWork& a = w_.addedBefore[k];
                a.bytes += 8 * elements[step];
                a.kernels += 1;
                w_.hostExtraUs.emplace_back(kernel.launchUs, model.hostOptimizerPassUs);
                added = true;
                break;
            }
        }
        w_.notes.push_back(added ? "the grad scaler's unscale added before the optimizer step (8 bytes per parameter, "
                                   "one pass, as the stream model counts it)"
                                 : "the grad scaler's unscale is not added: the trace records no AccumulateGrad "
                                   "to count the parameters, or no GPU work after it");
    }

    // Autocast off: 16-bit tensors become fp32, the recorded casts and grad-scaler operators go,
    // with the host time of the outermost operator around each.
    void turnOff() {
        const std::vector<int32_t> parents = operatorParents(t_);
        std::set<int32_t> hostRemoved;
        for (size_t i = 0; i < shapes_.size(); ++i) {
            const TraceOperator& op = t_.operators[i];
            const std::string& name = t_.str(op.name);
            if (isGradScaler(name) || (shapes_[i] && isCast(name, *shapes_[i]))) {
                w_.operators[i].removed = true;
                ++w_.operatorsRemoved;
                int32_t top = int32_t(i);
                while (parents[size_t(top)] >= 0) {
                    const std::string& parent = t_.str(t_.operators[size_t(parents[size_t(top)])].name);
                    if (!isCastName(parent) && !isGradScaler(parent)) break;
                    top = parents[size_t(top)];
                }
                const TraceOperator& outer = t_.operators[size_t(top)];
                if (hostRemoved.insert(top).second)
                    w_.hostExtraUs.emplace_back(outer.startUs + outer.durationUs, -outer.durationUs);
                continue;
            }
            if (!shapes_[i]) continue;
            for (std::string& type : shapes_[i]->types)
                if (is16BitFloatType(type)) type = "float";
            if (autocastRuleOfAtenOp(name) == AutocastRule::Lower) w_.operators[i].math = ComputePrecision::Fp32;
        }
        w_.notes.push_back(std::to_string(w_.operatorsRemoved) +
                           " fp32/16-bit cast and grad-scaler operators removed with their GPU and host time (every "
                           "such copy is taken as autocast's)");
    }

    const KinetoTrace& t_;
    TraceChangeWork& w_;
    std::vector<std::optional<OperatorShapes>>& shapes_;
    const std::vector<std::optional<OperatorShapes>>& recorded_;
    const std::set<Shape>& parameters_;
    const std::vector<long>& firstKernel_;
    std::string sixteen_;
    ComputePrecision math16_ = ComputePrecision::Fp16;
    double castBytes_ = 0;
};

}  // namespace

TraceChangeWork analyseTraceChange(const KinetoTrace& t, const TraceChange& change) {
    TraceChangeWork w;
    w.change = change;
    w.recorded = recordedTracePrecision(t);
    w.precision = changedPrecision(change, w.recorded.precision);
    const bool ampBefore = isAmp(w.recorded.precision), ampAfter = isAmp(w.precision);
    w.autocastChanged = ampBefore != ampAfter || (ampAfter && w.precision != w.recorded.precision);
    if (change.batch < 0) throw ModelError("--batch", "a batch size is a positive number");
    if (!w.changesWork()) return w;

    const std::string what =
        change.batch > 0 ? w.autocastChanged ? "its batch size and precision" : "its batch size" : "its precision";
    if (!t.recordShapes)
        throw ModelError(t.source, "was recorded without record_shapes: " + what +
                                       " cannot be changed (the operators' input shapes and types say which tensors "
                                       "carry the batch and what autocast would cast; record with "
                                       "torch.profiler.profile(record_shapes=True))");
    if (w.autocastChanged && w.recorded.halfWeights)
        throw ModelError(t.source,
                         "its parameters are 16-bit themselves (model.half(), not autocast): its precision "
                         "cannot be changed as autocast would");
    const std::set<Shape> parameters = parameterShapes(t);
    BatchRewrite rewrite;
    double ratio = 1;
    if (change.batch > 0) {
        w.batch = findTraceBatch(t);
        if (w.batch.batch <= 0) throw ModelError(t.source, w.batch.problem + ": its batch size cannot be changed");
        rewrite = {double(w.batch.batch), double(change.batch), w.batch.tokenSizes, &parameters};
        ratio = double(change.batch) / double(w.batch.batch);
        w.batchRatio = ratio;
        w.notes.push_back(w.batch.how);
    }
    if (w.autocastChanged) w.notes.push_back("recorded in " + w.recorded.how);

    const size_t n = t.operators.size();
    std::vector<long> firstKernel(n, -1);  // each operator's first GPU activity
    for (size_t k = 0; k < t.kernels.size(); ++k) {
        const TraceKernel& kernel = t.kernels[k];
        if (kernel.device == t.gpuDevice && kernel.op >= 0 && size_t(kernel.op) < n &&
            firstKernel[size_t(kernel.op)] < 0)
            firstKernel[size_t(kernel.op)] = long(k);
    }
    std::vector<std::optional<OperatorShapes>> recorded(n), changed(n);
    w.operators.resize(n);
    int64_t batched = 0, launching = 0;
    for (size_t i = 0; i < n; ++i) {
        recorded[i] = operatorShapesOf(t, t.operators[i]);
        if (!recorded[i]) continue;
        changed[i] = recorded[i];
        if (change.batch > 0) {
            const BatchRewritten r = rewriteBatch(t.str(t.operators[i].name), *changed[i], rewrite);
            w.operators[i].batched = r.batched;
            w.operators[i].reductionBatched = r.reductionBatched;
        }
        if (firstKernel[i] >= 0) ++launching, batched += w.operators[i].batched ? 1 : 0;
    }
    if (w.autocastChanged) AutocastRewrite(t, w, changed, recorded, parameters, firstKernel).run();

    for (size_t i = 0; i < n; ++i) {
        if (!recorded[i]) continue;
        const std::string& name = t.str(t.operators[i].name);
        OperatorChange& c = w.operators[i];
        const std::optional<OperatorWork> before = operatorWork(name, *recorded[i]);
        c.work = operatorWork(name, *changed[i]);
        const double byBatch = c.batched ? ratio : 1;
        // Shapes too large for doubles (a hostile trace) give no ratio: the batch's instead.
        auto ratioOf = [&](double after, double was) {
            const double r = was > 0 ? after / was : byBatch;
            return std::isfinite(r) && r >= 0 ? r : byBatch;
        };
        c.bytesRatio = before && c.work ? ratioOf(c.work->bytes, before->bytes) : byBatch;
        c.computeRatio = before && c.work && before->flops > 0 ? ratioOf(c.work->flops, before->flops) : byBatch;
        c.gridRatio = c.batched && !c.reductionBatched ? ratio : 1;
        if (c.work && !(std::isfinite(c.work->bytes) && std::isfinite(c.work->flops))) c.work.reset();
    }
    if (change.batch > 0)
        w.notes.push_back(std::to_string(batched) + " of the " + std::to_string(launching) +
                          " operators that launched GPU work carry the batch and move with the work of their new "
                          "shapes; the others (parameters, optimizer steps, parameter collectives) keep theirs; the "
                          "host keeps its measured time per operator");
    return w;
}

}  // namespace ts::predictors
