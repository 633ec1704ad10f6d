#pragma once
// Internal: repeats a timed piece of work after warm-up until its spread settles.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include "device_runtime.h"
#include "trainscope/core/profiler.h"

namespace ts::torchexec {

inline TimingStat timingStat(std::vector<double> samples) {
    TimingStat s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    s.medianMs = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    s.minMs = samples.front();
    s.maxMs = samples.back();
    double mean = 0;
    for (double x : samples) mean += x;
    mean /= static_cast<double>(n);
    double var = 0;
    for (double x : samples) var += (x - mean) * (x - mean);
    s.cv = n > 1 && mean > 0 ? std::sqrt(var / static_cast<double>(n - 1)) / mean : 0;
    s.repeats = static_cast<int>(n);
    return s;
}

// `setup` (untimed, may be empty) runs before every call of `work`; the device is synchronized
// between them so that each timing holds `work` alone. Stops once at least minRepeats were kept and
// their coefficient of variation is below targetCv, or at maxRepeats, or when the time budget is
// spent, or when cancelled. `calls` counts every call of work, warm-up included.
class RepeatTimer {
public:
    RepeatTimer(DeviceRuntime& rt, const ProfileOptions& o) : rt_(rt), o_(o) {}

    TimingStat measure(const std::function<void()>& setup, const std::function<void()>& work, int* calls = nullptr) {
        auto begin = std::chrono::steady_clock::now();
        auto elapsed = [&] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        };
        int n = 0;
        for (int i = 0; i < o_.warmup; ++i) {
            if (setup) setup();
            rt_.synchronize();
            rt_.timeMs(work);
            ++n;
            if (elapsed() > o_.maxSecondsPerMeasurement) break;
        }
        std::vector<double> samples;
        while (static_cast<int>(samples.size()) < std::max(1, o_.maxRepeats)) {
            if (o_.cancelled && o_.cancelled->load()) break;
            if (setup) setup();
            rt_.synchronize();
            samples.push_back(rt_.timeMs(work));
            ++n;
            if (static_cast<int>(samples.size()) >= o_.minRepeats && timingStat(samples).cv <= o_.targetCv) break;
            if (elapsed() > o_.maxSecondsPerMeasurement && static_cast<int>(samples.size()) >= std::min(3, o_.minRepeats))
                break;
        }
        if (calls) *calls = n;
        return timingStat(samples);
    }

private:
    DeviceRuntime& rt_;
    const ProfileOptions& o_;
};

}  // namespace ts::torchexec
