#pragma once
// `gpus`, `devices` and `calibrate`: the GPU database, the local GPUs, and measuring one.
#include <cstdint>
#include <string>
#include <vector>

namespace ts::cli {

struct GpusOptions {
    std::vector<std::string> gpuDbFiles;  // user files applied after the built-in database
    std::string gpu;                      // show this one in detail
    bool json = false;
};

struct DevicesOptions {
    std::vector<std::string> gpuDbFiles;
    bool json = false;
};

struct CalibrateOptions {
    std::vector<std::string> gpuDbFiles;
    std::string output;   // default: the user GPU file, where later runs find the calibration
    int device = 0;
    bool quick = false;
    bool json = false;
};

struct OccupancyOptions {
    std::vector<std::string> gpuDbFiles;
    std::string gpu = "all";
    int threads = 256;
    int registers = 32;
    int sharedMemory = 0;     // bytes per block, static + dynamic
    int64_t grid = 0;         // thread blocks; 0 = one full wave
    bool json = false;
};

int runGpus(const GpusOptions& o);
// Occupancy and wave size of one kernel shape on one or every GPU (cuda_occupancy.h).
int runOccupancy(const OccupancyOptions& o);
int runDevices(const DevicesOptions& o);
// Throws DeviceError when there is no usable GPU.
int runCalibrate(const CalibrateOptions& o);

// Where `calibrate` writes by default and GpuDatabase::load() reads: $XDG_CONFIG_HOME or ~/.config.
std::string defaultUserGpuFile();

}  // namespace ts::cli
