#include "trainscope/predictors/trace/trace_replay.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace ts::predictors {
namespace {

// The host's delay against its measured timeline: set where a wait for the GPU returned (measured
// time, new delay; in measured order), plus the host time added since then (extras: measured time,
// us; the running sum kept).
class HostShift {
public:
    explicit HostShift(std::vector<std::pair<double, double>> extras) : extras_(std::move(extras)) {
        std::sort(extras_.begin(), extras_.end());
        for (size_t i = 1; i < extras_.size(); ++i) extras_[i].second += extras_[i - 1].second;
    }
    double at(double us) const {
        auto it =
            std::upper_bound(changes_.begin(), changes_.end(), us, [](double t, const Change& c) { return t < c.us; });
        if (it == changes_.begin()) return added(us);
        return std::prev(it)->shift + added(us) - std::prev(it)->addedThen;
    }
    void set(double us, double shift) { changes_.push_back({us, shift, added(us)}); }

private:
    struct Change {
        double us, shift, addedThen;
    };
    double added(double us) const {  // extras at or before `us`
        auto it = std::upper_bound(extras_.begin(), extras_.end(), us,
                                   [](double t, const std::pair<double, double>& e) { return t < e.first; });
        return it == extras_.begin() ? 0 : std::prev(it)->second;
    }
    std::vector<Change> changes_;
    std::vector<std::pair<double, double>> extras_;  // cumulative
};

}  // namespace

