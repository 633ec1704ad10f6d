#include "trace_predict_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "predict_command.h"
#include "scenario_options.h"
#include "trace_input.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/choice/trace_choice.h"
#include "trainscope/predictors/trace/trace_prediction.h"

namespace ts::cli {
namespace {

using namespace ts::predictors;

std::string fixed(double v, int decimals = 2) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string pad(const std::string& s, size_t n, bool right = false) {
    if (s.size() >= n) return s;
    return right ? std::string(n - s.size(), ' ') + s : s + std::string(n - s.size(), ' ');
}

nlohmann::json predictionJson(const TracePrediction& p, const GpuSpec& gpu) {
    nlohmann::json j = {{"gpu", gpu.id},
                        {"name", gpu.name},
                        {"step_ms", p.replay.predictedMedianMs},
                        {"host_waits", p.replay.hostWaits},
                        {"dependencies", p.replay.dependencies},
                        {"kernel_floor_us", p.floorTargetUs}};
    j["steps"] = nlohmann::json::array();
    for (const ReplayStep& s : p.replay.steps)
        j["steps"].push_back({{"number", s.number}, {"measured_ms", s.measuredMs}, {"predicted_ms", s.predictedMs}});
    j["classes"] = nlohmann::json::array();
    for (const TraceClassTime& c : p.classes)
        j["classes"].push_back({{"class", kernelClassName(c.kind)},
                                {"activities", c.activities},
                                {"measured_ms_per_step", c.measuredMs},
                                {"predicted_ms_per_step", c.predictedMs}});
    nlohmann::json basis;
    for (size_t b = 0; b < kMoveBasisCount; ++b) basis[moveBasisName(MoveBasis(b))] = p.measuredMsByBasis[b];
    j["moved_by_ms_per_step"] = basis;
    if (p.shares)
        j["change_ms_per_step"] = {{"changed", p.shares->changedMs},      {"kept", p.shares->keptMs},
                                   {"no_shapes", p.shares->unknownMs},    {"removed", p.shares->removedMs},
                                   {"math_moved", p.shares->mathMovedMs}, {"math_kept", p.shares->mathKeptMs},
                                   {"added_predicted", p.shares->addedMs}};
    j["notes"] = p.notes;
    return j;
}

// Where the change applied, as shares of the measured GPU time per step.
void printShares(std::ostream& os, const TracePrediction& p) {
    if (!p.shares) return;
    const TraceChangeShares& s = *p.shares;
    const double total = s.changedMs + s.keptMs + s.unknownMs + s.removedMs;
    auto share = [&](double ms) { return fixed(ms) + " ms (" + fixed(total > 0 ? 100 * ms / total : 0, 1) + "%)"; };
    os << "  measured GPU time per step whose work changed: " << share(s.changedMs) << "; kept (no batch dimension, "
       << "or untouched by autocast): " << share(s.keptMs)
       << "; kept for lack of an operator or shapes: " << share(s.unknownMs);
    if (s.removedMs > 0) os << "; removed (casts, grad scaler): " << share(s.removedMs);
    os << "\n";
    if (s.mathMovedMs + s.mathKeptMs > 0)
        os << "  GEMM, convolution and attention kernels moved to " << trainingPrecisionName(p.precision)
           << "'s arithmetic: " << share(s.mathMovedMs) << "; not moved (no operator): " << share(s.mathKeptMs) << "\n";
    if (s.addedMs > 0)
        os << "  added on the GPU (autocast casts, grad-scaler unscale): " << fixed(s.addedMs) << " ms per step\n";
}

void printOne(std::ostream& os, const TracePrediction& p, const GpuSpec& gpu) {
    os << "\nOn " << gpu.name << " (" << gpu.id << "): median step " << fixed(p.replay.predictedMedianMs) << " ms\n";
    os << "  step      measured ms   predicted ms\n";
    for (const ReplayStep& s : p.replay.steps)
        os << "  " << pad(s.number >= 0 ? std::to_string(s.number) : "(all)", 8) << pad(fixed(s.measuredMs), 13, true)
           << pad(fixed(s.predictedMs), 15, true) << "\n";
    double measuredWork = 0, predictedWork = 0;
    for (const TraceClassTime& c : p.classes) measuredWork += c.measuredMs, predictedWork += c.predictedMs;
    os << "  GPU work per step (streams summed): measured " << fixed(measuredWork) << " ms, predicted "
       << fixed(predictedWork) << " ms; the host's own time is kept as measured\n";
    os << "  kernel class      per step: measured ms   predicted ms\n";
    for (const TraceClassTime& c : p.classes)
        os << "  " << pad(kernelClassName(c.kind), 14) << pad(fixed(c.measuredMs), 26, true)
           << pad(fixed(c.predictedMs), 15, true) << "\n";
    double total = 0;
    for (double ms : p.measuredMsByBasis) total += ms;
    os << "  GPU time moved by: ";
    bool first = true;
    for (size_t b = 0; b < kMoveBasisCount; ++b) {
        if (p.measuredMsByBasis[b] <= 0) continue;
        os << (first ? "" : ", ") << moveBasisName(MoveBasis(b)) << " "
           << fixed(total > 0 ? 100 * p.measuredMsByBasis[b] / total : 0, 1) << "%";
        first = false;
    }
    os << "\n";
    printShares(os, p);
    os << "  host waits on the GPU found: " << p.replay.hostWaits
       << "; cross-stream dependencies inferred: " << p.replay.dependencies << "; kernel floor "
       << fixed(p.floorOriginUs, 1) << " us measured, " << fixed(p.floorTargetUs, 1) << " us on " << gpu.id << "\n";
}

}  // namespace

int runPredictTrace(const PredictOptions& o) {
    refuseModelOptionsForTrace(o.scenario);
    const TraceChange change = traceChangeFrom(o.precision, o.batch);
    const Fp32Math math = change.math;
    const GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    const TraceInput in = loadTraceInput(o.model, db);
    const KinetoTrace& trace = in.trace;
    const GpuSpec* origin = in.origin;
    const std::string& how = in.match;

    std::vector<const GpuSpec*> gpus;
    if (o.gpu == "all")
        for (const GpuSpec& spec : db.gpus()) gpus.push_back(&spec);
    else
        gpus.push_back(&db.get(o.gpu));

    struct Row {
        const GpuSpec* gpu;
        std::optional<TracePrediction> p;
        std::string problem;
    };
    std::vector<Row> rows;
    for (TraceGpuPrediction& r : predictTraceOnGpus(trace, *origin, gpus, change))
        rows.push_back({r.gpu, std::move(r.prediction), std::move(r.problem)});
    const TracePrediction* any = nullptr;
    for (const Row& r : rows)
        if (r.p) any = &*r.p;
    if (!any) throw ModelError(o.model, rows.empty() ? "no GPU to predict on" : rows.front().problem);

    if (o.json) {
        nlohmann::json j = {
            {"source", o.model},
            {"recorded_on", origin->id},
            {"match", how},
            {"fp32_math", fp32MathName(math)},
            {"recorded_precision", trainingPrecisionName(any->recordedPrecision)},
            {"precision", trainingPrecisionName(any->precision)},
            {"batch", change.batch > 0 ? nlohmann::json(change.batch) : nlohmann::json("as recorded")},
            {"recorded_batch", any->recordedBatch > 0 ? nlohmann::json(any->recordedBatch) : nlohmann::json(nullptr)},
            {"recorded_batch_how", any->batchHow.empty() ? nlohmann::json(nullptr) : nlohmann::json(any->batchHow)},
            {"recorded_precision_how",
             any->precisionHow.empty() ? nlohmann::json(nullptr) : nlohmann::json(any->precisionHow)},
            {"steps", trace.steps.size()},
            {"measured_step_ms", any->replay.measuredMedianMs},
            {"replayed_step_ms", any->originReplayMedianMs}};
        j["predictions"] = nlohmann::json::array();
        for (const Row& r : rows)
            j["predictions"].push_back(r.p ? predictionJson(*r.p, *r.gpu)
                                           : nlohmann::json{{"gpu", r.gpu->id}, {"unsupported", r.problem}});
        std::cout << j.dump(1) << "\n";
        return 0;
    }
    std::ostream& os = std::cout;
    os << "PyTorch profiler trace " << o.model << "\n  recorded on " << origin->name << " (" << origin->id << ", "
       << how << "), " << trace.steps.size() << " steps\n  measured median step " << fixed(any->replay.measuredMedianMs)
       << " ms; replayed with its measured kernel times " << fixed(any->originReplayMedianMs)
       << " ms\n  FP32 arithmetic: " << fp32MathName(math) << "; precision: " << trainingPrecisionName(any->precision);
    if (any->precision != any->recordedPrecision)
        os << " (recorded in " << trainingPrecisionName(any->recordedPrecision) << ")";
    if (change.batch > 0) os << "; batch " << change.batch << " (recorded " << any->recordedBatch << ")";
    os << "\n";
    if (rows.size() == 1) {
        if (!rows[0].p) throw ModelError(rows[0].gpu->id, rows[0].problem);
        printOne(os, *rows[0].p, *rows[0].gpu);
    } else {
        std::vector<const Row*> order;
        for (const Row& r : rows) order.push_back(&r);
        std::stable_sort(order.begin(), order.end(), [](const Row* a, const Row* b) {
            if (!a->p || !b->p) return bool(a->p) && !b->p;
            return a->p->replay.predictedMedianMs < b->p->replay.predictedMedianMs;
        });
        os << "\n  " << pad("GPU", 28) << pad("step ms", 10, true)
           << pad(change.batch > 0 ? "samples/s vs measured" : "vs measured", 13, true) << "\n";
        for (const Row* r : order) {
            os << "  " << pad(r->gpu->id, 28);
            if (!r->p) {
                os << "  not predicted: " << r->problem << "\n";
                continue;
            }
            // Samples per second over the recorded job's (the same as steps at the recorded batch).
            const double samples =
                change.batch > 0 && any->recordedBatch > 0 ? double(change.batch) / double(any->recordedBatch) : 1;
            const double ratio = samples * any->replay.measuredMedianMs / r->p->replay.predictedMedianMs;
            os << pad(fixed(r->p->replay.predictedMedianMs), 10, true) << pad(fixed(ratio, 2) + "x", 13, true)
               << (r->gpu == origin ? "   (recorded here)" : "") << "\n";
        }
    }
    for (const std::string& n : any->notes) os << "  note: " << n << "\n";
    for (const std::string& n : trace.notes) os << "  note: " << n << "\n";
    return 0;
}

CLI::App* addValidateTracesCommand(CLI::App& app, ValidateTracesOptions& o) {
    CLI::App* cmd = app.add_subcommand(
        "validate-traces",
        "Check the cross-GPU kernel moves on two PyTorch profiler traces of different GPUs: for every operator both "
        "ran with the same input shapes, each GPU's kernel time predicted from the other's, errors by kernel class.");
    cmd->add_option("A", o.a, "a trace recorded with record_shapes")->required()->check(CLI::ExistingFile);
    cmd->add_option("B", o.b, "a trace of another GPU, recorded with record_shapes")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_flag("--json", o.json, "print JSON: shared operators, and per direction the classes' errors");
    cmd->add_option("--gpu-db", o.gpuDbFiles, "extra GPU file(s) applied after the built-in database")
        ->check(CLI::ExistingFile);
    return cmd;
}

int runValidateTraces(const ValidateTracesOptions& o) {
    const GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    const KinetoTrace a = readKinetoTrace(o.a), b = readKinetoTrace(o.b);
    const GpuSpec* ga = matchTraceGpu(a, db);
    const GpuSpec* gb = matchTraceGpu(b, db);
    if (std::string why = tracePredictionProblem(a, ga); !why.empty()) throw ModelError(o.a, why);
    if (std::string why = tracePredictionProblem(b, gb); !why.empty()) throw ModelError(o.b, why);
    const TraceComparison c = compareTraces(a, *ga, b, *gb);
    auto classJson = [](const TracePairClass& k, bool named) {
        nlohmann::json j = {{"pairs", k.pairs},
                            {"mean_abs_error", k.meanAbsError},
                            {"median_abs_error", k.medianAbsError},
                            {"measured_ms", k.measuredMs},
                            {"predicted_ms", k.predictedMs}};
        if (named) j["class"] = kernelClassName(k.kind);
        return j;
    };
    if (o.json) {
        nlohmann::json j = {{"a", o.a},
                            {"b", o.b},
                            {"operators_a", c.originOperators},
                            {"operators_b", c.targetOperators},
                            {"shared_operators", c.sharedOperators},
                            {"notes", c.notes}};
        j["directions"] = nlohmann::json::array();
        for (const TraceComparisonDirection& d : c.directions) {
            nlohmann::json dj = {{"from", d.originGpu}, {"to", d.targetGpu}, {"all", classJson(d.all, false)}};
            dj["classes"] = nlohmann::json::array();
            for (const TracePairClass& k : d.classes) dj["classes"].push_back(classJson(k, true));
            j["directions"].push_back(dj);
        }
        std::cout << j.dump(1) << "\n";
        return 0;
    }
    std::ostream& os = std::cout;
    os << "Operators with GPU work (name, input shapes and types): " << c.originOperators << " in " << o.a << ", "
       << c.targetOperators << " in " << o.b << ", " << c.sharedOperators << " in both\n";
    for (const TraceComparisonDirection& d : c.directions) {
        os << "\n"
           << d.originGpu << " -> " << d.targetGpu << ": each shared operator's kernel time per call on " << d.targetGpu
           << ", predicted from " << d.originGpu << "'s\n";
        os << "  " << pad("class", 14) << pad("pairs", 7, true) << pad("mean err", 10, true) << pad("median", 9, true)
           << pad("measured ms", 13, true) << pad("predicted ms", 14, true) << "\n";
        auto row = [&](const std::string& name, const TracePairClass& k) {
            os << "  " << pad(name, 14) << pad(std::to_string(k.pairs), 7, true)
               << pad(fixed(100 * k.meanAbsError, 1) + "%", 10, true)
               << pad(fixed(100 * k.medianAbsError, 1) + "%", 9, true) << pad(fixed(k.measuredMs, 3), 13, true)
               << pad(fixed(k.predictedMs, 3), 14, true) << "\n";
        };
        for (const TracePairClass& k : d.classes) row(kernelClassName(k.kind), k);
        row("all", d.all);
    }
    for (const std::string& n : c.notes) os << "note: " << n << "\n";
    return 0;
}

}  // namespace ts::cli
