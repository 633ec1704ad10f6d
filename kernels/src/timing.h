#pragma once
// Timing discipline shared by every benchmark: CUDA events around the work, untimed warm-up
// first, then timed runs until their spread settles; the median is what gets reported.
#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "cuda_check.h"

namespace ts::kernels::detail {

// Thrown out of a benchmark when CalibrationOptions::cancelled turns true.
struct Cancelled {};

struct RepeatOptions {
    double warmupMs = 200;  // untimed runs first: clocks ramp up, lazy module loading, caches
    int warmupRuns = 2;
    int minRuns = 10;
    int maxRuns = 100;
    double targetCv = 0.02;  // stop once the coefficient of variation is below this...
    double budgetMs = 3000;  // ...or the timed runs have taken this long (host time)
    double runMs = 10;       // what one timed run should last, batching calls to get there
};

struct Stats {
    double median = 0;
    double cv = 0;  // standard deviation over mean of the timed runs
    int runs = 0;
};

double median(std::vector<double> values);
double coefficientOfVariation(const std::vector<double>& values);

// Calls `sample` (one timed run, returning its duration in ms) through warm-up and then until the
// spread settles, maxRuns is reached or the budget is spent. Throws Cancelled when `cancelled`
// says so. The timed runs are the last Stats::runs calls of `sample`.
Stats repeatUntilStable(const std::function<double()>& sample, const RepeatOptions& options,
                        const std::function<bool()>& cancelled);

// GPU time in ms between two events around the work `enqueue` puts on `stream`.
class EventTimer {
public:
    double time(cudaStream_t stream, const std::function<void()>& enqueue);

private:
    Event start_, stop_;
};

// How many back-to-back calls of `msPerCall` make one timed run of about `runMs`.
int callsPerRun(double msPerCall, double runMs, int maxCalls = 100000);

}  // namespace ts::kernels::detail
