#pragma once
// JSON form of GPU database entries and calibrations: the format of resources/gpus.json and
// of the user files that extend it (docs/gpu-database.md).
#include <nlohmann/json.hpp>

#include "trainscope/core/gpu_database.h"

namespace ts {

inline constexpr const char* kGpuDatabaseFormat = "trainscope-gpu-database";
inline constexpr int kGpuDatabaseVersion = 1;

nlohmann::json figureToJson(const Figure& f);
// One GPU entry in the database format (what `gpus --json` prints and `calibrate -o` writes).
nlohmann::json gpuToJson(const GpuSpec& gpu);
nlohmann::json archLimitsToJson(const ArchLimits& limits);
// A calibration's "calibration" object: every measurement with unit, spread and detail.
nlohmann::json calibrationToJson(const CalibrationResult& result);
GpuCalibration calibrationFromResult(const CalibrationResult& result, const std::string& origin);

}  // namespace ts
