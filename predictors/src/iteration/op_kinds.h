#pragma once
// Internal to the model analysis: what the time model needs to know of one operation besides its costs.
#include <array>
#include <cstdint>
#include <vector>

#include "trainscope/core/graph.h"
#include "trainscope/core/ops.h"
#include "trainscope/predictors/iteration/model_analysis.h"

namespace ts::predictors {

// Sets a's kind (GEMM, convolution, recurrent, attention, collective, memory or none), whether it has a
// backward, its GEMM kernels' reduction and columns (or convolution's groups and Winograd eligibility), a
// recurrent layer's hidden GEMM and steps, the attention backend that runs it, and the kernels autograd
// adds: sums of a broadcast input's gradient and of a value's gradients from several readers. `c2` is its
// cost at the middle sample batch, `numel` every value's elements at the sample batches, `grad` which
// values need gradients, `gradConsumers` how many operations needing gradients read each value.
void classifyOp(const Graph& g, const Operation& op, const OpCost& c2, const std::vector<bool>& grad,
                const std::vector<std::array<double, 3>>& numel, const std::vector<int>& gradConsumers, int64_t seq,
                AnalyzedOp& a);

}  // namespace ts::predictors
