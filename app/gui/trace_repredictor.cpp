#include "trace_repredictor.h"

#include <algorithm>
#include <memory>

#include "background_job.h"
#include "explorer_state.h"
#include "trace_document.h"

namespace ts::gui {

std::optional<predictors::TraceChange> traceChangeFor(const TraceDocument& doc, const ExplorerSettings& settings,
                                                      std::string* why) {
    std::optional<predictors::TraceChange> change;
    if (settings.precision == doc.precision.precision)
        change = predictors::TraceChange{};
    else
        change = predictors::parseTracePrecision(predictors::trainingPrecisionName(settings.precision));
    if (!change) {
        if (why)
            *why = std::string(predictors::trainingPrecisionName(settings.precision)) +
                   ": a trace moves to fp32, fp32-strict, tf32, amp-fp16 or amp-bf16 (fp8 needs Transformer "
                   "Engine and the model)";
        return std::nullopt;
    }
    // The control's range ends at kMaxBatch: a larger recorded batch shows as that.
    const int64_t recorded = std::clamp<int64_t>(doc.batch.batch, 1, ExplorerState::kMaxBatch);
    if (doc.batch.batch > 0 && settings.batch != recorded) change->batch = settings.batch;
    return change;
}

TraceRepredictor::TraceRepredictor(ExplorerState& state, QObject* parent) : QObject(parent), state_(state) {
    connect(&state_, &ExplorerState::changed, this, &TraceRepredictor::follow);
}

TraceRepredictor::~TraceRepredictor() = default;  // a running job is a child: it cancels and waits

void TraceRepredictor::follow() {
    const std::shared_ptr<const TraceDocument> doc = state_.traceDocument();
    if (!doc || !doc->predictionProblem.empty()) return;
    const TracePredictions* shown = state_.tracePredictions();
    std::string why;
    const std::optional<predictors::TraceChange> wanted = traceChangeFor(*doc, state_.settings(), &why);
    if (!wanted) {
        if (shown && shown->changeProblem == why) return;
        // Nothing to predict: every GPU says why.
        auto refused = std::make_shared<TracePredictions>();
        refused->changeProblem = why;
        refused->complete = true;
        for (const GpuSpec& gpu : state_.database().gpus()) {
            TraceGpuPrediction g;
            g.gpuId = gpu.id;
            g.gpuName = gpu.name;
            g.problem = why;
            refused->gpus.push_back(std::move(g));
        }
        state_.setTracePredictions(doc.get(), std::move(refused));
        return;
    }
    // Predictions at the wanted change are shown, or on their way (the opening job's, or ours).
    if (shown && shown->change == *wanted && shown->changeProblem.empty()) return;
    if (!shown && *wanted == predictors::TraceChange{}) return;
    if (job_ && jobDoc_ == doc.get() && jobChange_ == *wanted) return;
    if (job_) job_->cancel();  // it finishes its GPU, then deletes itself

    // The document and the database stay alive and unchanged while the job runs: the document is
    // shared, and the window refuses the Prices dialog while a job runs.
    auto* job = new BackgroundJob(
        tr("Predicting the trace at another batch size or precision"),
        [doc, change = *wanted, db = &state_.database(), this](JobContext& context) {
            auto partial = [&](const TracePredictions& sofar) {
                if (context.cancelled()) return;
                auto snapshot = std::make_shared<const TracePredictions>(sofar);
                context.onGuiThread([this, doc, snapshot] {
                    // A result for settings since changed again is dropped: the newer job's follows.
                    const std::optional<predictors::TraceChange> now = traceChangeFor(*doc, state_.settings());
                    if (now && *now == snapshot->change) state_.setTracePredictions(doc.get(), snapshot);
                });
            };
            const TracePredictions all = predictTraceOnEveryGpu(*doc, *db, context.cancelFlag(), partial, change);
            if (all.complete) partial(all);
        },
        this);
    job_ = job;
    jobDoc_ = doc.get();
    jobChange_ = *wanted;
    connect(job, &BackgroundJob::finished, this, [this, job](bool, const QString&) {
        if (job_ == job) job_ = nullptr;
        job->deleteLater();
    });
    job->start();
}

}  // namespace ts::gui
