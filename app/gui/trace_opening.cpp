#include "trace_opening.h"

#include <QObject>
#include <chrono>
#include <future>

#include "file_read_progress.h"

namespace ts::gui {

namespace {

// The read is most of the time before anything shows; the rest is summarising and predicting.
constexpr double kReadShare = 0.8;

}  // namespace

BackgroundJob::Work traceOpeningWork(std::string path, const GpuDatabase& db, TraceJobCallbacks callbacks) {
    return [path = std::move(path), &db, callbacks = std::move(callbacks)](JobContext& context) {
        FileReadProgress progress(path);
        const QString reading =
            QObject::tr("reading the trace (%1 MB)").arg(double(progress.fileBytes()) / 1e6, 0, 'f', 1);
        context.progress(reading, 0);
        // The reader reports nothing while it streams: it runs beside this thread, which watches how
        // far into the file it has got. It cannot be interrupted, so Cancel waits for it to return.
        std::future<KinetoTrace> read = std::async(std::launch::async, [&path] { return readKinetoTrace(path); });
        while (read.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
            if (!context.cancelled()) context.progress(reading, kReadShare * std::max(0.0, progress.fraction()));
        KinetoTrace trace = read.get();  // throws ModelError for a damaged trace
        if (context.cancelled()) return;

        context.progress(QObject::tr("summarising"), kReadShare);
        std::shared_ptr<const TraceDocument> doc = makeTraceDocument(path, std::move(trace), db);
        context.onGuiThread([opened = callbacks.opened, doc] { opened(doc); });
        if (!doc->predictionProblem.empty()) return;  // the GPUs view says why there is nothing to predict

        const double gpus = double(std::max<size_t>(db.gpus().size(), 1));
        auto partial = [&](const TracePredictions& sofar) {
            auto snapshot = std::make_shared<const TracePredictions>(sofar);
            context.onGuiThread([predicted = callbacks.predicted, snapshot] { predicted(snapshot); });
            context.progress(QObject::tr("predicting on %1 of %2 GPUs").arg(sofar.gpus.size()).arg(gpus),
                             kReadShare + (1 - kReadShare) * double(sofar.gpus.size()) / gpus);
        };
        const TracePredictions all = predictTraceOnEveryGpu(*doc, db, context.cancelFlag(), partial);
        if (all.complete)
            context.onGuiThread([predicted = callbacks.predicted,
                                 done = std::make_shared<const TracePredictions>(all)] { predicted(done); });
    };
}

}  // namespace ts::gui
