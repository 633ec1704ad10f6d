// Occupancy of kernels on every GPU of the database: our wrapper over the database's per-SM
// limits must give what the CUDA toolkit's calculator gives with the limits of the CUDA C
// Programming Guide, typed in here independently of resources/gpus.json.
#include <cuda_occupancy.h>
#include <gtest/gtest.h>

#include <map>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/occupancy.h"

namespace ts {
namespace {

struct GuideLimits {
    int threadsPerSm, blocksPerSm, regsPerSm, smemPerSmKb, smemPerBlockOptinKb, reservedKb;
};

// CUDA C Programming Guide, "Technical Specifications per Compute Capability".
const std::map<std::string, GuideLimits> kGuide = {
    {"6.0", {2048, 32, 65536, 64, 48, 0}},  {"6.1", {2048, 32, 65536, 96, 48, 0}},
    {"7.0", {2048, 32, 65536, 96, 96, 0}},  {"7.5", {1024, 16, 65536, 64, 64, 0}},
    {"8.0", {2048, 32, 65536, 164, 163, 1}}, {"8.6", {1536, 16, 65536, 100, 99, 1}},
    {"8.9", {1536, 24, 65536, 100, 99, 1}}, {"9.0", {2048, 32, 65536, 228, 227, 1}},
    {"10.0", {2048, 32, 65536, 228, 227, 1}},
};

cudaOccDeviceProp guideProps(const GpuSpec& g) {
    const GuideLimits& l = kGuide.at(g.computeCapability());
    cudaOccDeviceProp p;
    p.computeMajor = g.ccMajor;
    p.computeMinor = g.ccMinor;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = l.threadsPerSm;
    p.regsPerBlock = 65536;
    p.regsPerMultiprocessor = l.regsPerSm;
    p.warpSize = 32;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerMultiprocessor = size_t(l.smemPerSmKb) * 1024;
    p.numSms = int(*g.sms);
    p.sharedMemPerBlockOptin = size_t(l.smemPerBlockOptinKb) * 1024;
    p.reservedSharedMemPerBlock = size_t(l.reservedKb) * 1024;
    return p;
}

int toolkitBlocksPerSm(const GpuSpec& g, const KernelLaunch& k) {
    cudaOccDeviceProp prop = guideProps(g);
    cudaOccFuncAttributes attr;
    attr.maxThreadsPerBlock = 1024;
    attr.numRegs = k.registersPerThread;
    attr.sharedSizeBytes = size_t(k.staticSharedBytes);
    attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    attr.maxDynamicSharedSizeBytes = prop.sharedMemPerBlockOptin;
    attr.numBlockBarriers = 1;
    cudaOccDeviceState state;
    cudaOccResult result;
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, k.threadsPerBlock,
                                                size_t(k.dynamicSharedBytes)) != CUDA_OCC_SUCCESS)
        return 0;
    return result.activeBlocksPerMultiprocessor;
}

TEST(Occupancy, EqualsTheToolkitCalculatorForEveryGpuAndKernelShape) {
    const GpuDatabase db = GpuDatabase::builtin();
    int compared = 0;
    for (const GpuSpec& g : db.gpus()) {
        ASSERT_TRUE(kGuide.count(g.computeCapability())) << g.id << ": add CC " << g.computeCapability() << " here";
        for (int threads : {32, 64, 96, 128, 256, 384, 512, 768, 1024})
            for (int regs : {16, 32, 40, 64, 96, 128, 168, 255})
                for (int smemKb : {0, 4, 16, 32, 48, 64, 96, 100, 160, 200}) {
                    KernelLaunch k{threads, regs, 0, smemKb * 1024, 100000};
                    int expected = toolkitBlocksPerSm(g, k);
                    SCOPED_TRACE(g.id + " threads " + std::to_string(threads) + " regs " + std::to_string(regs) +
                                 " smem " + std::to_string(smemKb) + " KB");
                    if (expected == 0) {
                        EXPECT_THROW(computeOccupancy(g, k), ModelError);
                        continue;
                    }
                    Occupancy o = computeOccupancy(g, k);
                    EXPECT_EQ(o.blocksPerSm, expected);
                    EXPECT_EQ(o.waveSize, int64_t(expected) * int64_t(*g.sms));
                    EXPECT_LE(o.fraction, 1.0);
                    ++compared;
                }
    }
    EXPECT_GT(compared, 10000);
}

