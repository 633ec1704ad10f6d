#pragma once
// Public per-operator latency measurements (schema: the NeuSight artifact's CSV files, see
// /work/shared/data/gpu-kernel-measurements/README.md): one row per (operator configuration,
// GPU), joined into configurations measured on several GPUs.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/scaling/kernel_work.h"

namespace ts::predictors {

struct KernelMeasurement {
    double latencyMs = 0;                           // mean of the rows of the same configuration on the same GPU
    int samples = 0;                                // how many rows were averaged
    std::shared_ptr<const std::string> kernelName;  // the first row's; shared among equal names
    std::array<int64_t, 3> grid{0, 0, 0};
    std::array<int64_t, 3> block{0, 0, 0};
};

struct MeasuredConfig {
    std::vector<double> sizes;  // the class's size columns, in OperatorMeasurements::sizeColumns order
    KernelWork work;            // what the configuration does (no launch)
    std::vector<std::optional<KernelMeasurement>> byGpu;  // index: OperatorMeasurements::gpus

    // `work` with the launch that GPU `gpu` used (its measurement must exist).
    KernelWork launchedOn(size_t gpu) const;
};

struct OperatorMeasurements {
    std::string opClass;
    std::vector<std::string> sizeColumns;
    std::vector<GpuSpec> gpus;            // database entries of the GPUs with rows of this class
    std::vector<MeasuredConfig> configs;  // sorted by sizes
    int64_t rows = 0;
};

struct UnknownDevice {
    std::string device;  // the Device column as written
    std::string file;
    int64_t rows = 0;  // rows skipped
};

struct MeasurementSet {
    std::vector<OperatorMeasurements> ops;  // linear, bmm, conv, ln, softmax, add, mul, gelu, relu, tanh order
    std::vector<std::string> files;
    std::vector<UnknownDevice> unknownDevices;
    int64_t rows = 0;  // rows read (including those of unknown devices)

    const OperatorMeasurements* find(const std::string& opClass) const;
};

// The operator classes of the schema and their size columns.
const std::vector<std::string>& knownOperatorClasses();
const std::vector<std::string>& sizeColumnsOf(const std::string& opClass);  // throws for an unknown class

// Reads every CSV file named, and every *.csv under each directory named (recursively, sorted).
// Devices are matched with GpuDatabase::matchDevice; rows of a device the database does not know
// are skipped and listed in unknownDevices. Malformed input (missing column, a field that is not
// a number, an empty file, an unknown operator) throws ModelError naming the file and line.
MeasurementSet readKernelMeasurements(const std::vector<std::string>& paths, const GpuDatabase& db);

}  // namespace ts::predictors
