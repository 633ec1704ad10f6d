#pragma once
// Micro-benchmarks that measure what the local GPU really delivers: DRAM and L2 bandwidth,
// FP32 and tensor-core peaks, the SM clock under load, and kernel launch overhead.
#include <functional>
#include <string>

#include "trainscope/core/gpu_device.h"

namespace ts::kernels {

struct CalibrationOptions {
    int device = 0;      // CUDA device index, as in DeviceQuery::devices
    bool quick = false;  // 4096 GEMMs and fewer repetitions: a few seconds instead of tens of seconds
    // Called before each benchmark (stage names a benchmark, fraction in [0, 1]) and once with
    // "done", 1.0 at the end. Called on the calling thread.
    std::function<void(const std::string& stage, double fraction)> progress;
    // Polled between repetitions; returning true stops calibration early.
    std::function<bool()> cancelled;
};

// Runs every benchmark on one GPU. Throws ts::DeviceError (one sentence) when there is no usable
// device or `device` is out of range. A benchmark that cannot run (precision unsupported, out of
// memory, no cuBLASLt algorithm) yields a Measurement with an empty value and the reason in
// `detail`, and the others still run. When cancelled, returns what was measured so far with a
// warning. Measurement names and units:
// dram_read, dram_write, dram_copy, l2_read (GB/s); fp32_fma, tensor_tf32, tensor_fp16,
// tensor_bf16, tensor_fp8 (TFLOP/s); sm_clock_under_load (MHz); launch_latency,
// launch_throughput (us).
ts::CalibrationResult calibrate(const CalibrationOptions& options);

}  // namespace ts::kernels
