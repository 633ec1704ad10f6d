#pragma once
// What one operator (or its main kernel) does, independent of where the description came from:
// a row of public measurements, a profile of the user's model, or analytic costs. The
// cross-GPU scaling models (kernel_scaling.h) take only this, a GPU and, when a GPU ran it, the
// measured latency.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace ts::predictors {

// How a class of operators is modelled.
enum class WorkKind {
    Memory,  // bandwidth-bound: elementwise, normalisations, softmax
    Gemm,    // matrix multiply (linear, bmm): its grid tiles the output, grid beyond that is split-K
    Conv,    // convolution as an implicit GEMM: its grid is not a GEMM tiling (Winograd, FFT...)
};

// linear, bmm, matmul, gemm, addmm -> Gemm; conv, conv2d -> Conv; everything else -> Memory.
WorkKind workKindOf(const std::string& opClass);

// A GEMM C[rows x cols] += A[rows x reduction] B[reduction x cols], `batch` times.
struct GemmDims {
    double batch = 1;
    double rows = 0;
    double cols = 0;
    double reduction = 0;
};

struct KernelWork {
    std::string opClass;  // "linear", "bmm", "conv", "ln", "softmax", "add", "mul", "gelu", "relu", "tanh"
    WorkKind kind = WorkKind::Memory;
    double flops = 0;              // a multiply-add is 2 FLOPs
    double bytes = 0;              // minimum DRAM traffic (each operand read once, result written once)
    std::optional<GemmDims> gemm;  // Gemm and Conv kinds

    // The launch of its main kernel, when a GPU ran it: the scaling models then assume the
    // other GPU runs the same tile. Empty name and zero grid when unknown.
    std::string kernelName;
    std::array<int64_t, 3> grid{0, 0, 0};
    std::array<int64_t, 3> block{0, 0, 0};

    bool hasLaunch() const { return !kernelName.empty() || gridBlocks() > 0; }
    int64_t gridBlocks() const { return grid[0] * grid[1] * grid[2]; }
    int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
};

// The output tile of a GEMM kernel from its name ("ampere_sgemm_128x64_tn" -> 128 x 64: the
// first number along grid x, i.e. output columns, the second along grid y, output rows).
// cuBLAS/cuDNN names without one get 128 x 64, a common sgemm tile.
struct Tile {
    double x = 128;
    double y = 64;
};
Tile tileFromKernelName(const std::string& name);

// The shape class of a GEMM: libraries pick their kernel by shape, so the per-architecture bias of
// the scaling models is fitted per class (ScalingParams::shapeLogOffset). Octave bins of the
// reduction length (2 octaves wide), the output's columns and rows (3 octaves wide): "r5c2m3".
std::string gemmShapeClass(const GemmDims& d);

// Builders for the operator classes of the public measurements (FP32, 4 bytes an element).
// linear and bmm: output M x K, reduction N (established from the measured grids; see
// docs of the data set); linear has no batch of weights, so its bytes count the weight once.
KernelWork gemmWork(const std::string& opClass, double b, double m, double n, double k);
// 2-D convolution, square input and kernel: B x Cin x H x H -> B x Cout x Ho x Ho.
KernelWork convWork(double b, double cin, double cout, double kernel, double h, double stride, double padding);
// Elementwise and row-wise operators over `elements` FP32 values (add and mul read two inputs).
KernelWork memoryWork(const std::string& opClass, double elements);

}  // namespace ts::predictors
