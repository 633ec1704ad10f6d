#pragma once
// Tensor-core GEMMs whose rows cuBLAS cannot read in 16-byte vectors: a reduction length or an output
// width (the leading dimensions of a linear layer's row-major operands, forward and backward) that is
// not a multiple of 16 bytes at the precision's element size (8 elements in 16 bits, 4 in TF32, 16 in
// fp8). cuBLAS still runs them on tensor cores, but not with the kernels that need aligned rows
// (NVIDIA's Matrix Multiplication Background guide, "Tensor Core Requirements"), which is why NVIDIA's
// BERT pads its vocabulary to 30,528 and nanoGPT GPT-2's to 50,304. How much slower is not in this
// project's data (XLA's GEMM tables hold aligned shapes only), so the time model does not charge it
// and the prediction says so in a note.
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
};

// The GEMMs of `a` whose math runs on tensor cores at `p` on `gpu` (mathPrecisionOf) with a reduction
// length or output width that is not a multiple of 16 bytes, carrying at least `minShare` of the
// forward FLOPs at batch n; the largest share first.
std::vector<UnalignedGemm> unalignedGemms(const ModelAnalysis& a, const GpuSpec& gpu, TrainingPrecision p, double n,
                                          double minShare = 0.01);

// One sentence for a prediction's notes naming them (the first two, and how many more); "" for none.
std::string unalignedGemmNote(const std::vector<UnalignedGemm>& gemms);

}  // namespace ts::predictors
