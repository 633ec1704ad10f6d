#pragma once
// Calibrated figures beside the datasheet's: how much of its advertised peak a GPU reaches.
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"

namespace ts {

struct CalibrationComparison {
    std::string name;                  // Measurement::name
    std::string label;                 // "DRAM read bandwidth"
    std::optional<double> measured;
    std::string unit;
    std::optional<double> datasheet;   // the comparable datasheet figure, when there is one
    std::string datasheetField;        // "memory_bandwidth_gbs", "tensor_tflops.bf16", ...
    std::optional<double> ratio() const {
        if (!measured || !datasheet || *datasheet <= 0) return std::nullopt;
        return *measured / *datasheet;
    }
    std::string detail;                // the benchmark's configuration, or why it did not run
};

// One row per measurement of `result`, in a fixed order, each matched to `gpu`'s datasheet
// figure: DRAM bandwidths to memory_bandwidth_gbs, fp32_fma to fp32_tflops, tensor_X to
// tensor_tflops.X, sm_clock_under_load to boost_clock_mhz.
std::vector<CalibrationComparison> compareWithDatasheet(const GpuSpec& gpu, const CalibrationResult& result);

}  // namespace ts
