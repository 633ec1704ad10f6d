#pragma once
// What the Timeline draws for one step of a trace, on the measured clock: the top-level operators
// of each host thread, the traced GPU's activities stream by stream, and the GPU's idle and
// host-bound stretches. Times in ms from the step's start. Plain C++ only.
#include <cstdint>
#include <string>
#include <vector>

#include "trace_document.h"

namespace ts::gui {

struct TraceTimelineRow {
    std::string label;  // "thread 1234" (host), "GPU stream 7"
    bool gpu = false;
    int32_t id = 0;  // thread index into KinetoTrace::threads, or the stream number
};

struct TraceTimelineBar {
    int row = 0;
    double startMs = 0, ms = 0;
    int32_t index = -1;  // into KinetoTrace::operators (host rows) or ::kernels (GPU rows)
};

struct TraceTimelineStretch {
    double startMs = 0, ms = 0;
};

struct TraceTimeline {
    size_t step = 0;                              // index into the summary's steps
    int64_t number = -1;                          // ProfilerStep#N, -1 for a trace without steps
    double cpuMs = 0;                             // the step's span on the host
    double spanMs = 0;                            // to the later of its host end and its GPU work's end
    std::vector<TraceTimelineRow> rows;           // host threads first, then the GPU's streams in order
    std::vector<TraceTimelineBar> bars;           // by row, in start order within a row
    std::vector<TraceTimelineStretch> idle;       // every gap in the GPU's busy time within the span
    std::vector<TraceTimelineStretch> hostBound;  // the gaps that waited for the host (the summary's)
    int otherDeviceActivities = 0;                // activities of GPUs other than the traced one (not drawn)
};

TraceTimeline buildTraceTimeline(const TraceDocument& doc, size_t step);

}  // namespace ts::gui
