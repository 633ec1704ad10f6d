// The power model of the scaling predictor: how fast a GPU sustains dense FP32 FMA work.
#include <algorithm>

#include "trainscope/core/errors.h"
#include "trainscope/predictors/scaling/kernel_scaling.h"

namespace ts::predictors {

// Process node by compute capability. The GPU database has no process field, and within one
// compute capability every chip is made on the same node, so CC is the key (8.0 = GA100 vs
// 8.6 = GA10x is exactly where the node changes). Sources: NVIDIA's architecture whitepapers
// (Pascal GP100/GP104 TSMC 16 nm FinFET; Volta GV100 and Turing TU10x TSMC 12 nm FFN; GA100
// TSMC 7 nm; GA10x Samsung 8 nm; Ada, Hopper and Blackwell TSMC 4N/4NP, 5 nm-class, taken as 5).
// The model assumes switching energy per FLOP proportional to the feature size: crude, but it is
// what lets 70-75 W parts (T4, P4) come out slower than their boost-clock peak without any
// per-GPU constant.
std::optional<double> processNodeNm(const GpuSpec& gpu) {
    const int cc = gpu.ccMajor * 10 + gpu.ccMinor;
    if (cc >= 50 && cc < 60) return 28.0;  // Maxwell
    if (cc >= 60 && cc < 70) return 16.0;  // Pascal
    if (cc >= 70 && cc < 80) return 12.0;  // Volta, Turing (7.2 Xavier also 12 nm)
    if (cc == 80) return 7.0;              // GA100
    if (cc == 86 || cc == 87) return 8.0;  // GA10x, Orin
    if (cc >= 89) return 5.0;              // Ada, Hopper, Blackwell
    return std::nullopt;
}

double sustainedFp32Tflops(const GpuSpec& gpu, const ScalingParams& p) {
    if (!gpu.fp32Tflops.known() || *gpu.fp32Tflops <= 0)
        throw ModelError(gpu.id, "its FP32 peak is unknown, so GEMM scaling cannot be modelled");
    const double rate = p.computeEff * *gpu.fp32Tflops;
    if (p.wattsPerTflop16nm <= 0 || !gpu.tdpW.known() || *gpu.tdpW <= 0) return rate;
    std::optional<double> node = processNodeNm(gpu);
    if (!node) return rate;  // unknown node: no power cap rather than a guessed one
    return std::min(rate, *gpu.tdpW / (p.wattsPerTflop16nm * *node / 16.0));
}

}  // namespace ts::predictors
