// Tensor-core GEMMs whose rows are not a multiple of 16 bytes (gemm_alignment.h).
#include "trainscope/predictors/iteration/gemm_alignment.h"

#include <algorithm>
#include <cmath>
#include <optional>
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

// Whether a GEMM's math at `math` runs in 16 bits (fp8's GEMMs outside linear layers do).
bool sixteenBit(TrainingPrecision math, bool linearLayer) {
    return alignmentOf(math, linearLayer) == 8;
}

struct GemmWidths {
    int64_t reduction = 0, columns = 0;
};

// A GEMM's reduction length and output width, where one GEMM has them: a mixture of experts' reduction
// is its routes' average, not one GEMM's (its experts' widths are the config's hidden and expert sizes).
std::optional<GemmWidths> widthsOf(const AnalyzedOp& op) {
    if (op.kind != OpKind::Gemm || op.type == "MixtureOfExperts" || op.gemmReduction <= 0 || op.gemmColumns <= 0)
        return std::nullopt;
    // The reduction comes from the FLOPs (model_analysis): a bias adds half a FLOP per output to it.
    return GemmWidths{int64_t(std::floor(op.gemmReduction + 1e-6)), int64_t(std::llround(op.gemmColumns))};
}

std::string grouped(int64_t v) {  // 50265 -> "50,265"
    std::string digits = std::to_string(v), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// "lm_head/MatMul (50,265 columns) and crit/Gemm_2 (a reduction of 1,001)", the first two and a count.
std::string named(const std::vector<const UnalignedGemm*>& gemms) {
    std::ostringstream os;
    const size_t shown = std::min<size_t>(gemms.size(), 2);
    for (size_t i = 0; i < shown; ++i) {
        const UnalignedGemm& g = *gemms[i];
        if (i > 0) os << (gemms.size() == 2 ? " and " : ", ");
        os << g.name << " (";
        if (g.columns % g.alignment != 0) os << grouped(g.columns) << " columns";
        if (g.columns % g.alignment != 0 && g.reduction % g.alignment != 0) os << ", ";
        if (g.reduction % g.alignment != 0) os << "a reduction of " << grouped(g.reduction);
        os << ")";
    }
    if (gemms.size() > 2) os << " and " << gemms.size() - 2 << " more GEMMs";
    double share = 0;
    for (const UnalignedGemm* g : gemms) share += g->flopsShare;
    os << ", " << std::lround(share * 100) << "% of the forward FLOPs, " << (gemms.size() == 1 ? "has" : "have");
    return os.str();
}

}  // namespace

double oddWidthGemmSlowdown(const AnalyzedOp& op, TrainingPrecision math) {
    if (!sixteenBit(math, op.opClass == "linear")) return 1;
    const std::optional<GemmWidths> w = widthsOf(op);
    return w && (w->reduction % 2 != 0 || w->columns % 2 != 0) ? kOddWidthGemmSlowdown : 1;
}

std::vector<UnalignedGemm> unalignedGemms(const ModelAnalysis& a, const GpuSpec& gpu, TrainingPrecision p, double n,
                                          double minShare) {
    double total = 0;
    for (const AnalyzedOp& op : a.ops) total += op.forwardFlops.at(n);
    std::vector<UnalignedGemm> out;
    if (total <= 0 || !gpu.limits.tensorCores) return out;
    for (const AnalyzedOp& op : a.ops) {
        const std::optional<GemmWidths> w = widthsOf(op);
        if (!w) continue;
        const TrainingPrecision math = mathPrecisionOf(op, gpu, p);
        const int alignment = alignmentOf(math, op.opClass == "linear");
        if (alignment == 0 || (w->reduction % alignment == 0 && w->columns % alignment == 0)) continue;
        const double share = op.forwardFlops.at(n) / total;
        if (share < minShare) continue;
        out.push_back({op.name, w->reduction, w->columns, alignment, share, oddWidthGemmSlowdown(op, math)});
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const UnalignedGemm& x, const UnalignedGemm& y) { return x.flopsShare > y.flopsShare; });
    return out;
}

std::string unalignedGemmNote(const std::vector<UnalignedGemm>& gemms) {
    std::vector<const UnalignedGemm*> charged, uncharged;
    for (const UnalignedGemm& g : gemms) (g.slowdown > 1 ? charged : uncharged).push_back(&g);
    std::vector<std::string> sentences;
    if (!charged.empty())
        sentences.push_back(named(charged) + " an odd width in 16 bits, rows that no tensor-op kernel of Ampere " +
                            "or later reads (they are not 4-byte aligned): cuBLAS runs such GEMMs on slower " +
                            "fallback kernels, charged here at " + std::to_string(std::lround(kOddWidthGemmSlowdown)) +
                            "x their aligned time (Netflix's published LM-head measurement; not measured here)");
    if (!uncharged.empty())
        sentences.push_back(named(uncharged) + " rows that are not a multiple of 16 bytes (" +
                            std::to_string(uncharged.front()->alignment) +
                            " elements at this precision): cuBLAS runs such GEMMs without the aligned kernels its "
                            "peak rates come from, which this prediction does not charge (not measured)");
    if (sentences.empty()) return "";
    std::string note = sentences.front();
    if (sentences.size() > 1) note += "; " + sentences.back();
    return note +
           "; padding the dimension to a multiple of 64, as NVIDIA's BERT pads its vocabulary to 30,528 and "
           "nanoGPT GPT-2's to 50,304, avoids it";
}

}  // namespace ts::predictors