double medianOf(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

TraceReplay replayTrace(const KinetoTrace& t, const std::vector<double>& durationsUs,
                        std::vector<std::pair<double, double>> hostExtraUs) {
    if (durationsUs.size() != t.kernels.size())
        throw std::invalid_argument("replayTrace: one duration per GPU activity is needed");
    const size_t n = t.kernels.size();
    constexpr double kNone = -std::numeric_limits<double>::infinity();
    TraceReplay r;
    r.predictedStartUs.resize(n);
    std::vector<double> end(n);  // predicted ends

    // The traced GPU's activities in start order (t.kernels is), and the same by measured end.
    std::vector<size_t> device;
    for (size_t i = 0; i < n; ++i) {
        r.predictedStartUs[i] = t.kernels[i].startUs;
        end[i] = t.kernels[i].startUs + t.kernels[i].durationUs;
        if (t.kernels[i].device == t.gpuDevice) device.push_back(i);
    }
    auto measuredEnd = [&](size_t i) { return t.kernels[i].startUs + t.kernels[i].durationUs; };
    std::vector<size_t> byEnd = device;
    std::sort(byEnd.begin(), byEnd.end(), [&](size_t a, size_t b) { return measuredEnd(a) < measuredEnd(b); });
    std::vector<double> ends(byEnd.size());
    for (size_t i = 0; i < byEnd.size(); ++i) ends[i] = measuredEnd(byEnd[i]);
    // The activity with the latest measured end in [from, to], optionally not on `stream`.
    auto latestEnding = [&](double from, double to, int32_t notStream, double startedBefore) -> long {
        auto it = std::upper_bound(ends.begin(), ends.end(), to);
        for (long j = long(it - ends.begin()) - 1; j >= 0 && ends[size_t(j)] >= from; --j) {
            const TraceKernel& k = t.kernels[byEnd[size_t(j)]];
            if (k.stream != notStream && k.startUs < startedBefore) return long(byEnd[size_t(j)]);
        }
        return -1;
    };

    // Each activity's constraints, from the measured times.
    struct Constraint {
        long previous = -1;    // stream predecessor
        long dependency = -1;  // inferred cross-stream dependency
        double offsetUs = 0;
    };
    std::vector<Constraint> c(n);
    std::vector<std::pair<int32_t, long>> lastOnStream;  // (stream, activity)
    for (size_t i : device) {
        const TraceKernel& k = t.kernels[i];
        Constraint& ci = c[i];
        auto it = std::find_if(lastOnStream.begin(), lastOnStream.end(),
                               [&](const std::pair<int32_t, long>& s) { return s.first == k.stream; });
        if (it != lastOnStream.end()) {
            ci.previous = it->second;
            it->second = long(i);
        } else {
            lastOnStream.emplace_back(k.stream, long(i));
        }
        double base =
            std::max(k.launchUs >= 0 ? k.launchUs : kNone, ci.previous >= 0 ? measuredEnd(size_t(ci.previous)) : kNone);
        if (base == kNone || k.startUs - base > kDependencySlackUs) {
            ci.dependency = latestEnding(k.startUs - kDependencyWindowUs, k.startUs + 1, k.stream, k.startUs);
            if (ci.dependency >= 0) {
                base = std::max(base, measuredEnd(size_t(ci.dependency)));
                ++r.dependencies;
            }
        }
        ci.offsetUs = base == kNone ? 0 : k.startUs - base;
    }

    // Host calls that waited for the GPU: the activity they waited for and how long after its end
    // they returned.
    struct Wait {
        double startUs, endUs;
        size_t activity;
        double afterUs;
    };
    std::vector<Wait> waits;
    for (const TraceHostCall& h : t.hostCalls) {
        const double e = h.startUs + h.durationUs;
        const long j = latestEnding(h.startUs, e, -1, e);
        if (j >= 0 && e - measuredEnd(size_t(j)) <= kWaitReturnUs)
            waits.push_back({h.startUs, e, size_t(j), e - measuredEnd(size_t(j))});
    }
    std::sort(waits.begin(), waits.end(), [](const Wait& a, const Wait& b) { return a.endUs < b.endUs; });
    r.hostWaits = int(waits.size());

    // Activities in start order and waits in return order, merged: everything an event depends on
    // happened earlier in measured time.
    HostShift shift(std::move(hostExtraUs));
    size_t w = 0;
    auto applyWait = [&](const Wait& x) {
        const double returned = std::max(x.startUs + shift.at(x.startUs), end[x.activity]) + x.afterUs;
        shift.set(x.endUs, returned - x.endUs);
    };
    for (size_t i : device) {
        const TraceKernel& k = t.kernels[i];
        while (w < waits.size() && waits[w].endUs <= k.startUs) applyWait(waits[w++]);
        const Constraint& ci = c[i];
        double base = kNone;
        if (k.launchUs >= 0) base = k.launchUs + shift.at(k.launchUs);
        if (ci.previous >= 0) base = std::max(base, end[size_t(ci.previous)]);
        if (ci.dependency >= 0) base = std::max(base, end[size_t(ci.dependency)]);
        if (base == kNone) base = k.startUs + shift.at(k.startUs);
        r.predictedStartUs[i] = base + ci.offsetUs;
        end[i] = r.predictedStartUs[i] + durationsUs[i];
    }
    while (w < waits.size()) applyWait(waits[w++]);

    // Steps: from one start to the next; the last to the later of its host end and its work's end.
    if (!t.steps.empty()) {
        std::vector<double> lastEnd(t.steps.size(), kNone), lastEndMeasured(t.steps.size(), kNone);
        for (size_t i : device) {
            const int32_t s = t.kernels[i].step;
            if (s < 0 || size_t(s) >= t.steps.size()) continue;
            lastEnd[size_t(s)] = std::max(lastEnd[size_t(s)], end[i]);
            lastEndMeasured[size_t(s)] = std::max(lastEndMeasured[size_t(s)], measuredEnd(i));
        }
        for (size_t s = 0; s < t.steps.size(); ++s) {
            const TraceStep& st = t.steps[s];
            ReplayStep rs;
            rs.number = st.number;
            const double start = st.startUs + shift.at(st.startUs);
            if (s + 1 < t.steps.size()) {
                const double next = t.steps[s + 1].startUs;
                rs.measuredMs = (next - st.startUs) / 1000;
                rs.predictedMs = (next + shift.at(next) - start) / 1000;
            } else {
                const double hostEnd = st.startUs + st.durationUs;
                rs.measuredMs = (std::max(hostEnd, lastEndMeasured[s]) - st.startUs) / 1000;
                rs.predictedMs = (std::max(hostEnd + shift.at(hostEnd), lastEnd[s]) - start) / 1000;
            }
            r.steps.push_back(rs);
        }
    } else if (!device.empty()) {
        double first = std::numeric_limits<double>::infinity(), firstPredicted = first;
        double last = kNone, lastPredicted = kNone;
        for (size_t i : device) {
            const TraceKernel& k = t.kernels[i];
            const double from = k.launchUs >= 0 ? std::min(k.launchUs, k.startUs) : k.startUs;
            first = std::min(first, from);
            firstPredicted = std::min(
                firstPredicted, k.launchUs >= 0 ? std::min(k.launchUs + shift.at(k.launchUs), r.predictedStartUs[i])
                                                : r.predictedStartUs[i]);
            last = std::max(last, measuredEnd(i));
            lastPredicted = std::max(lastPredicted, end[i]);
        }
        r.steps.push_back({-1, (last - first) / 1000, (lastPredicted - firstPredicted) / 1000});
    }
    std::vector<double> measured, predicted;
    for (const ReplayStep& s : r.steps) {
        measured.push_back(s.measuredMs);
        predicted.push_back(s.predictedMs);
    }
    r.measuredMedianMs = medianOf(measured);
    r.predictedMedianMs = medianOf(predicted);
    return r;
}

}  // namespace ts::predictors
