#pragma once
// What the local machine reports about its GPUs, and what calibration measured on one.
// Plain structs: kernels/ fills them through the CUDA runtime, core/ matches them to the
// GPU database, and nothing here needs CUDA to compile.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ts {

// One GPU as the CUDA runtime describes it (cudaGetDeviceProperties / cudaDeviceGetAttribute).
struct DeviceProperties {
    int index = 0;
    std::string name;            // as CUDA reports it, e.g. "NVIDIA H100 80GB HBM3"
    std::string uuid;            // "GPU-xxxxxxxx-..." where available
    std::string pciBusId;        // "0000:3b:00.0"
    int ccMajor = 0;
    int ccMinor = 0;
    int sms = 0;
    uint64_t totalMemoryBytes = 0;
    int maxSmClockMHz = 0;       // cudaDevAttrClockRate (the maximum, not the sustained clock)
    int memoryClockMHz = 0;      // cudaDevAttrMemoryClockRate
    int memoryBusWidthBits = 0;
    int l2CacheBytes = 0;
    int maxThreadsPerSm = 0;
    int maxBlocksPerSm = 0;
    int registersPerSm = 0;
    int registersPerBlock = 0;
    int maxThreadsPerBlock = 0;
    int warpSize = 32;
    int sharedMemoryPerSmBytes = 0;
    int sharedMemoryPerBlockBytes = 0;
    int sharedMemoryPerBlockOptinBytes = 0;
    int reservedSharedMemoryPerBlockBytes = 0;
    bool eccEnabled = false;
    int pciGeneration = 0;       // 0 when unknown
    int pciLinkWidth = 0;

    // DRAM bandwidth implied by the memory clock and bus (double data rate), in GB/s.
    double theoreticalBandwidthGBs() const {
        return 2.0 * memoryClockMHz * 1e6 * (memoryBusWidthBits / 8.0) / 1e9;
    }
};

// Result of asking the runtime which GPUs exist. `available` is false with a sentence in
// `status` when this build has no CUDA, no driver is installed, or no device is visible.
struct DeviceQuery {
    bool cudaBuild = false;      // the binary was built with CUDA support
    bool available = false;      // at least one device is usable
    std::string status;          // one sentence for the user: what was found or why nothing was
    int driverVersion = 0;       // e.g. 13000 for CUDA 13.0; 0 when no driver
    int runtimeVersion = 0;
    std::vector<DeviceProperties> devices;
};

// One micro-benchmark's figure, measured after warm-up and repeated until stable.
struct Measurement {
    std::string name;            // "dram_read", "l2_read", "fp32_fma", "tensor_bf16", "launch_latency"...
    std::optional<double> value; // in `unit`; empty when the benchmark could not run
    std::string unit;            // "GB/s", "TFLOP/s", "us", "MHz"
    double cv = 0;               // coefficient of variation over the timed repetitions
    int repetitions = 0;
    std::string detail;          // configuration (sizes, algorithm) or why it did not run
};

// What `trainscope-cli calibrate` measured on one GPU.
struct CalibrationResult {
    DeviceProperties device;
    int driverVersion = 0;
    int runtimeVersion = 0;
    std::string cublasVersion;
    std::string date;                    // ISO 8601, UTC
    std::vector<Measurement> measurements;
    std::vector<std::string> warnings;   // e.g. "fp8: not supported by compute capability 8.0"

    const Measurement* find(const std::string& name) const {
        for (const Measurement& m : measurements)
            if (m.name == name) return &m;
        return nullptr;
    }
};

}  // namespace ts
