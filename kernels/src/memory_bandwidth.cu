// DRAM and L2 bandwidth: grid-stride kernels with 16-byte accesses, one full wave of blocks.
#include <algorithm>
#include <cstdio>
#include <string>

#include "benchmarks.h"

namespace ts::kernels::detail {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float sum4(float4 v) {
    return (v.x + v.y) + (v.z + v.w);
}

// Reads every element once. The sum is stored only if it equals `never`, which the data cannot
// produce, but the compiler cannot know that, so no load is optimised away.
__global__ void __launch_bounds__(kThreads)
    readKernel(const float4* __restrict__ in, size_t n, float never, float* __restrict__ sink) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    float acc = 0;
    for (; i + 3 * stride < n; i += 4 * stride) {  // four independent loads in flight per thread
        const float4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
        acc += (sum4(a) + sum4(b)) + (sum4(c) + sum4(d));
    }
    for (; i < n; i += stride) acc += sum4(in[i]);
    if (acc == never) sink[0] = acc;
}

__global__ void __launch_bounds__(kThreads) writeKernel(float4* __restrict__ out, size_t n, float value) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const float4 v = make_float4(value, value, value, value);
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = v;
}

__global__ void __launch_bounds__(kThreads)
    copyKernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const float4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
        out[i] = a, out[i + stride] = b, out[i + 2 * stride] = c, out[i + 3 * stride] = d;
    }
    for (; i < n; i += stride) out[i] = in[i];
}

// Reads a buffer that fits in L2 `passes` times; n is a multiple of 4 * stride, so each thread
// has four loads in flight with no bounds check between them. __ldcg caches in L2 only, so the
// L1 of each SM cannot serve repeats; each pass also starts at another offset, so no two loads
// of a thread have an address the compiler could prove equal and merge.
__global__ void __launch_bounds__(kThreads) l2ReadKernel(const float4* __restrict__ in, size_t n, int passes,
                                                         size_t shift, float never, float* __restrict__ sink) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    auto wrap = [n](size_t j) { return j >= n ? j - n : j; };
    float acc = 0;
    for (int p = 0; p < passes; ++p) {
        const size_t offset = (static_cast<size_t>(p) * shift) % n;
        for (size_t i = first + offset; i < n + offset; i += 4 * stride) {
            const float4 a = __ldcg(in + wrap(i)), b = __ldcg(in + wrap(i + stride));
            const float4 c = __ldcg(in + wrap(i + 2 * stride)), d = __ldcg(in + wrap(i + 3 * stride));
            acc += (sum4(a) + sum4(b)) + (sum4(c) + sum4(d));
        }
    }
    if (acc == never) sink[0] = acc;
}

constexpr float kNever = -1.0e30f;  // no sum of values in (-1, 1) over these buffers reaches it

std::string mib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f MiB", bytes / kMiB);
    return text;
}

// Times `launch` (one pass over `bytesPerLaunch`), batched to runs of about ctx.repeat.runMs.
// A failure (a launch error, say) becomes a figure without value, so the other kernels still run.
ts::Measurement timeBandwidth(const BenchContext& ctx, const char* name, double bytesPerLaunch,
                              const std::function<void()>& launch, const std::string& detail) try {
    EventTimer timer;
    launch();  // first launch loads the module
    checkCuda(cudaStreamSynchronize(ctx.stream), name);
    const int calls = callsPerRun(timer.time(ctx.stream, launch), ctx.repeat.runMs);
    const Stats stats = repeatUntilStable(
        [&] {
            return timer.time(ctx.stream, [&] {
                for (int c = 0; c < calls; ++c) launch();
            });
        },
        ctx.repeat, ctx.cancelled);
    const double gbs = bytesPerLaunch * calls / (stats.median * 1e-3) / 1e9;
    return measured(name, "GB/s", gbs, stats, detail + ", " + std::to_string(calls) + " launches per timed run");
} catch (const ts::DeviceError& e) {
    return notMeasured(name, "GB/s", e.what());
}

}  // namespace

