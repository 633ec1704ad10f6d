#pragma once
// Cross-GPU scaling of one operator's latency (issue 9). Every latency is modelled as
//   latency_G = soft(floor_G, kernel_G),   soft(a, b) = (a^p + b^p)^(1/p)   (a smooth max)
// floor_G: the host/launch floor of one framework op on G's machine; kernel_G: a class model
// (memory-bound: bytes / achieved bandwidth; GEMM/conv: tile-and-wave or roofline with a
// power-capped FP32 rate). Cross path (GPU Y measured T_Y, predict X):
//   k_Y = soft^-1(T_Y, floor_Y),  r = clip(k_Y / kernel_Y, 1 / maxRatio, maxRatio),
//   T_X = soft(floor_X, kernel_X r^alpha a_X / a_Y)      a_G = architectureFactor(G, work)
// Model-only path: T_X = soft(floor_X, kernel_X a_X). Times are milliseconds.
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/scaling/kernel_work.h"

namespace ts::predictors {

// Shared, fitted parameters of one operator class.
struct ScalingParams {
    bool structured = true;        // GEMM/conv: tile-and-wave (true) or roofline (false)
    double floorQuantile = 0.5;    // an unseen GPU's floor: this quantile of the known GPUs' floors
    double softness = 4;           // p of the smooth max
    double alpha = 1;              // how much of the origin's own efficiency transfers (0..1)
    double maxRatio = 10;          // the origin's ratio r is clipped to [1 / maxRatio, maxRatio]
    double tauUs = 0;              // fixed per-kernel time, not scaled by the GPU (every kernel model)
    double n0 = 0;                 // reduction length at which a tile's prologue halves its rate
    double wattsPerTflop16nm = 0;  // power cap: W per sustained FP32 TFLOP/s at 16 nm; 0 = no cap
    double computeEff = 0.75;      // sustained fraction of the FP32 peak, before the power cap
    double memoryEff = 0.8;        // achieved fraction of DRAM bandwidth in GEMM/conv kernels
    // ln of a kernel-time factor per GPU architecture ("Pascal", ...): the libraries ship different
    // kernels per architecture, so GPUs of one architecture share a bias against the model. Fitted
    // (ridge) on GPU pairs; an architecture without an entry gets factor 1.
    std::map<std::string, double> architectureLogOffset;
    // Per architecture, ln factor per GEMM shape class (gemmShapeClass), on top of its
    // architectureLogOffset: which kernel the library runs depends on the shape, and so does the bias.
    // A shape class or architecture without an entry adds nothing.
    std::map<std::string, std::map<std::string, double>> shapeLogOffset;
};

// exp(architectureLogOffset[gpu.architecture]), 1 when the table has no entry for it.
double architectureFactor(const GpuSpec& gpu, const ScalingParams& p);
// The same with the shape-class term of `work` (GEMM and conv work; other work has none).
double architectureFactor(const GpuSpec& gpu, const ScalingParams& p, const KernelWork& work);

// What a GPU's own measurements say about one operator class (or estimates for a GPU without any).
struct GpuOpStats {
    double floorMs = 0;   // host/launch floor
    double memEff = 0.7;  // achieved fraction of datasheet DRAM bandwidth (memory-bound classes)
};

// Process node in nm by compute capability (see sustained_rate.cpp); nullopt when unknown.
std::optional<double> processNodeNm(const GpuSpec& gpu);
// FP32 GEMM rate in TFLOP/s: computeEff x datasheet peak, capped at TDP / (wattsPerTflop16nm x node/16).
double sustainedFp32Tflops(const GpuSpec& gpu, const ScalingParams& p);

// The one smooth maximum of the project (inline: the profile path calls it per layer and batch;
// the sweep's single-precision vector loop in iteration_model.cpp evaluates the same form), with
// the softness values the table uses (4 and 2) computed without pow().
inline double softMax(double a, double b, double p) {
    if (p == 4) {
        const double a2 = a * a, b2 = b * b;
        return std::sqrt(std::sqrt(a2 * a2 + b2 * b2));
    }
    if (p == 2) return std::sqrt(a * a + b * b);
    return std::pow(std::pow(a, p) + std::pow(b, p), 1.0 / p);
}
// b with soft(a, b) = t; NaN when t is within 2% of the floor (the kernel is then invisible).
inline double softInverse(double t, double a, double p) {
    if (!(t > a * 1.02)) return std::numeric_limits<double>::quiet_NaN();
    if (p == 4) {
        const double t2 = t * t, a2 = a * a;
        return std::sqrt(std::sqrt(std::abs(t2 * t2 - a2 * a2)));
    }
    if (p == 2) return std::sqrt(std::abs(t * t - a * a));
    return std::pow(std::abs(std::pow(t, p) - std::pow(a, p)), 1.0 / p);
}

// The parameter-independent part of a GEMM/conv kernel on one GPU, computed once and reused for
// every parameter set a fit tries. Memory-bound work has no shape (valid = false).
struct KernelShape {
    bool valid = false;
    double paddedFlops = 0;  // FLOPs of every wave, the last one counted full (wave quantisation)
    double reduction = 0;    // reduction length of one tile (after split-K)
};
// Tile-and-wave shape of `work` on `gpu`: with a launch, the launching GPU's tile, block and
// (GEMM) grid are assumed on `gpu` too; without, the best of a few common sgemm tiles (a
// stand-in for the library's heuristic). Occupancy from ts::computeOccupancy.
KernelShape kernelShape(const KernelWork& work, const GpuSpec& gpu);

// kernel_G in ms for one work item.
double kernelTimeMs(const KernelWork& work, const KernelShape& shape, const GpuSpec& gpu, const GpuOpStats& stats,
                    const ScalingParams& p);

// T_X from the origin's measured latency. `originWork` carries the origin's launch; both shapes
// come from kernelShape(originWork, ...) on the origin and on the target.
double predictCrossShaped(const KernelWork& originWork, double originLatencyMs, const GpuSpec& origin,
                          const KernelShape& originShape, const GpuOpStats& originStats, const GpuSpec& target,
                          const KernelShape& targetShape, const GpuOpStats& targetStats, const ScalingParams& p);

// Convenience forms that compute the shapes.
double predictCross(const KernelWork& originWork, double originLatencyMs, const GpuSpec& origin,
                    const GpuOpStats& originStats, const GpuSpec& target, const GpuOpStats& targetStats,
                    const ScalingParams& p);
// Without any measurement; `work`'s launch, if any, is ignored.
double predictModelOnly(const KernelWork& work, const GpuSpec& target, const GpuOpStats& targetStats,
                        const ScalingParams& p);

}  // namespace ts::predictors
