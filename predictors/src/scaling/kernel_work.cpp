#include "trainscope/predictors/scaling/kernel_work.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ts::predictors {

WorkKind workKindOf(const std::string& opClass) {
    if (opClass == "linear" || opClass == "bmm" || opClass == "matmul" || opClass == "gemm" || opClass == "addmm")
        return WorkKind::Gemm;
    if (opClass == "conv" || opClass == "conv2d") return WorkKind::Conv;
    return WorkKind::Memory;
}

Tile tileFromKernelName(const std::string& name) {
    // First "<digits>x<digits>" in the name; a hand-written scan keeps <regex> out of a hot path.
    for (size_t i = 0; i < name.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) continue;
        size_t j = i;
        while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
        if (j + 1 < name.size() && name[j] == 'x' && std::isdigit(static_cast<unsigned char>(name[j + 1]))) {
            size_t k = j + 1;
            while (k < name.size() && std::isdigit(static_cast<unsigned char>(name[k]))) ++k;
            Tile t{std::stod(name.substr(i, j - i)), std::stod(name.substr(j + 1, k - j - 1))};
            if (t.x >= 1 && t.y >= 1) return t;
        }
        i = j;
    }
    return Tile{};
}

std::string gemmShapeClass(const GemmDims& d) {
    // Dimensions below 1 (empty work) share the lowest bin.
    auto bin = [](double v, double width) { return int(std::floor(std::log2(std::max(1.0, v)) / width)); };
    return "r" + std::to_string(bin(d.reduction, 2)) + "c" + std::to_string(bin(d.cols, 3)) + "m" +
           std::to_string(bin(d.rows, 3));
}

KernelWork gemmWork(const std::string& opClass, double b, double m, double n, double k) {
    KernelWork w;
    w.opClass = opClass;
    w.kind = WorkKind::Gemm;
    w.flops = 2 * b * m * n * k;
    double perBatch = 4 * (m * n + n * k + m * k);
    w.bytes = opClass == "linear" ? perBatch : b * perBatch;
    w.gemm = GemmDims{b, m, k, n};
    return w;
}

KernelWork convWork(double b, double cin, double cout, double kernel, double h, double stride, double padding) {
    KernelWork w;
    w.opClass = "conv";
    w.kind = WorkKind::Conv;
    double ho = std::floor((h + 2 * padding - kernel) / stride) + 1;
    double kk = kernel * kernel;
    w.flops = 2 * b * ho * ho * cout * cin * kk;
    w.bytes = 4 * (b * cin * h * h + cout * cin * kk + b * cout * ho * ho);
    // Implicit GEMM: one output row per output pixel, one column per output channel.
    w.gemm = GemmDims{1, b * ho * ho, cout, cin * kk};
    return w;
}

KernelWork memoryWork(const std::string& opClass, double elements) {
    KernelWork w;
    w.opClass = opClass;
    w.kind = workKindOf(opClass);
    // FLOPs per element are nominal (they never bind on these operators); bytes are what matters.
    double perElement = 1;
    if (opClass == "gelu" || opClass == "tanh" || opClass == "ln")
        perElement = 8;
    else if (opClass == "softmax")
        perElement = 5;
    w.flops = perElement * elements;
    w.bytes = (opClass == "add" || opClass == "mul" ? 3 : 2) * 4 * elements;
    return w;
}

}  // namespace ts::predictors
