// Kernel launch overhead: an empty kernel, launched and waited for one at a time (latency),
// and launched back to back (the rate the launch path sustains).
#include <chrono>
#include <string>

#include "benchmarks.h"

namespace ts::kernels::detail {
namespace {

__global__ void emptyKernel() {}

}  // namespace

std::vector<ts::Measurement> measureLaunchOverhead(const BenchContext& ctx) {
    auto launch = [&] {
        emptyKernel<<<1, 1, 0, ctx.stream>>>();
        checkLaunch("empty kernel launch");
    };
    RepeatOptions repeat = ctx.repeat;
    repeat.targetCv = 0.05;  // host-side timings of a few microseconds are noisier

    // Latency: host clock from the launch call until the stream reports completion, averaged
    // over a few launches per run so each run lasts long enough for the host clock.
    const int perRun = ctx.quick ? 20 : 50;
    const Stats latency = repeatUntilStable(
        [&] {
            const auto start = std::chrono::steady_clock::now();
            for (int i = 0; i < perRun; ++i) {
                launch();
                checkCuda(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
            }
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / perRun;
        },
        repeat, ctx.cancelled);

    // Throughput: event time of many launches queued back to back, per launch.
    const int backToBack = ctx.quick ? 200 : 1000;
    EventTimer timer;
    const Stats throughput = repeatUntilStable(
        [&] {
            return timer.time(ctx.stream, [&] {
                for (int i = 0; i < backToBack; ++i) launch();
            }) / backToBack;
        },
        repeat, ctx.cancelled);

    return {measured("launch_latency", "us", latency.median * 1e3, latency,
                     "empty <<<1,1>>> kernel: host time from the launch call to cudaStreamSynchronize "
                     "returning, mean of " +
                         std::to_string(perRun) + " per run"),
            measured("launch_throughput", "us", throughput.median * 1e3, throughput,
                     "empty <<<1,1>>> kernel: event time of " + std::to_string(backToBack) +
                         " back-to-back launches, per launch")};
}

}  // namespace ts::kernels::detail
