#include "trainscope/predictors/trace/trace_prediction.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "trainscope/core/errors.h"
#include "trainscope/predictors/iteration/operation_times.h"

namespace ts::predictors {
namespace {

bool inSteps(const KinetoTrace& t, const TraceKernel& k) {
    return k.device == t.gpuDevice && (t.steps.empty() || k.step >= 0);
}

}  // namespace

std::string tracePredictionProblem(const KinetoTrace& t, const GpuSpec* origin) {
    if (t.rocm)
        return "was recorded on an AMD GPU: TrainScope's GPU database, occupancy and scaling models are "
               "NVIDIA-only, so its kernels cannot be moved to another GPU (inspect shows what it measured)";
    if (t.kernels.empty() || t.gpuDevice < 0)
        return "holds no GPU activity (a CPU-only trace): there is nothing to move to a GPU";
    if (!origin)
        return "its GPU is not in the GPU database (add it with --gpu-db, docs/gpu-database.md), so its "
               "kernels cannot be moved to another GPU";
    return "";
}

std::optional<Fp32Math> parseFp32Math(const std::string& name) {
    if (name == "as-recorded") return Fp32Math::AsRecorded;
    if (name == "fp32") return Fp32Math::PyTorchDefault;
    if (name == "tf32") return Fp32Math::Tf32;
    if (name == "fp32-strict") return Fp32Math::Strict;
    return std::nullopt;
}

const char* fp32MathName(Fp32Math m) {
    switch (m) {
        case Fp32Math::PyTorchDefault:
            return "fp32";
        case Fp32Math::Tf32:
            return "tf32";
        case Fp32Math::Strict:
            return "fp32-strict";
        case Fp32Math::AsRecorded:
            break;
    }
    return "as-recorded";
}

TracePrediction predictTrace(const KinetoTrace& t, const GpuSpec& origin, const GpuSpec& target,
                             const TraceChange& change, std::shared_ptr<const TraceWork> work) {
    if (std::string why = tracePredictionProblem(t, &origin); !why.empty()) throw ModelError(t.source, why);
    if (!work) work = std::make_shared<const TraceWork>(analyseTraceWork(t, change));
    const TraceChangeWork* changed = work->change.get();
    TracePrediction p;
    p.source = t.source;
    p.originGpu = origin.id;
    p.targetGpu = target.id;
    p.math = change.math;
    p.change = change;
    p.recordedPrecision = changed ? changed->recorded.precision : recordedTracePrecision(t).precision;
    p.precision = changed ? changed->precision : changedPrecision(change, p.recordedPrecision);
    p.recordedBatch = changed ? changed->batch.batch : 0;
    if (changed) p.batchHow = changed->batch.how, p.precisionHow = changed->recorded.how;
    // Autocast in a type the target lacks is refused (bf16 before Ampere); FP32 work falls back
    // from TF32 to FP32 as it does without a change.
    const bool amp = p.precision == TrainingPrecision::AmpFp16 || p.precision == TrainingPrecision::AmpBf16;
    if (changed && changed->autocastChanged && amp)
        if (auto why = unsupportedReason(target, p.precision)) throw ModelError(target.id, *why);
    const TraceKernelMover mover(t, origin, target, change.math, work);
    p.floorOriginUs = mover.originFloorUs();
    p.floorTargetUs = mover.targetFloorUs();

    std::vector<double> measured(t.kernels.size()), moved(t.kernels.size());
    std::array<TraceClassTime, kKernelClassCount> classes{};
    for (size_t c = 0; c < kKernelClassCount; ++c) classes[c].kind = KernelClass(c);
    const double steps = std::max<double>(1, double(t.steps.size()));
    TraceChangeShares shares;
    for (size_t i = 0; i < t.kernels.size(); ++i) {
        const TraceKernel& k = t.kernels[i];
        measured[i] = k.durationUs;
        const KernelMove m = mover.move(k);
        moved[i] = m.durationUs;
        if (!inSteps(t, k)) continue;
        TraceClassTime& c = classes[size_t(k.kind)];
        ++c.activities;
        c.measuredMs += k.durationUs / 1000 / steps;
        c.predictedMs += (m.durationUs - m.addedUs) / 1000 / steps;
        classes[size_t(KernelClass::Elementwise)].predictedMs += m.addedUs / 1000 / steps;  // casts are elementwise
        p.measuredMsByBasis[size_t(m.basis)] += k.durationUs / 1000 / steps;
        if (!changed) continue;
        const double ms = k.durationUs / 1000 / steps;
        const bool shaped =
            k.op >= 0 && size_t(k.op) < t.operators.size() && t.operators[size_t(k.op)].inputShapes >= 0;
        const bool kept = shaped || k.kind == KernelClass::Communication;  // collectives: by their kind
        (m.removed ? shares.removedMs : m.changed ? shares.changedMs : kept ? shares.keptMs : shares.unknownMs) += ms;
        shares.addedMs += m.addedUs / 1000 / steps;
        if (changed->autocastChanged && m.originMath)
            (k.op >= 0 && size_t(k.op) < changed->operators.size() && changed->operators[size_t(k.op)].math
                 ? shares.mathMovedMs
                 : shares.mathKeptMs) += ms;
    }
    for (const TraceClassTime& c : classes)
        if (c.activities > 0) p.classes.push_back(c);
    std::sort(p.classes.begin(), p.classes.end(),
              [](const TraceClassTime& a, const TraceClassTime& b) { return a.measuredMs > b.measuredMs; });

    p.originReplayMedianMs = replayTrace(t, measured).predictedMedianMs;
    p.replay = replayTrace(t, moved, changed ? changed->hostExtraUs : std::vector<std::pair<double, double>>{});
    if (changed) {
        p.shares = shares;
        p.notes = changed->notes;
    }
    for (const std::string& n : mover.notes()) p.notes.push_back(n);
    if (!t.recordShapes)
        p.notes.push_back(
            "recorded without record_shapes: GEMM kernels are moved as compute-bound, from their launch alone");
    if (!changed)
        p.notes.push_back(
            "the batch size and precision stay as recorded (another batch size, or autocast turned on or off, "
            "can be predicted where the trace recorded its shapes)");
    return p;
}

TraceComparison compareTraces(const KinetoTrace& a, const GpuSpec& gpuA, const KinetoTrace& b, const GpuSpec& gpuB) {
    for (const KinetoTrace* t : {&a, &b}) {
        const GpuSpec* g = t == &a ? &gpuA : &gpuB;
        if (std::string why = tracePredictionProblem(*t, g); !why.empty()) throw ModelError(t->source, why);
        if (!t->recordShapes)
            throw ModelError(t->source, "was recorded without record_shapes: operators cannot be paired across traces");
    }
    // Per trace and operator (name and input shapes): the calls, and per kernel class the kernels'
    // measured time and their dominant arithmetic.
    struct OpClass {
        double us = 0;
        std::map<int, double> mathUs;  // ComputePrecision -> us
        std::vector<size_t> kernels;
    };
    struct OpEntry {
        int64_t calls = 0;
        std::map<int, OpClass> classes;  // KernelClass -> ...
    };
    auto collect = [](const KinetoTrace& t) {
        std::map<std::string, OpEntry> ops;
        std::map<int32_t, std::string> keyOf;
        for (size_t i = 0; i < t.kernels.size(); ++i) {
            const TraceKernel& k = t.kernels[i];
            if (k.device != t.gpuDevice || k.op < 0) continue;
            const TraceOperator& op = t.operators[size_t(k.op)];
            if (op.inputShapes < 0) continue;
            auto [it, fresh] = keyOf.try_emplace(k.op);
            if (fresh) {
                it->second = t.str(op.name) + " " + t.str(op.inputShapes) + " " + t.str(op.inputTypes);
                ++ops[it->second].calls;
            }
            OpClass& c = ops[it->second].classes[int(k.kind)];
            c.us += k.durationUs;
            c.kernels.push_back(i);
            if (auto m = kernelMathPrecision(t.str(k.name), k.kind)) c.mathUs[int(*m)] += k.durationUs;
        }
        return ops;
    };
    const std::map<std::string, OpEntry> opsA = collect(a), opsB = collect(b);
    TraceComparison out;
    out.originOperators = int(opsA.size());
    out.targetOperators = int(opsB.size());
    for (const auto& [key, e] : opsA) out.sharedOperators += opsB.count(key) ? 1 : 0;

    for (int dir = 0; dir < 2; ++dir) {
        const KinetoTrace& ot = dir == 0 ? a : b;
        const GpuSpec& og = dir == 0 ? gpuA : gpuB;
        const GpuSpec& tg = dir == 0 ? gpuB : gpuA;
        const std::map<std::string, OpEntry>& from = dir == 0 ? opsA : opsB;
        const std::map<std::string, OpEntry>& to = dir == 0 ? opsB : opsA;
        const TraceKernelMover mover(ot, og, tg, Fp32Math::AsRecorded);  // one target per trace
        TraceComparisonDirection& d = out.directions[size_t(dir)];
        d.originGpu = og.id;
        d.targetGpu = tg.id;
        std::map<int, std::vector<double>> errors;
        std::map<int, TracePairClass> sums;
        std::vector<double> allErrors;
        for (const auto& [key, oe] : from) {
            auto te = to.find(key);
            if (te == to.end()) continue;
            for (const auto& [kind, oc] : oe.classes) {
                auto tc = te->second.classes.find(kind);
                if (tc == te->second.classes.end()) continue;
                std::optional<ComputePrecision> math;
                if (!tc->second.mathUs.empty())
                    math = ComputePrecision(
                        std::max_element(tc->second.mathUs.begin(), tc->second.mathUs.end(),
                                         [](const auto& x, const auto& y) { return x.second < y.second; })
                            ->first);
                double predictedUs = 0;
                for (size_t i : oc.kernels) predictedUs += mover.move(ot.kernels[i], math).durationUs;
                const double predicted = predictedUs / double(oe.calls) / 1000;
                const double measured = tc->second.us / double(te->second.calls) / 1000;
                if (!(measured > 0)) continue;
                const double e = std::abs(predicted / measured - 1);
                errors[kind].push_back(e);
                allErrors.push_back(e);
                TracePairClass& s = sums[kind];
                s.kind = KernelClass(kind);
                ++s.pairs;
                s.measuredMs += measured;
                s.predictedMs += predicted;
                ++d.all.pairs;
                d.all.measuredMs += measured;
                d.all.predictedMs += predicted;
            }
        }
        for (auto& [kind, s] : sums) {
            const std::vector<double>& e = errors[kind];
            for (double x : e) s.meanAbsError += x / double(e.size());
            s.medianAbsError = medianOf(e);
            d.classes.push_back(s);
        }
        for (double x : allErrors) d.all.meanAbsError += x / double(allErrors.size());
        d.all.medianAbsError = medianOf(allErrors);
        std::sort(d.classes.begin(), d.classes.end(),
                  [](const TracePairClass& x, const TracePairClass& y) { return x.measuredMs > y.measuredMs; });
        for (const std::string& n : mover.notes())
            if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end()) out.notes.push_back(n);
    }
    if (out.sharedOperators == 0)
        out.notes.push_back("the traces share no operator with the same input shapes: nothing to compare");
    return out;
}

}  // namespace ts::predictors
