#pragma once
// Renders the GPU database, one GPU with the source of every figure, the local devices, and
// a calibration beside the datasheet.
#include <nlohmann/json.hpp>
#include <ostream>

#include "trainscope/core/calibration_compare.h"
#include "trainscope/core/gpu_database.h"

namespace ts::cli {

// One line per GPU: peaks per precision ("-" unsupported, "?" unknown, "~" estimate), prices.
void printGpuTable(std::ostream& os, const GpuDatabase& db);
// Every figure of one GPU with its source, per-SM limits, ridge points, prices, calibration.
void printGpuDetail(std::ostream& os, const GpuDatabase& db, const GpuSpec& gpu);
// The local devices and the database entry each one matches.
void printDevices(std::ostream& os, const GpuDatabase& db, const DeviceQuery& query);
nlohmann::json devicesJson(const GpuDatabase& db, const DeviceQuery& query);
void printCalibration(std::ostream& os, const GpuSpec& gpu, const std::vector<CalibrationComparison>& rows);
nlohmann::json comparisonJson(const std::vector<CalibrationComparison>& rows);

}  // namespace ts::cli
