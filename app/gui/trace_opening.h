#pragma once
// Opening a PyTorch profiler trace in the explorer, as one background job in ordered stages:
// read the file (progress from how far the reader has got into it), summarise it and hand the
// document to the GUI, which shows it at once; then predict it on every GPU of the database,
// each GPU's result reaching the GUI as it is ready. Cancel during the read drops the trace when
// the reader returns; during the predictions it keeps the trace and the GPUs predicted so far.
#include <functional>
#include <memory>
#include <string>

#include "background_job.h"
#include "trace_document.h"

namespace ts::gui {

struct TraceJobCallbacks {
    // Both run on the GUI thread, in this order, at most once and then once per GPU.
    std::function<void(std::shared_ptr<const TraceDocument>)> opened;
    std::function<void(std::shared_ptr<const TracePredictions>)> predicted;
};

// `db` must stay unchanged while the job runs (the window refuses the Prices dialog meanwhile).
// Throws ModelError(path, problem) for a damaged trace.
BackgroundJob::Work traceOpeningWork(std::string path, const GpuDatabase& db, TraceJobCallbacks callbacks);

}  // namespace ts::gui
