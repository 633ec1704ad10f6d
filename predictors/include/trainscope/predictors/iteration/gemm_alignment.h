#pragma once
// Tensor-core GEMMs whose rows cuBLAS cannot read in 16-byte vectors: a reduction length or an output
// width (the leading dimensions of a linear layer's row-major operands, forward and backward) that is
// not a multiple of 16 bytes at the precision's element size (8 elements in 16 bits, 4 in TF32, 16 in
// fp8). cuBLAS runs them without the kernels that need aligned rows (NVIDIA's Matrix Multiplication
// Background guide, "Tensor Core Requirements"), which is why NVIDIA's BERT pads its vocabulary to
// 30,528 and nanoGPT GPT-2's to 50,304.
//
// One case is charged: a 16-bit GEMM with an odd width. Its rows are 2-byte aligned, below the 4 bytes
// Ampere's asynchronous copies move at least, so no Ampere-or-later tensor-op kernel reads them and
// cuBLAS falls back to Turing-era WMMA kernels of 32x32 tiles (the profile in pytorch/pytorch#146817: an
// A100's bf16 GEMM of an odd width in cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_nn_align1).
// Netflix measured what that costs an LM head: "tripling that layer's execution time" (Netflix Tech
// Blog, "Scaling LLM Post-Training at Netflix", 2026-02-13), kOddWidthGemmSlowdown. Even widths that are
// not a multiple of 8 (4- or 8-byte rows, which Ampere's kernels of narrower copies read) and TF32's
// unaligned rows (4-byte copies: cutlass_80_tensorop_s1688gemm_*_align1 kernels in the A100 traces) are
// not charged: XLA's GEMM tables hold aligned shapes only, and what this project's data says of TF32's
// conflicts (the recommendation trace's K = 1,705 GEMMs ran at about a quarter of the modelled rate,
// docs/traces.md; BART's published TF32 rows, logits 50,265 wide, are within 6% uncharged). The
// prediction says so in a note.
//
//   for (const UnalignedGemm& u : unalignedGemms(analysis, gpu, TrainingPrecision::AmpBf16, 8)) ...
#include <cstdint>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/training_vocabulary.h"
#include "trainscope/predictors/iteration/model_analysis.h"

namespace ts::predictors {

struct UnalignedGemm {
    std::string name;       // the operation ("lm_head/MatMul")
    int64_t reduction = 0;  // its reduction length (K) and output width (N), elements
    int64_t columns = 0;
    int alignment = 8;      // the elements 16 bytes hold at its math precision
    double flopsShare = 0;  // of the model's forward FLOPs at the batch
    double slowdown = 1;    // what the time model charges it (oddWidthGemmSlowdown)
};

// Published, not measured here: Netflix's LM head of a misaligned vocabulary, 3x its aligned time.
inline constexpr double kOddWidthGemmSlowdown = 3.0;

// How many times its aligned time a GEMM of `op` takes with its math at `math`: kOddWidthGemmSlowdown for
// a 16-bit tensor-core GEMM whose reduction length or output width is odd, else 1.
double oddWidthGemmSlowdown(const AnalyzedOp& op, TrainingPrecision math);

// The GEMMs of `a` whose math runs on tensor cores at `p` on `gpu` (mathPrecisionOf) with a reduction
// length or output width that is not a multiple of 16 bytes, carrying at least `minShare` of the
// forward FLOPs at batch n; the largest share first.
std::vector<UnalignedGemm> unalignedGemms(const ModelAnalysis& a, const GpuSpec& gpu, TrainingPrecision p, double n,
                                          double minShare = 0.01);

// A prediction's note naming them (the first two of each kind, charged or not, and how many more) and
// what the time model does with them; "" for none.
std::string unalignedGemmNote(const std::vector<UnalignedGemm>& gemms);

}  // namespace ts::predictors