TEST(Occupancy, KnownCasesByHand) {
    const GpuDatabase db = GpuDatabase::builtin();
    const GpuSpec& a100 = *db.matchDevice("NVIDIA A100-SXM4-40GB");
    // 256 threads x 32 registers: threads limit 2048/256 = 8 blocks.
    EXPECT_EQ(computeOccupancy(a100, {256, 32, 0, 0, 1}).blocksPerSm, 8);
    // 256 threads x 64 registers: 65536 / (64 x 256) = 4 blocks.
    Occupancy regs = computeOccupancy(a100, {256, 64, 0, 0, 1});
    EXPECT_EQ(regs.blocksPerSm, 4);
    EXPECT_NE(regs.limitedBy.find("registers"), std::string::npos);
    // 128 threads with 48 KB of shared memory (+1 KB reserved): 164 / 49 = 3 blocks.
    EXPECT_EQ(computeOccupancy(a100, {128, 32, 0, 48 * 1024, 1}).blocksPerSm, 3);
    // Turing runs at most 1024 threads per SM: one 1024-thread block.
    EXPECT_EQ(computeOccupancy(*db.matchDevice("Tesla T4"), {1024, 32, 0, 0, 1}).blocksPerSm, 1);
}

TEST(Occupancy, LargeSharedMemoryKernelsRunWhereTheHardwareAllowsOptIn) {
    // An earlier predictor's database set opt-in shared memory to 0 on V100, T4 and A100 and
    // divided by zero for kernels above 48 KB.
    const GpuDatabase db = GpuDatabase::builtin();
    for (const char* name : {"Tesla V100-PCIE-32GB", "Tesla T4", "NVIDIA A100-PCIE-40GB", "NVIDIA H100 80GB HBM3"}) {
        const GpuSpec* g = db.matchDevice(name);
        ASSERT_NE(g, nullptr) << name;
        Occupancy o = computeOccupancy(*g, {256, 64, 0, 64 * 1024, 1000});
        EXPECT_GE(o.blocksPerSm, 1) << name;
        EXPECT_GT(o.waves, 0) << name;
    }
    // Pascal has no opt-in: 64 KB per block cannot launch, and the message says why.
    try {
        computeOccupancy(*db.matchDevice("Tesla P100-PCIE-16GB"), {256, 32, 0, 64 * 1024, 1});
        FAIL() << "expected a ModelError";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("shared memory"), std::string::npos) << e.what();
    }
}

TEST(Occupancy, WavesQuantizeTheGrid) {
    const GpuDatabase db = GpuDatabase::builtin();
    const GpuSpec& v100 = *db.matchDevice("Tesla V100-PCIE-32GB");  // 80 SMs
    Occupancy o = computeOccupancy(v100, {1024, 32, 0, 0, 161});      // 2 blocks per SM: wave of 160
    EXPECT_EQ(o.waveSize, 160);
    EXPECT_EQ(o.waves, 2);
    EXPECT_NEAR(o.lastWaveFill, 1.0 / 160, 1e-12);
}

TEST(Occupancy, RejectsImpossibleKernels) {
    const GpuSpec& g = *GpuDatabase::builtin().matchDevice("Tesla T4");
    EXPECT_THROW(computeOccupancy(g, {2048, 32, 0, 0, 1}), ModelError);
    EXPECT_THROW(computeOccupancy(g, {0, 32, 0, 0, 1}), ModelError);
    EXPECT_THROW(computeOccupancy(g, {128, 300, 0, 0, 1}), ModelError);
    EXPECT_THROW(computeOccupancy(g, {128, 32, 0, 0, 0}), ModelError);
}

}  // namespace
}  // namespace ts
