// Runs the micro-benchmarks on one GPU in a fixed order, turning each failure into a
// Measurement without a value so that one unsupported precision does not cost the others.
#include "trainscope/kernels/calibration.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "benchmarks.h"
#include "trainscope/core/errors.h"
#include "trainscope/kernels/device_query.h"

namespace ts::kernels {
namespace {

using namespace detail;

struct Stage {
    const char* title;                                         // for progress
    std::vector<std::pair<const char*, const char*>> outputs;  // measurement names and units
    std::function<std::vector<ts::Measurement>(const BenchContext&)> run;
};

std::vector<Stage> stages() {
    auto one = [](ts::Measurement (*f)(const BenchContext&)) {
        return [f](const BenchContext& c) { return std::vector<ts::Measurement>{f(c)}; };
    };
    auto tensor = [](ts::ComputePrecision p) {
        return [p](const BenchContext& c) { return std::vector<ts::Measurement>{measureTensorPeak(c, p)}; };
    };
    return {
        {"kernel launch overhead", {{"launch_latency", "us"}, {"launch_throughput", "us"}}, measureLaunchOverhead},
        {"DRAM bandwidth",
         {{"dram_read", "GB/s"}, {"dram_write", "GB/s"}, {"dram_copy", "GB/s"}},
         measureDramBandwidth},
        {"L2 bandwidth", {{"l2_read", "GB/s"}}, one(measureL2Bandwidth)},
        {"FP32 FMA peak and SM clock", {{"fp32_fma", "TFLOP/s"}, {"sm_clock_under_load", "MHz"}}, measureFp32Peak},
        {"TF32 tensor GEMM", {{"tensor_tf32", "TFLOP/s"}}, tensor(ts::ComputePrecision::Tf32)},
        {"FP16 tensor GEMM", {{"tensor_fp16", "TFLOP/s"}}, tensor(ts::ComputePrecision::Fp16)},
        {"BF16 tensor GEMM", {{"tensor_bf16", "TFLOP/s"}}, tensor(ts::ComputePrecision::Bf16)},
        {"FP8 tensor GEMM", {{"tensor_fp8", "TFLOP/s"}}, tensor(ts::ComputePrecision::Fp8)},
    };
}

RepeatOptions repeatOptions(bool quick) {
    RepeatOptions r;
    if (quick) {
        r.warmupMs = 50;
        r.minRuns = 5;
        r.maxRuns = 20;
        r.budgetMs = 600;
        r.runMs = 3;
    }
    return r;
}

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

std::string cublasVersionText() {  // 130100 -> "13.1.0"
    const size_t v = cublasLtGetVersion();
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string percent(double fraction) {
    char text[16];
    std::snprintf(text, sizeof text, "%.1f%%", fraction * 100);
    return text;
}

const ts::DeviceProperties& chooseDevice(const ts::DeviceQuery& q, int index) {
    if (!q.available) throw ts::DeviceError(q.status);
    for (const ts::DeviceProperties& d : q.devices) {
        if (d.index != index) continue;
        if (d.ccMajor * 10 + d.ccMinor < kMinComputeCapability)
            throw ts::DeviceError("GPU " + std::to_string(index) + " (" + d.name + ") has compute capability " +
                                  std::to_string(d.ccMajor) + "." + std::to_string(d.ccMinor) +
                                  ", older than the 7.5 this build's CUDA 13 kernels need");
        return d;
    }
    throw ts::DeviceError(
        "GPU index " + std::to_string(index) + " is out of range: this machine has " +
        std::to_string(q.devices.size()) + " usable CUDA device" +
        (q.devices.size() == 1 ? " (index 0)" : "s (indices 0 to " + std::to_string(q.devices.size() - 1) + ")"));
}

// Conditions that make the figures low or noisy without stopping the measurement.
void noteConditions(const ts::DeviceProperties& d, std::vector<std::string>& warnings) {
    size_t freeBytes = 0, totalBytes = 0;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess && freeBytes < 0.75 * totalBytes) {
        char text[200];
        std::snprintf(text, sizeof text,
                      "only %.1f of %.1f GiB of GPU memory is free: another process is using this GPU, so the "
                      "figures may be low",
                      freeBytes / kGiB, totalBytes / kGiB);
        warnings.push_back(text);
    }
    int watchdog = 0;
    if (cudaDeviceGetAttribute(&watchdog, cudaDevAttrKernelExecTimeout, d.index) == cudaSuccess && watchdog)
        warnings.push_back("this GPU drives a display (kernel watchdog on): figures may be noisy");
    (void)cudaGetLastError();
}

}  // namespace

ts::CalibrationResult calibrate(const CalibrationOptions& options) {
    const ts::DeviceQuery q = queryDevices();
    const ts::DeviceProperties& device = chooseDevice(q, options.device);
    detail::checkCuda(cudaSetDevice(device.index), "cudaSetDevice");

    ts::CalibrationResult result;
    result.device = device;
    result.driverVersion = q.driverVersion;
    result.runtimeVersion = q.runtimeVersion;
    result.cublasVersion = cublasVersionText();
    result.date = utcNow();
    noteConditions(device, result.warnings);

    Stream stream;
    const BenchContext ctx{device, stream.get(), options.quick, options.cancelled, repeatOptions(options.quick)};
    const std::vector<Stage> all = stages();
    for (size_t i = 0; i < all.size(); ++i) {
        const Stage& stage = all[i];
        if (options.progress) options.progress(stage.title, static_cast<double>(i) / all.size());
        try {
            if (options.cancelled && options.cancelled()) throw Cancelled{};
            for (ts::Measurement& m : stage.run(ctx)) {
                if (!m.value)
                    result.warnings.push_back(m.name + ": " + m.detail);
                else if (m.cv > 0.05 && m.name.rfind("launch_", 0) != 0)  // host timings are noisy anyway
                    result.warnings.push_back(m.name + ": the timed runs varied by " + percent(m.cv) +
                                              " (coefficient of variation): the GPU may be shared or throttling");
                result.measurements.push_back(std::move(m));
            }
        } catch (const Cancelled&) {
            result.warnings.push_back("calibration was cancelled during \"" + std::string(stage.title) + "\": " +
                                      std::to_string(i) + " of " + std::to_string(all.size()) + " benchmarks ran");
            (void)cudaStreamSynchronize(stream.get());
            return result;
        } catch (const ts::DeviceError& e) {
            for (const auto& [name, unit] : stage.outputs) {
                result.warnings.push_back(std::string(name) + ": " + e.what());
                result.measurements.push_back(notMeasured(name, unit, e.what()));
            }
            (void)cudaStreamSynchronize(stream.get());
            (void)cudaGetLastError();
        }
    }
    if (options.progress) options.progress("done", 1.0);
    return result;
}

}  // namespace ts::kernels
