#pragma once
// The numeric figures of a GPU entry and their JSON keys, listed once for parsing, checking
// provenance and writing.
#include "trainscope/core/gpu_database.h"

namespace ts::gpudb {

struct FigureField {
    const char* key;
    Figure GpuSpec::*member;
};

inline constexpr FigureField kFigureFields[] = {
    {"sms", &GpuSpec::sms},
    {"base_clock_mhz", &GpuSpec::baseClockMHz},
    {"boost_clock_mhz", &GpuSpec::boostClockMHz},
    {"memory_gb", &GpuSpec::memoryGB},
    {"memory_bandwidth_gbs", &GpuSpec::memoryBandwidthGBs},
    {"memory_bus_width_bits", &GpuSpec::memoryBusWidthBits},
    {"l2_cache_mb", &GpuSpec::l2CacheMB},
    {"fp32_tflops", &GpuSpec::fp32Tflops},
    {"fp64_tflops", &GpuSpec::fp64Tflops},
    {"tdp_w", &GpuSpec::tdpW},
};

struct InterconnectField {
    const char* key;
    Figure Interconnect::*member;
};

inline constexpr InterconnectField kInterconnectFields[] = {
    {"pcie_generation", &Interconnect::pcieGeneration},
    {"pcie_lanes", &Interconnect::pcieLanes},
    {"nvlink_generation", &Interconnect::nvlinkGeneration},
    {"nvlink_bandwidth_gbs", &Interconnect::nvlinkBandwidthGBs},
};

}  // namespace ts::gpudb
