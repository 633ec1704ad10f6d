#include "benchmarks.h"

namespace ts::kernels::detail {

ts::Measurement measured(std::string name, std::string unit, double value, const Stats& stats, std::string detail) {
    ts::Measurement m;
    m.name = std::move(name);
    m.unit = std::move(unit);
    m.value = value;
    m.cv = stats.cv;
    m.repetitions = stats.runs;
    m.detail = std::move(detail);
    return m;
}

ts::Measurement notMeasured(std::string name, std::string unit, std::string why) {
    ts::Measurement m;
    m.name = std::move(name);
    m.unit = std::move(unit);
    m.detail = std::move(why);
    return m;
}

int fullWaveBlocks(const void* kernel, int threads, const ts::DeviceProperties& device) {
    int perSm = 0;
    checkCuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, 0),
              "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return device.sms * (perSm > 0 ? perSm : 1);
}

}  // namespace ts::kernels::detail
