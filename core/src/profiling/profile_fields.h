#pragma once
// The plain fields of the profile structs and their JSON keys, listed once so that the writer
// and the reader cannot disagree (docs/profile-format.md documents each one).
#include <cstdint>
#include <string>

#include "trainscope/core/profile.h"

namespace ts::profilefile {

inline constexpr const char* kFormat = "trainscope-profile";

// Limits on array sizes: far beyond any real profile, low enough that a damaged or hostile file
// is refused before it costs much memory.
inline constexpr size_t kMaxRuns = 10'000;
inline constexpr size_t kMaxParts = 10'000;
inline constexpr size_t kMaxNotes = 100'000;
inline constexpr size_t kMaxKernelsPerPass = 1'000'000;
inline constexpr int64_t kMaxInt = 2147483647;

template <class Struct, class T>
struct Field {
    const char* key;
    T Struct::*member;
};

inline constexpr Field<DeviceProperties, std::string> kDeviceTextFields[] = {
    {"name", &DeviceProperties::name},
    {"uuid", &DeviceProperties::uuid},
    {"pci_bus_id", &DeviceProperties::pciBusId},
};

// compute_capability ("9.0") and total_memory_bytes (64-bit) are handled on their own.
inline constexpr Field<DeviceProperties, int> kDeviceIntFields[] = {
    {"index", &DeviceProperties::index},
    {"sms", &DeviceProperties::sms},
    {"max_sm_clock_mhz", &DeviceProperties::maxSmClockMHz},
    {"memory_clock_mhz", &DeviceProperties::memoryClockMHz},
    {"memory_bus_width_bits", &DeviceProperties::memoryBusWidthBits},
    {"l2_cache_bytes", &DeviceProperties::l2CacheBytes},
    {"max_threads_per_sm", &DeviceProperties::maxThreadsPerSm},
    {"max_blocks_per_sm", &DeviceProperties::maxBlocksPerSm},
    {"registers_per_sm", &DeviceProperties::registersPerSm},
    {"registers_per_block", &DeviceProperties::registersPerBlock},
    {"max_threads_per_block", &DeviceProperties::maxThreadsPerBlock},
    {"warp_size", &DeviceProperties::warpSize},
    {"shared_memory_per_sm_bytes", &DeviceProperties::sharedMemoryPerSmBytes},
    {"shared_memory_per_block_bytes", &DeviceProperties::sharedMemoryPerBlockBytes},
    {"shared_memory_per_block_optin_bytes", &DeviceProperties::sharedMemoryPerBlockOptinBytes},
    {"reserved_shared_memory_per_block_bytes", &DeviceProperties::reservedSharedMemoryPerBlockBytes},
    {"pci_generation", &DeviceProperties::pciGeneration},
    {"pci_link_width", &DeviceProperties::pciLinkWidth},
};

// Written only when not empty (a CPU run has no CUDA runtime, cuDNN, driver or CUPTI).
inline constexpr Field<SoftwareVersions, std::string> kSoftwareFields[] = {
    {"trainscope", &SoftwareVersions::trainscope},
    {"libtorch", &SoftwareVersions::libtorch},
    {"cuda_runtime", &SoftwareVersions::cudaRuntime},
    {"cudnn", &SoftwareVersions::cudnn},
    {"driver", &SoftwareVersions::driver},
    {"cupti", &SoftwareVersions::cupti},
};

inline constexpr Field<MemoryProfile, double> kMemoryFields[] = {
    {"weights_bytes", &MemoryProfile::weights},
    {"gradients_bytes", &MemoryProfile::gradients},
    {"optimizer_state_bytes", &MemoryProfile::optimizerState},
    {"activations_bytes", &MemoryProfile::activations},
    {"inputs_bytes", &MemoryProfile::inputs},
    {"workspace_bytes", &MemoryProfile::workspace},
    {"peak_allocated_bytes", &MemoryProfile::peakAllocated},
    {"peak_reserved_bytes", &MemoryProfile::peakReserved},
    {"cuda_context_bytes", &MemoryProfile::cudaContext},
};

inline constexpr Field<ProfileScenario, std::string> kScenarioTextFields[] = {
    {"model", &ProfileScenario::model},         {"model_name", &ProfileScenario::modelName},
    {"precision", &ProfileScenario::precision}, {"optimizer", &ProfileScenario::optimizer},
    {"loss", &ProfileScenario::loss},
};

inline constexpr Field<TimingStat, double> kTimingFields[] = {
    {"median_ms", &TimingStat::medianMs},
    {"cv", &TimingStat::cv},
    {"min_ms", &TimingStat::minMs},
    {"max_ms", &TimingStat::maxMs},
};

inline constexpr Field<KernelRecord, int> kKernelIntFields[] = {
    {"registers_per_thread", &KernelRecord::registersPerThread},
    {"static_shared_bytes", &KernelRecord::staticSharedBytes},
    {"dynamic_shared_bytes", &KernelRecord::dynamicSharedBytes},
};

inline bool isDefault(const TimingStat& t) {
    return t.medianMs == 0 && t.cv == 0 && t.minMs == 0 && t.maxMs == 0 && t.repeats == 0;
}

}  // namespace ts::profilefile
