#pragma once
// A trace's steps recomposed with new GPU activity durations: the asynchronous execution the
// training predictions model (the host queues work, the GPU runs it in stream order as soon as it
// is queued), with every ordering constraint taken from the trace itself:
//   start'(i) = max(launch'(i), end'(stream predecessor), end'(cross-stream dependency)) + offset(i)
// offset(i) = the measured start minus the same maximum of measured times (launch latency, event
// waits the trace does not show); a cross-stream dependency is inferred where a kernel started
// later than its launch and its stream allowed, just as an activity of another stream ended. The
// host's timeline is kept as measured except where it waited for the GPU: a runtime call of 20 us
// or more that returned just after an activity ended (a synchronisation, a blocking copy, a launch
// into a full queue) now returns after that activity's new end, and everything the host did later
// moves by the difference. With the measured durations the replay reproduces the measured steps.
#include <cstdint>
#include <utility>
#include <vector>

#include "trainscope/core/kineto_trace.h"

namespace ts::predictors {

struct ReplayStep {
    int64_t number = -1;     // ProfilerStep#N; -1 for a trace without steps (one span)
    double measuredMs = 0;   // from its start to the next step's start (the last: to the end of its work)
    double predictedMs = 0;  // the same with the new durations
};

struct TraceReplay {
    std::vector<ReplayStep> steps;
    double measuredMedianMs = 0;
    double predictedMedianMs = 0;
    int hostWaits = 0;                     // runtime calls found waiting for the GPU
    int dependencies = 0;                  // cross-stream dependencies inferred
    std::vector<double> predictedStartUs;  // per trace.kernels index (other devices: as measured)
};

// Assumed tolerances of the inference: a kernel that started more than kDependencySlackUs after
// its launch and stream allowed waited for an activity of another stream that ended at most
// kDependencyWindowUs before it; a runtime call that returned at most kWaitReturnUs after an
// activity ended waited for it.
inline constexpr double kDependencySlackUs = 10;
inline constexpr double kDependencyWindowUs = 10;
inline constexpr double kWaitReturnUs = 30;

// The median (the mean of the middle two for an even count; 0 for none): steps and per-pair errors.
double medianOf(std::vector<double> values);

// `durationsUs[i]`: the new duration of trace.kernels[i]. `hostExtraUs`: host time added (or,
// negative, removed) at a measured time, (time, us): everything the host does from then on moves
// by it, until it next waits for the GPU (autocast's casts dispatched, or removed). Throws
// std::invalid_argument when the sizes differ.
TraceReplay replayTrace(const KinetoTrace& trace, const std::vector<double>& durationsUs,
                        std::vector<std::pair<double, double>> hostExtraUs = {});

}  // namespace ts::predictors
