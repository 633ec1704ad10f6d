#include "trainscope/core/calibration_compare.h"

namespace ts {
namespace {

struct Pairing {
    const char* name;
    const char* label;
    const char* field;  // datasheet field, empty when none is comparable
};

constexpr Pairing kPairings[] = {
    {"dram_read", "DRAM read bandwidth", "memory_bandwidth_gbs"},
    {"dram_write", "DRAM write bandwidth", "memory_bandwidth_gbs"},
    {"dram_copy", "DRAM copy bandwidth (read + write)", "memory_bandwidth_gbs"},
    {"l2_read", "L2 read bandwidth", ""},
    {"fp32_fma", "FP32 FMA peak", "fp32_tflops"},
    {"tensor_tf32", "TF32 tensor GEMM (cuBLASLt)", "tensor_tflops.tf32"},
    {"tensor_fp16", "FP16 tensor GEMM, FP32 accumulate (cuBLASLt)", "tensor_tflops.fp16"},
    {"tensor_bf16", "BF16 tensor GEMM, FP32 accumulate (cuBLASLt)", "tensor_tflops.bf16"},
    {"tensor_fp8", "FP8 tensor GEMM, FP32 accumulate (cuBLASLt)", "tensor_tflops.fp8"},
    {"sm_clock_under_load", "SM clock under FMA load", "boost_clock_mhz"},
    {"launch_latency", "kernel launch to completion", ""},
    {"launch_throughput", "back-to-back kernel launches", ""},
};

std::optional<double> datasheetValue(const GpuSpec& gpu, const std::string& field) {
    const Figure* f = nullptr;
    if (field == "memory_bandwidth_gbs") f = &gpu.memoryBandwidthGBs;
    else if (field == "fp32_tflops") f = &gpu.fp32Tflops;
    else if (field == "boost_clock_mhz") f = &gpu.boostClockMHz;
    else if (field.rfind("tensor_tflops.", 0) == 0) {
        auto it = gpu.tensorTflops.find(field.substr(14));
        if (it != gpu.tensorTflops.end()) f = &it->second;
    }
    if (f && f->known()) return f->value;
    return std::nullopt;
}

}  // namespace

std::vector<CalibrationComparison> compareWithDatasheet(const GpuSpec& gpu, const CalibrationResult& result) {
    std::vector<CalibrationComparison> rows;
    auto row = [&](const Measurement& m, const char* label, const std::string& field) {
        CalibrationComparison c;
        c.name = m.name;
        c.label = label;
        c.measured = m.value;
        c.unit = m.unit;
        c.detail = m.detail;
        c.datasheetField = field;
        if (!field.empty()) c.datasheet = datasheetValue(gpu, field);
        rows.push_back(std::move(c));
    };
    for (const Pairing& p : kPairings)
        if (const Measurement* m = result.find(p.name)) row(*m, p.label, p.field);
    // Benchmarks this table does not know yet are still shown, without a datasheet figure.
    for (const Measurement& m : result.measurements) {
        bool known = false;
        for (const Pairing& p : kPairings) known = known || m.name == p.name;
        if (!known) row(m, m.name.c_str(), "");
    }
    return rows;
}

}  // namespace ts
