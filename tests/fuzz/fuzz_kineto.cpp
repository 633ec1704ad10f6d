// libFuzzer target: a PyTorch profiler (Kineto) trace through ts::readKinetoTraceText (the gzip or
// zlib inflater, the SAX handler with its depth, size and range limits, the join), then the
// summary and the profile conversion. A trace it accepts must give a summary whose figures hold
// together: busy time within the step's window, exposed communication within communication.
#include <cstdlib>
#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/trace_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    ts::KinetoTrace trace;
    try {
        trace = ts::readKinetoTraceText(text, "fuzz.json");
    } catch (const ts::ModelError&) {
        return 0;
    }
    const ts::TraceSummary summary = ts::summarizeTrace(trace, ts::GpuDatabase::builtin(), 5);
    for (const ts::TraceStepSummary& s : summary.steps) {
        const double slack = 1e-6 * (1 + s.gpuWindowMs);
        if (s.busyMs > s.gpuWindowMs + slack || s.idleMs < 0) std::abort();
        if (s.exposedCommunicationMs > s.communicationMs + slack || s.hostBoundMs > s.idleMs + slack) std::abort();
    }
    (void)ts::profileFromKinetoTrace(trace);
    return 0;
}
