#pragma once
// Occupancy and wave size of a kernel on any GPU of the database, computed by the CUDA
// toolkit's own calculator (cuda_occupancy.h) from the database's per-SM limits.
#include <cstdint>
#include <string>

#include "trainscope/core/gpu_database.h"

namespace ts {

struct KernelLaunch {
    int threadsPerBlock = 256;
    int registersPerThread = 32;
    int staticSharedBytes = 0;
    int dynamicSharedBytes = 0;
    int64_t gridBlocks = 1;
};

struct Occupancy {
    int blocksPerSm = 0;          // resident thread blocks per SM
    int activeWarpsPerSm = 0;
    int maxWarpsPerSm = 0;
    double fraction = 0;          // active warps / maximum warps
    std::string limitedBy;        // "warps", "registers", "shared memory", "blocks" (joined with '+')
    int64_t waveSize = 0;         // blocks that run at once on the whole GPU: blocksPerSm x SMs
    int64_t waves = 0;            // ceil(gridBlocks / waveSize)
    double lastWaveFill = 0;      // fraction of the last wave that is occupied (wave quantization)
};

// Throws ModelError naming the GPU when the kernel cannot run on it at all (block larger
// than the GPU allows, more shared memory or registers than an SM has).
Occupancy computeOccupancy(const GpuSpec& gpu, const KernelLaunch& kernel);

}  // namespace ts
