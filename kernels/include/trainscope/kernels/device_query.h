#pragma once
// Which CUDA GPUs this machine has, as the CUDA runtime describes them.
#include "trainscope/core/gpu_device.h"

namespace ts::kernels {

// Oldest GPU this build can measure, as major * 10 + minor: CUDA 13 compiles for 7.5 and newer.
inline constexpr int kMinComputeCapability = 75;

// Asks the CUDA runtime for every visible device and fills all DeviceProperties fields.
// Never throws and never prints: without a driver, without a device, or in a build without
// CUDA it returns available = false and one sentence in `status` saying why.
ts::DeviceQuery queryDevices();

}  // namespace ts::kernels
