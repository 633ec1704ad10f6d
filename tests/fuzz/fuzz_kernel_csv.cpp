// libFuzzer target: a kernel-measurement CSV file through ts::predictors::readKernelMeasurements,
// with devices matched against the built-in GPU database.
#include "fuzz_common.h"
#include "trainscope/core/errors.h"
#include "trainscope/predictors/scaling/kernel_measurements.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = ts::fuzz::writeTempFile(data, size, ".csv");
    try {
        ts::predictors::MeasurementSet set = ts::predictors::readKernelMeasurements({path}, ts::GpuDatabase::builtin());
    } catch (const ts::ModelError&) {
    }
    return 0;
}
