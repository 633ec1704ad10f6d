#pragma once
// The micro-benchmarks calibration.cpp runs, one file each. Each throws ts::DeviceError when it
// cannot run at all (the caller records that as a Measurement without a value) and Cancelled
// when the user stops calibration.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "timing.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/gpu_device.h"

namespace ts::kernels::detail {

struct BenchContext {
    const ts::DeviceProperties& device;
    cudaStream_t stream;
    bool quick;
    std::function<bool()> cancelled;
    RepeatOptions repeat;  // warm-up, run length and stopping rule for this mode
};

// A figure from a median time: value = work / median, with the run statistics and the set-up.
ts::Measurement measured(std::string name, std::string unit, double value, const Stats& stats, std::string detail);

// A figure that could not be measured, and why.
ts::Measurement notMeasured(std::string name, std::string unit, std::string why);

// dram_read, dram_write, dram_copy (GB/s), over a buffer many times the L2 size.
std::vector<ts::Measurement> measureDramBandwidth(const BenchContext& ctx);
// l2_read (GB/s), over a buffer a quarter of the L2 size read repeatedly.
ts::Measurement measureL2Bandwidth(const BenchContext& ctx);
// fp32_fma (TFLOP/s) and sm_clock_under_load (MHz) from the same FMA kernel.
std::vector<ts::Measurement> measureFp32Peak(const BenchContext& ctx);
// launch_latency and launch_throughput (us) of an empty kernel.
std::vector<ts::Measurement> measureLaunchOverhead(const BenchContext& ctx);

// tensor_tf32 / tensor_fp16 / tensor_bf16 / tensor_fp8 (TFLOP/s) through a square cuBLASLt GEMM, for
// the GPU database's tensor-core precisions (Tf32, Fp16, Bf16, Fp8; Fp32 is measureFp32Peak's).
ts::Measurement measureTensorPeak(const BenchContext& ctx, ts::ComputePrecision precision);

// Random, non-zero test data (magnitudes in [0.25, 1), random signs, never NaN) of one element type.
enum class ElementKind { F32, F16, BF16, E4M3 };
void fillRandom(void* data, size_t count, ElementKind kind, uint32_t seed, cudaStream_t stream);

// Blocks of `threads` that keep every SM full with `kernel`, one wave.
int fullWaveBlocks(const void* kernel, int threads, const ts::DeviceProperties& device);

inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = kMiB * 1024.0;

}  // namespace ts::kernels::detail
