#include "trainscope/core/occupancy.h"

#include <cuda_occupancy.h>

#include "trainscope/core/errors.h"

namespace ts {

Occupancy computeOccupancy(const GpuSpec& gpu, const KernelLaunch& k) {
    const ArchLimits& l = gpu.limits;
    if (!gpu.sms.known() || *gpu.sms < 1) throw ModelError(gpu.id, "its SM count is unknown, so occupancy is too");
    cudaOccDeviceProp prop;
    prop.computeMajor = gpu.ccMajor;
    prop.computeMinor = gpu.ccMinor;
    prop.maxThreadsPerBlock = l.maxThreadsPerBlock;
    prop.maxThreadsPerMultiprocessor = l.maxThreadsPerSm;
    prop.regsPerBlock = l.maxRegistersPerBlock;
    prop.regsPerMultiprocessor = l.registersPerSm;
    prop.warpSize = l.warpSize;
    prop.sharedMemPerBlock = size_t(l.sharedMemoryPerBlockBytes);
    prop.sharedMemPerMultiprocessor = size_t(l.sharedMemoryPerSmBytes);
    prop.numSms = int(*gpu.sms);
    prop.sharedMemPerBlockOptin = size_t(l.sharedMemoryPerBlockOptinBytes);
    prop.reservedSharedMemPerBlock = size_t(l.reservedSharedMemoryPerBlockBytes);

    cudaOccFuncAttributes attr;
    attr.maxThreadsPerBlock = l.maxThreadsPerBlock;
    attr.numRegs = k.registersPerThread;
    attr.sharedSizeBytes = size_t(k.staticSharedBytes);
    attr.partitionedGCConfig = PARTITIONED_GC_OFF;
    // Kernels that use more than the default per-block shared memory have opted in (they could
    // not launch otherwise); the opt-in limit is the one that applies to them.
    attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    attr.maxDynamicSharedSizeBytes = size_t(l.sharedMemoryPerBlockOptinBytes);
    attr.numBlockBarriers = 1;
    cudaOccDeviceState state;

    auto cannot = [&](const std::string& why) -> ModelError {
        return ModelError(gpu.id, "a kernel of " + std::to_string(k.threadsPerBlock) + " threads, " +
                                      std::to_string(k.registersPerThread) + " registers per thread and " +
                                      std::to_string(k.staticSharedBytes + k.dynamicSharedBytes) +
                                      " bytes of shared memory per block cannot run: " + why);
    };
    if (k.threadsPerBlock < 1 || k.threadsPerBlock > l.maxThreadsPerBlock)
        throw cannot("blocks hold 1 to " + std::to_string(l.maxThreadsPerBlock) + " threads");
    if (k.registersPerThread < 0 || k.registersPerThread > l.maxRegistersPerThread)
        throw cannot("at most " + std::to_string(l.maxRegistersPerThread) + " registers per thread");
    if (k.staticSharedBytes < 0 || k.dynamicSharedBytes < 0 ||
        int64_t(k.staticSharedBytes) + k.dynamicSharedBytes > l.sharedMemoryPerBlockOptinBytes)
        throw cannot("at most " + std::to_string(l.sharedMemoryPerBlockOptinBytes) + " bytes of shared memory per block");
    if (k.gridBlocks < 1) throw cannot("the grid needs at least one block");

    cudaOccResult result;
    cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, k.threadsPerBlock,
                                                               size_t(k.dynamicSharedBytes));
    if (err != CUDA_OCC_SUCCESS)
        throw cannot(err == CUDA_OCC_ERROR_UNKNOWN_DEVICE ? "cuda_occupancy.h does not know compute capability " +
                                                                gpu.computeCapability()
                                                          : "cuda_occupancy.h rejected the configuration");
    std::string limitedBy;
    for (auto [bit, name] : {std::pair{OCC_LIMIT_WARPS, "warps"}, {OCC_LIMIT_REGISTERS, "registers"},
                             {OCC_LIMIT_SHARED_MEMORY, "shared memory"}, {OCC_LIMIT_BLOCKS, "blocks"},
                             {OCC_LIMIT_BARRIERS, "barriers"}})
        if (result.limitingFactors & bit) limitedBy += (limitedBy.empty() ? "" : "+") + std::string(name);
    if (result.activeBlocksPerMultiprocessor <= 0)
        throw cannot("not even one block fits on an SM (" + (limitedBy.empty() ? "limits" : limitedBy) + ")");

    Occupancy o;
    o.blocksPerSm = result.activeBlocksPerMultiprocessor;
    int warpsPerBlock = (k.threadsPerBlock + l.warpSize - 1) / l.warpSize;
    o.activeWarpsPerSm = o.blocksPerSm * warpsPerBlock;
    o.maxWarpsPerSm = l.maxThreadsPerSm / l.warpSize;
    o.fraction = double(o.activeWarpsPerSm) / o.maxWarpsPerSm;
    o.limitedBy = limitedBy;
    o.waveSize = int64_t(o.blocksPerSm) * int64_t(*gpu.sms);
    o.waves = (k.gridBlocks + o.waveSize - 1) / o.waveSize;
    int64_t last = k.gridBlocks - (o.waves - 1) * o.waveSize;
    o.lastWaveFill = double(last) / o.waveSize;
    return o;
}

}  // namespace ts
