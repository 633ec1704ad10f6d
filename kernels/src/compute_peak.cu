// FP32 FMA peak and the SM clock it runs at: independent FMA chains on every thread of a full
// wave, and clock64() cycles per block over the kernel's event time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "benchmarks.h"

namespace ts::kernels::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kChains = 8;   // independent dependency chains per thread (instruction-level parallelism)
constexpr int kUnroll = 16;  // FMAs per chain per loop trip, so loop overhead is ~1% of instructions

// x <- x * a + b converges to b / (1 - a) = 1 for a = 0.999, b = 0.001: no overflow, no denormals.
// a and b arrive at run time, so the compiler cannot fold the chains.
__global__ void __launch_bounds__(kThreads)
    fmaKernel(int trips, float a, float b, float never, float* __restrict__ sink,
              unsigned long long* __restrict__ maxCycles) {
    const long long start = clock64();
    float x[kChains];
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = threadIdx.x * 1e-3f + c;
    for (int t = 0; t < trips; ++t) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
            for (int c = 0; c < kChains; ++c) x[c] = fmaf(x[c], a, b);
        }
    }
    float s = 0;
#pragma unroll
    for (int c = 0; c < kChains; ++c) s += x[c];
    if (s == never) sink[0] = s;
    __syncthreads();  // every warp of the block is done before its duration is read
    if (threadIdx.x == 0) atomicMax(maxCycles, static_cast<unsigned long long>(clock64() - start));
}

}  // namespace

std::vector<ts::Measurement> measureFp32Peak(const BenchContext& ctx) {
    const int blocks = fullWaveBlocks(reinterpret_cast<const void*>(fmaKernel), kThreads, ctx.device);
    DeviceBuffer sink(sizeof(float), "cudaMalloc");
    DeviceBuffer cycles(sizeof(unsigned long long), "cudaMalloc");
    auto* maxCycles = cycles.get<unsigned long long>();
    EventTimer timer;

    int trips = 256;
    auto launch = [&] {
        fmaKernel<<<blocks, kThreads, 0, ctx.stream>>>(trips, 0.999f, 0.001f, -1.0f, sink.get<float>(), maxCycles);
        checkLaunch("FMA kernel launch");
    };
    // Size one launch to about runMs: a long single launch keeps every SM busy the whole time,
    // which the clock reading relies on.
    launch();
    checkCuda(cudaStreamSynchronize(ctx.stream), "FMA kernel");
    const double shortMs = timer.time(ctx.stream, launch);
    trips = static_cast<int>(std::clamp(trips * ctx.repeat.runMs / std::max(shortMs, 1e-3), 256.0, 1.0e8));

    std::vector<double> mhz;  // one per run, warm-up included; the timed runs are the last ones
    const Stats stats = repeatUntilStable(
        [&] {
            checkCuda(cudaMemsetAsync(maxCycles, 0, sizeof(unsigned long long), ctx.stream), "cudaMemsetAsync");
            const double ms = timer.time(ctx.stream, launch);
            unsigned long long c = 0;
            checkCuda(cudaMemcpy(&c, maxCycles, sizeof c, cudaMemcpyDeviceToHost), "cudaMemcpy");
            mhz.push_back(static_cast<double>(c) / (ms * 1e3));
            return ms;
        },
        ctx.repeat, ctx.cancelled);

    const double flops = 2.0 * kChains * kUnroll * static_cast<double>(trips) * blocks * kThreads;
    const std::string config = std::to_string(blocks) + " blocks of " + std::to_string(kThreads) + ", " +
                               std::to_string(kChains) + " independent FMA chains per thread, " +
                               std::to_string(static_cast<long long>(kUnroll) * trips) + " FMAs per chain";
    std::vector<ts::Measurement> out;
    out.push_back(
        measured("fp32_fma", "TFLOP/s", flops / (stats.median * 1e-3) / 1e12, stats, config + " (2 FLOP per FMA)"));

    std::vector<double> timed(mhz.end() - stats.runs, mhz.end());
    Stats clock = stats;
    clock.median = median(timed);
    clock.cv = coefficientOfVariation(timed);
    out.push_back(measured("sm_clock_under_load", "MHz", clock.median, clock,
                           "longest block's clock64() cycles over the kernel's event time, during the FP32 FMA "
                           "benchmark (" +
                               config + ")"));
    return out;
}

}  // namespace ts::kernels::detail