std::vector<ts::Measurement> measureDramBandwidth(const BenchContext& ctx) {
    const double l2 = std::max(ctx.device.l2CacheBytes, 1 << 20);
    size_t freeBytes = 0, totalBytes = 0;
    checkCuda(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
    // Many times the L2 so that almost every access goes to DRAM; at most 60% of what is free.
    double bytes = std::min(std::max(16 * l2, 1.0 * kGiB), 0.6 * freeBytes);
    bytes = std::floor(bytes / (2 * kMiB)) * 2 * kMiB;
    if (bytes < 4 * l2 || bytes < 64 * kMiB)
        throw ts::DeviceError("only " + mib(freeBytes) + " of GPU memory is free, too little for a buffer several " +
                              "times the " + mib(l2) + " L2 cache");
    DeviceBuffer buffer(static_cast<size_t>(bytes), "cudaMalloc (DRAM bandwidth buffer)");
    DeviceBuffer sink(sizeof(float), "cudaMalloc");
    fillRandom(buffer.get(), buffer.bytes() / sizeof(float), ElementKind::F32, 1, ctx.stream);

    float4* data = buffer.get<float4>();
    const size_t n = buffer.bytes() / sizeof(float4);
    const std::string size = mib(bytes) + " buffer (L2 " + mib(l2) + ")";
    std::vector<ts::Measurement> out;

    const int readBlocks = fullWaveBlocks(reinterpret_cast<const void*>(readKernel), kThreads, ctx.device);
    out.push_back(timeBandwidth(
        ctx, "dram_read", bytes,
        [&] {
            readKernel<<<readBlocks, kThreads, 0, ctx.stream>>>(data, n, kNever, sink.get<float>());
            checkLaunch("read kernel launch");
        },
        "read of a " + size + ", 16-byte loads, " + std::to_string(readBlocks) + " blocks of " +
            std::to_string(kThreads)));

    const int writeBlocks = fullWaveBlocks(reinterpret_cast<const void*>(writeKernel), kThreads, ctx.device);
    out.push_back(timeBandwidth(
        ctx, "dram_write", bytes,
        [&] {
            writeKernel<<<writeBlocks, kThreads, 0, ctx.stream>>>(data, n, 0.5f);
            checkLaunch("write kernel launch");
        },
        "write of a " + size + ", 16-byte stores, " + std::to_string(writeBlocks) + " blocks of " +
            std::to_string(kThreads)));

    // Copy from the first half to the second: bytes read plus bytes written = the whole buffer.
    const int copyBlocks = fullWaveBlocks(reinterpret_cast<const void*>(copyKernel), kThreads, ctx.device);
    out.push_back(timeBandwidth(
        ctx, "dram_copy", bytes,
        [&] {
            copyKernel<<<copyBlocks, kThreads, 0, ctx.stream>>>(data, data + n / 2, n / 2);
            checkLaunch("copy kernel launch");
        },
        "copy between the halves of a " + size + " (read + written bytes), " + std::to_string(copyBlocks) +
            " blocks of " + std::to_string(kThreads)));
    return out;
}

ts::Measurement measureL2Bandwidth(const BenchContext& ctx) {
    const double l2 = ctx.device.l2CacheBytes;
    if (l2 < 1 * kMiB) throw ts::DeviceError("the device reports no usable L2 cache size");
    // About a quarter of the L2: on A100/H100 the L2 is two partitions and data read by every SM
    // may be held in both, so half the nominal size can already miss. Blocks per SM are as many
    // as fit that size with four 16-byte loads per thread (at least one, at most a full wave).
    const int fullWave = fullWaveBlocks(reinterpret_cast<const void*>(l2ReadKernel), kThreads, ctx.device);
    const double bytesPerBlockPerSm = 4.0 * sizeof(float4) * kThreads * ctx.device.sms;
    const int perSm = std::clamp(static_cast<int>(l2 / 4 / bytesPerBlockPerSm), 1, fullWave / ctx.device.sms);
    const int blocks = perSm * ctx.device.sms;
    const size_t n = 4 * static_cast<size_t>(blocks) * kThreads;
    const double bytesPerPass = static_cast<double>(n) * sizeof(float4);
    const int passes = static_cast<int>(std::max(1.0, std::ceil(1.0 * kGiB / bytesPerPass)));
    DeviceBuffer buffer(n * sizeof(float4), "cudaMalloc (L2 buffer)");
    DeviceBuffer sink(sizeof(float), "cudaMalloc");
    fillRandom(buffer.get(), n * 4, ElementKind::F32, 2, ctx.stream);

    const float4* data = buffer.get<float4>();
    return timeBandwidth(
        ctx, "l2_read", bytesPerPass * passes,
        [&] {
            l2ReadKernel<<<blocks, kThreads, 0, ctx.stream>>>(data, n, passes, 32 * 97, kNever, sink.get<float>());
            checkLaunch("L2 read kernel launch");
        },
        mib(bytesPerPass) + " buffer (L2 " + mib(l2) + ") read " + std::to_string(passes) +
            " times per launch with L2-only 16-byte loads, " + std::to_string(blocks) + " blocks of " +
            std::to_string(kThreads) + ", 4 loads in flight per thread");
}

}  // namespace ts::kernels::detail
