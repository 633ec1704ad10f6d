#include "trainscope/predictors/scaling/kernel_scaling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "trainscope/core/errors.h"
#include "trainscope/core/occupancy.h"

namespace ts::predictors {
namespace {

double bandwidthBytesPerS(const GpuSpec& gpu) {
    if (!gpu.memoryBandwidthGBs.known() || *gpu.memoryBandwidthGBs <= 0)
        throw ModelError(gpu.id, "its memory bandwidth is unknown, so scaling cannot be modelled");
    return *gpu.memoryBandwidthGBs * 1e9;
}

// Resident blocks per SM of a sgemm-like kernel. Register counts are not in a kernel's name or
// launch: assume the accumulators (tile / threads) plus 40 others, capped at 255 (cuBLAS sgemm
// kernels use 128-255). A configuration the calculator refuses counts as one block per SM.
int blocksPerSm(const GpuSpec& gpu, int threads, double tx, double ty) {
    const int regs = int(std::ceil(std::min(255.0, tx * ty / threads + 40)));
    using Key = std::tuple<std::string, int, int>;
    thread_local std::map<Key, int> cache;  // a handful of (GPU, threads, regs) in any data set
    Key key{gpu.id, threads, regs};
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    int blocks = 1;
    try {
        KernelLaunch launch;
        launch.threadsPerBlock = threads;
        launch.registersPerThread = regs;
        blocks = std::max(1, computeOccupancy(gpu, launch).blocksPerSm);
    } catch (const ModelError&) {
        blocks = 1;
    }
    cache.emplace(key, blocks);
    return blocks;
}

// Padded FLOPs of `tiles` output tiles of tx x ty, each reducing over `reduction`.
double paddedFlops(const GpuSpec& gpu, double tiles, double tx, double ty, int threads, double reduction) {
    const double wave = *gpu.sms * blocksPerSm(gpu, threads, tx, ty);
    return std::ceil(tiles / wave) * wave * 2.0 * tx * ty * reduction;
}

double shapeLogOffsetOf(const ScalingParams& p, const std::string& architecture, const std::string& shapeClass) {
    auto arch = p.shapeLogOffset.find(architecture);
    if (arch == p.shapeLogOffset.end()) return 0;
    auto shape = arch->second.find(shapeClass);
    return shape == arch->second.end() ? 0 : shape->second;
}

}  // namespace

double architectureFactor(const GpuSpec& gpu, const ScalingParams& p) {
    auto it = p.architectureLogOffset.find(gpu.architecture);
    return it == p.architectureLogOffset.end() ? 1.0 : std::exp(it->second);
}

double architectureFactor(const GpuSpec& gpu, const ScalingParams& p, const KernelWork& work) {
    const double constant = architectureFactor(gpu, p);
    if (p.shapeLogOffset.empty() || !work.gemm) return constant;
    return constant * std::exp(shapeLogOffsetOf(p, gpu.architecture, gemmShapeClass(*work.gemm)));
}

KernelShape kernelShape(const KernelWork& work, const GpuSpec& gpu) {
    KernelShape s;
    if (work.kind == WorkKind::Memory || !work.gemm) return s;
    if (!gpu.sms.known() || *gpu.sms < 1) throw ModelError(gpu.id, "its SM count is unknown");
    const GemmDims& d = *work.gemm;
    s.valid = true;
    if (work.hasLaunch()) {
        const Tile t = tileFromKernelName(work.kernelName);
        const int64_t threads = work.threadsPerBlock() > 0 ? work.threadsPerBlock() : 256;
        double tiles = d.batch * std::ceil(d.cols / t.x) * std::ceil(d.rows / t.y);
        s.reduction = d.reduction;
        // A GEMM grid larger than the output tiling is split-K: each block reduces a part.
        if (work.kind == WorkKind::Gemm && work.gridBlocks() > 0) {
            s.reduction = d.reduction / std::max(1.0, double(work.gridBlocks()) / tiles);
            tiles = double(work.gridBlocks());
        }
        s.paddedFlops = paddedFlops(gpu, tiles, t.x, t.y, int(std::min<int64_t>(threads, 1 << 20)), s.reduction);
        return s;
    }
    // Without a launch: the best of common sgemm tiles (same reduction, so the least padding wins).
    static constexpr double kTiles[][2] = {{128, 128}, {128, 64}, {64, 64}, {128, 32}, {32, 128}, {32, 32}};
    s.reduction = d.reduction;
    s.paddedFlops = std::numeric_limits<double>::infinity();
    for (const auto& t : kTiles) {
        const int threads = t[0] * t[1] >= 4096 ? 256 : 128;
        const double tiles = d.batch * std::ceil(d.cols / t[0]) * std::ceil(d.rows / t[1]);
        s.paddedFlops = std::min(s.paddedFlops, paddedFlops(gpu, tiles, t[0], t[1], threads, d.reduction));
    }
    return s;
}

double kernelTimeMs(const KernelWork& work, const KernelShape& shape, const GpuSpec& gpu, const GpuOpStats& stats,
                    const ScalingParams& p) {
    const double bw = bandwidthBytesPerS(gpu);
    if (work.kind == WorkKind::Memory) return work.bytes / (bw * stats.memEff) * 1e3 + p.tauUs * 1e-3;
    const double rate = sustainedFp32Tflops(gpu, p) * 1e12;
    if (!p.structured || !shape.valid) return std::max(work.flops / rate, work.bytes / bw) * 1e3 + p.tauUs * 1e-3;
    const double s = shape.reduction / (shape.reduction + p.n0);  // short reductions: tile prologue/epilogue
    const double compute = shape.paddedFlops / (rate * s);
    const double memory = work.bytes / (bw * p.memoryEff);
    return std::max(compute, memory) * 1e3 + p.tauUs * 1e-3;
}

double predictCrossShaped(const KernelWork& originWork, double originLatencyMs, const GpuSpec& origin,
                          const KernelShape& originShape, const GpuOpStats& originStats, const GpuSpec& target,
                          const KernelShape& targetShape, const GpuOpStats& targetStats, const ScalingParams& p) {
    const double modelY = kernelTimeMs(originWork, originShape, origin, originStats, p);
    const double modelX = kernelTimeMs(originWork, targetShape, target, targetStats, p);
    const double kernelY = softInverse(originLatencyMs, originStats.floorMs, p.softness);
    // The origin's configuration-specific efficiency relative to the model; 1 when the
    // measurement sits on the floor and says nothing about the kernel.
    double r = std::isfinite(kernelY) && modelY > 0 ? kernelY / modelY : 1.0;
    r = std::pow(std::clamp(r, 1 / p.maxRatio, p.maxRatio), p.alpha);
    double arch = architectureFactor(target, p) / architectureFactor(origin, p);
    if (!p.shapeLogOffset.empty() && originWork.gemm) {  // the shape class computed once for both
        const std::string shape = gemmShapeClass(*originWork.gemm);
        arch *=
            std::exp(shapeLogOffsetOf(p, target.architecture, shape) - shapeLogOffsetOf(p, origin.architecture, shape));
    }
    return softMax(targetStats.floorMs, modelX * r * arch, p.softness);
}

double predictCross(const KernelWork& originWork, double originLatencyMs, const GpuSpec& origin,
                    const GpuOpStats& originStats, const GpuSpec& target, const GpuOpStats& targetStats,
                    const ScalingParams& p) {
    return predictCrossShaped(originWork, originLatencyMs, origin, kernelShape(originWork, origin), originStats, target,
                              kernelShape(originWork, target), targetStats, p);
}

double predictModelOnly(const KernelWork& work, const GpuSpec& target, const GpuOpStats& targetStats,
                        const ScalingParams& p) {
    KernelWork bare = work;
    bare.kernelName.clear();
    bare.grid = {0, 0, 0};
    bare.block = {0, 0, 0};
    const double k = kernelTimeMs(bare, kernelShape(bare, target), target, targetStats, p);
    return softMax(targetStats.floorMs, k * architectureFactor(target, p, work), p.softness);
}

}  // namespace ts::predictors
