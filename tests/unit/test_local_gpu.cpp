// Local GPU detection and calibration. GpuDetection runs everywhere and checks the behaviour
// without a GPU (it skips where one is present); LocalGpu (label "gpu") needs a GPU and skips,
// saying why, where there is none.
#include <gtest/gtest.h>

#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/kernels/calibration.h"
#include "trainscope/kernels/device_query.h"

namespace ts {
namespace {

TEST(GpuDetection, WithoutAGpuQueryExplainsWhyAndDoesNotThrow) {
    DeviceQuery q;
    ASSERT_NO_THROW(q = kernels::queryDevices());
    EXPECT_EQ(q.cudaBuild, TRAINSCOPE_KERNELS_CUDA == 1);
    if (q.available) GTEST_SKIP() << "a GPU is present: " << q.status;
    EXPECT_FALSE(q.status.empty());
    EXPECT_TRUE(q.devices.empty());
    if (!q.cudaBuild) {
        EXPECT_NE(q.status.find("no CUDA support"), std::string::npos) << q.status;
        return;
    }
    EXPECT_GE(q.runtimeVersion, 13000);
    // No libcuda.so.1 at all (this machine): the status says so rather than "insufficient driver".
    if (q.driverVersion == 0) {
        EXPECT_NE(q.status.find("no NVIDIA driver"), std::string::npos) << q.status;
    }
}

TEST(GpuDetection, WithoutAGpuCalibrateThrowsDeviceErrorWithTheReason) {
    const DeviceQuery q = kernels::queryDevices();
    if (q.available) GTEST_SKIP() << "a GPU is present: " << q.status;
    try {
        kernels::calibrate({});
        FAIL() << "calibrate() returned without a GPU";
    } catch (const DeviceError& e) {
        EXPECT_NE(std::string(e.what()).find(q.status), std::string::npos) << e.what();
    }
}

TEST(LocalGpu, QueryDescribesEveryDevice) {
    const DeviceQuery q = kernels::queryDevices();
    if (!q.available) GTEST_SKIP() << "no GPU: " << q.status;
    EXPECT_TRUE(q.cudaBuild);
    EXPECT_GE(q.driverVersion, 13000);
    ASSERT_FALSE(q.devices.empty());
    for (const DeviceProperties& d : q.devices) {
        SCOPED_TRACE(d.name);
        EXPECT_FALSE(d.name.empty());
        EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u) << d.uuid;
        EXPECT_EQ(d.pciBusId.size(), 12u) << d.pciBusId;
        EXPECT_GE(d.ccMajor, 7);
        EXPECT_GT(d.sms, 0);
        EXPECT_LT(d.sms, 1000);
        EXPECT_GT(d.totalMemoryBytes, uint64_t(1) << 30);
        EXPECT_GE(d.maxSmClockMHz, 300);
        EXPECT_LE(d.maxSmClockMHz, 3500);
        EXPECT_GT(d.memoryClockMHz, 0);
        EXPECT_GT(d.memoryBusWidthBits, 0);
        EXPECT_GT(d.theoreticalBandwidthGBs(), 50.0);
        EXPECT_GT(d.l2CacheBytes, 0);
        EXPECT_GE(d.maxThreadsPerSm, 1024);
        EXPECT_GT(d.maxBlocksPerSm, 0);
        EXPECT_GE(d.registersPerSm, 65536);
        EXPECT_GT(d.registersPerBlock, 0);
        EXPECT_EQ(d.maxThreadsPerBlock, 1024);
        EXPECT_EQ(d.warpSize, 32);
        EXPECT_GE(d.sharedMemoryPerSmBytes, 64 * 1024);
        EXPECT_EQ(d.sharedMemoryPerBlockBytes, 48 * 1024);
        EXPECT_GE(d.sharedMemoryPerBlockOptinBytes, d.sharedMemoryPerBlockBytes);
        EXPECT_GE(d.reservedSharedMemoryPerBlockBytes, 0);
    }
}

TEST(LocalGpu, QuickCalibrationMeasuresSaneFigures) {
    const DeviceQuery q = kernels::queryDevices();
    if (!q.available) GTEST_SKIP() << "no GPU: " << q.status;
    kernels::CalibrationOptions options;
    options.quick = true;
    std::string lastStage;
    double lastFraction = -1;
    options.progress = [&](const std::string& stage, double fraction) {
        EXPECT_GE(fraction, lastFraction);
        lastStage = stage, lastFraction = fraction;
    };
    const CalibrationResult r = kernels::calibrate(options);
    EXPECT_EQ(lastStage, "done");
    EXPECT_EQ(lastFraction, 1.0);
    EXPECT_EQ(r.device.name, q.devices.front().name);
    EXPECT_EQ(r.date.size(), 20u) << r.date;  // 2026-11-21T10:15:30Z
    EXPECT_FALSE(r.cublasVersion.empty());
    for (const Measurement& m : r.measurements) {
        std::cout << m.name << ": " << (m.value ? std::to_string(*m.value) : "-") << " " << m.unit << " (cv " << m.cv
                  << ", " << m.repetitions << " runs) " << m.detail << "\n";
        EXPECT_TRUE(m.value || !m.detail.empty()) << m.name << " has neither a value nor a reason";
    }
    for (const std::string& w : r.warnings) std::cout << "warning: " << w << "\n";
    auto value = [&](const char* name) {
        const Measurement* m = r.find(name);
        EXPECT_NE(m, nullptr) << name << " missing";
        if (m && !m->value) ADD_FAILURE() << name << " not measured: " << m->detail;
        return m && m->value ? *m->value : 0.0;
    };
    for (const char* name :
         {"dram_read", "dram_write", "dram_copy", "l2_read", "fp32_fma", "launch_latency", "launch_throughput"})
        EXPECT_GT(value(name), 0.0) << name;
    const double clock = value("sm_clock_under_load");
    EXPECT_GE(clock, 300.0);
    EXPECT_LE(clock, 3500.0);
    EXPECT_LE(clock, r.device.maxSmClockMHz * 1.05);
    ASSERT_NE(r.find("tensor_fp8"), nullptr);  // measured, or says why not (compute capability)
}

TEST(LocalGpu, OutOfRangeIndexAndCancellation) {
    const DeviceQuery q = kernels::queryDevices();
    if (!q.available) GTEST_SKIP() << "no GPU: " << q.status;
    kernels::CalibrationOptions options;
    options.device = static_cast<int>(q.devices.size()) + 3;
    try {
        kernels::calibrate(options);
        FAIL() << "an out-of-range index was accepted";
    } catch (const DeviceError& e) {
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
    options.device = 0;
    options.cancelled = [] { return true; };
    const CalibrationResult r = kernels::calibrate(options);
    EXPECT_TRUE(r.measurements.empty());
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_NE(r.warnings.back().find("cancelled"), std::string::npos) << r.warnings.back();
}

}  // namespace
}  // namespace ts
