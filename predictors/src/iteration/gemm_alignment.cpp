// Tensor-core GEMMs whose rows are not a multiple of 16 bytes (gemm_alignment.h).
#include "trainscope/predictors/iteration/gemm_alignment.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "trainscope/predictors/iteration/operation_times.h"

namespace ts::predictors {

namespace {

// The elements one 16-byte vector load holds at the precision a GEMM's math runs at; 0 off tensor cores.
int alignmentOf(TrainingPrecision math, bool linearLayer) {
    switch (math) {
        case TrainingPrecision::Tf32:
            return 4;
        case TrainingPrecision::AmpFp16:
        case TrainingPrecision::AmpBf16:
        case TrainingPrecision::Bf16Params:
        case TrainingPrecision::Fp16Params:
            return 8;
        case TrainingPrecision::Fp8:
            return linearLayer ? 16 : 8;  // fp8 applies to linear layers only (precisionRateRatio)
        default:
            return 0;
    }
}

std::string grouped(int64_t v) {  // 50265 -> "50,265"
    std::string digits = std::to_string(v), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

}  // namespace

std::vector<UnalignedGemm> unalignedGemms(const ModelAnalysis& a, const GpuSpec& gpu, TrainingPrecision p, double n,
                                          double minShare) {
    double total = 0;
    for (const AnalyzedOp& op : a.ops) total += op.forwardFlops.at(n);
    std::vector<UnalignedGemm> out;
    if (total <= 0 || !gpu.limits.tensorCores) return out;
    for (const AnalyzedOp& op : a.ops) {
        // A mixture of experts' reduction is its routes' average, not one GEMM's; its experts' widths
        // are the config's hidden and expert sizes.
        if (op.kind != OpKind::Gemm || op.type == "MixtureOfExperts" || op.gemmReduction <= 0 || op.gemmColumns <= 0)
            continue;
        const int alignment = alignmentOf(mathPrecisionOf(op, gpu, p), op.opClass == "linear");
        if (alignment == 0) continue;
        // The reduction comes from the FLOPs (model_analysis): a bias adds half a FLOP per output to it.
        const auto k = int64_t(std::floor(op.gemmReduction + 1e-6)), cols = int64_t(std::llround(op.gemmColumns));
        if (k % alignment == 0 && cols % alignment == 0) continue;
        const double share = op.forwardFlops.at(n) / total;
        if (share < minShare) continue;
        out.push_back({op.name, k, cols, alignment, share});
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const UnalignedGemm& x, const UnalignedGemm& y) { return x.flopsShare > y.flopsShare; });
    return out;
}

std::string unalignedGemmNote(const std::vector<UnalignedGemm>& gemms) {
    if (gemms.empty()) return "";
    std::ostringstream os;
    double share = 0;
    for (const UnalignedGemm& g : gemms) share += g.flopsShare;
    const size_t named = std::min<size_t>(gemms.size(), 2);
    for (size_t i = 0; i < named; ++i) {
        const UnalignedGemm& g = gemms[i];
        if (i > 0) os << (gemms.size() == 2 ? " and " : ", ");
        os << g.name << " (";
        if (g.columns % g.alignment != 0) os << grouped(g.columns) << " columns";
        if (g.columns % g.alignment != 0 && g.reduction % g.alignment != 0) os << ", ";
        if (g.reduction % g.alignment != 0) os << "a reduction of " << grouped(g.reduction);
        os << ")";
    }
    if (gemms.size() > 2) os << " and " << gemms.size() - 2 << " more GEMMs";
    os << ", " << std::lround(share * 100) << "% of the forward FLOPs, " << (gemms.size() == 1 ? "has" : "have")
       << " rows that are not a multiple of 16 bytes (" << gemms.front().alignment
       << " elements at this precision): cuBLAS runs such GEMMs without the aligned kernels its peak rates "
          "come from, which this prediction does not charge (not measured); padding the dimension to a "
          "multiple of 64, as NVIDIA's BERT pads its vocabulary to 30,528 and nanoGPT GPT-2's to 50,304, "
          "avoids it";
    return os.str();
}

}  // namespace ts::predictors
