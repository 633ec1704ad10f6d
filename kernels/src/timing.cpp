#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace ts::kernels::detail {

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + mid, values.end());
    if (values.size() % 2 == 1) return values[mid];
    const double upper = values[mid];
    return (upper + *std::max_element(values.begin(), values.begin() + mid)) / 2;
}

double coefficientOfVariation(const std::vector<double>& values) {
    if (values.size() < 2) return 0;
    double mean = 0;
    for (double v : values) mean += v;
    mean /= values.size();
    double var = 0;
    for (double v : values) var += (v - mean) * (v - mean);
    var /= values.size() - 1;
    return mean > 0 ? std::sqrt(var) / mean : 0;
}

Stats repeatUntilStable(const std::function<double()>& sample, const RepeatOptions& options,
                        const std::function<bool()>& cancelled) {
    using Clock = std::chrono::steady_clock;
    auto msSince = [](Clock::time_point t) {
        return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    };
    auto checkCancelled = [&] {
        if (cancelled && cancelled()) throw Cancelled{};
    };

    const Clock::time_point warmupStart = Clock::now();
    for (int i = 0; i < options.warmupRuns || msSince(warmupStart) < options.warmupMs; ++i) {
        checkCancelled();
        sample();
    }

    std::vector<double> samples;
    const Clock::time_point start = Clock::now();
    while (true) {
        checkCancelled();
        samples.push_back(sample());
        const int n = static_cast<int>(samples.size());
        if (n >= options.maxRuns) break;
        if (n >= options.minRuns &&
            (coefficientOfVariation(samples) < options.targetCv || msSince(start) > options.budgetMs))
            break;
    }
    return {median(samples), coefficientOfVariation(samples), static_cast<int>(samples.size())};
}

double EventTimer::time(cudaStream_t stream, const std::function<void()>& enqueue) {
    checkCuda(cudaEventRecord(start_.get(), stream), "cudaEventRecord");
    enqueue();
    checkCuda(cudaEventRecord(stop_.get(), stream), "cudaEventRecord");
    checkCuda(cudaEventSynchronize(stop_.get()), "cudaEventSynchronize");
    float ms = 0;
    checkCuda(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "cudaEventElapsedTime");
    return ms;
}

int callsPerRun(double msPerCall, double runMs, int maxCalls) {
    if (msPerCall <= 0) return maxCalls;
    return static_cast<int>(std::clamp(std::ceil(runMs / msPerCall), 1.0, static_cast<double>(maxCalls)));
}

}  // namespace ts::kernels::detail
