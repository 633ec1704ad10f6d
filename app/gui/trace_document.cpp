#include "trace_document.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ts::gui {

double TraceDocument::stepStartUs(size_t i) const {
    if (bySteps()) return i < trace.steps.size() ? trace.steps[i].startUs : 0;
    // summarizeTrace spans a trace without steps from its first activity of the traced GPU (or,
    // without any, its first operator); the same origin here keeps the stretches in place.
    for (const TraceKernel& k : trace.kernels)
        if (k.device == trace.gpuDevice) return k.startUs;
    double first = trace.operators.empty() ? 0 : trace.operators.front().startUs;
    for (const TraceOperator& op : trace.operators) first = std::min(first, op.startUs);
    return first;
}

size_t medianStepIndex(const TraceSummary& summary) {
    size_t best = 0;
    double bestDistance = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < summary.steps.size(); ++i) {
        const double distance = std::abs(summary.steps[i].cpuMs - summary.medianStepMs);
        if (distance < bestDistance) {
            best = i;
            bestDistance = distance;
        }
    }
    return best;
}

std::shared_ptr<const TraceDocument> makeTraceDocument(std::string spec, KinetoTrace trace, const GpuDatabase& db) {
    auto doc = std::make_shared<TraceDocument>();
    doc->spec = std::move(spec);
    doc->trace = std::move(trace);
    // No cut: the timeline shades every host-bound stretch, and the tables sort and filter it all.
    doc->summary = summarizeTrace(doc->trace, db, std::numeric_limits<size_t>::max());
    const GpuSpec* origin = matchTraceGpu(doc->trace, db, &doc->originHow);
    if (origin) doc->origin = *origin;
    doc->predictionProblem = predictors::tracePredictionProblem(doc->trace, origin);
    doc->batch = predictors::findTraceBatch(doc->trace);
    doc->precision = predictors::recordedTracePrecision(doc->trace);
    doc->medianStep = medianStepIndex(doc->summary);
    return doc;
}

const TraceGpuPrediction* TracePredictions::find(const std::string& gpuId) const {
    for (const TraceGpuPrediction& g : gpus)
        if (g.gpuId == gpuId) return &g;
    return nullptr;
}

TracePredictions predictTraceOnEveryGpu(const TraceDocument& doc, const GpuDatabase& db,
                                        const std::atomic<bool>* cancel,
                                        const std::function<void(const TracePredictions&)>& partial,
                                        const predictors::TraceChange& change) {
    TracePredictions out;
    out.change = change;
    // The trace's work at the changed batch or precision, analysed once for every GPU; a change
    // the trace cannot take (no shapes, an ambiguous batch) is every GPU's problem.
    std::shared_ptr<const predictors::TraceWork> work;
    std::string problem = doc.predictionProblem;
    if (problem.empty() && !doc.origin) problem = "the trace's GPU is not in the database";
    if (problem.empty()) try {
            work = std::make_shared<const predictors::TraceWork>(predictors::analyseTraceWork(doc.trace, change));
        } catch (const std::exception& e) {
            problem = e.what();
            out.changeProblem = problem;
        }
    for (const GpuSpec& gpu : db.gpus()) {
        if (cancel && cancel->load()) return out;
        TraceGpuPrediction g;
        g.gpuId = gpu.id;
        g.gpuName = gpu.name;
        if (!problem.empty()) {
            g.problem = problem;
        } else {
            try {
                g.prediction = predictors::predictTrace(doc.trace, *doc.origin, gpu, change, work);
                std::vector<double>().swap(g.prediction.replay.predictedStartUs);  // per activity: large, unused
                g.supported = true;
            } catch (const std::exception& e) {
                g.problem = e.what();  // a GPU without the figures the model needs, or the precision
            }
        }
        out.gpus.push_back(std::move(g));
        if (partial) partial(out);
    }
    out.complete = true;
    return out;
}

}  // namespace ts::gui
