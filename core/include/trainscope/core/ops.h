#pragma once
// The operator registry: for every supported operator, shape inference (with the
// batch dimension symbolic) and the analytic cost at a concrete batch size.
//
// Cost conventions (also in docs/costs.md):
// - A multiply-add is 2 FLOPs; comparisons, exp, max and the like count 1 FLOP per element.
// - Backward FLOPs count gradients for every input that needs one: data gradients for
//   activations, weight gradients for parameters. Conv and MatMul/Gemm backward therefore
//   cost twice their forward when both data and weights need gradients; model inputs and
//   integer tensors get no gradient.
// - Bytes read/written are the forward pass's tensor traffic assuming every input is read
//   once and every output written once (no cache reuse): the roofline's DRAM estimate.
// - Saved bytes are what autograd keeps for backward, listed per value so that a tensor
//   saved by two operations is counted once in model totals.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts {

struct SavedTensor {
    int value = -1;       // graph value saved for backward, or -1 for an extra buffer
    double bytes = 0;     // its size at the evaluated batch size
    // An extra buffer in the operator's output dtype (the size above is at the graph's dtype): it
    // narrows with the output where a precision narrows it. Otherwise an extra buffer keeps its size.
    bool inOutputDtype = false;
    // A copy, at the output's dtype, of the extra buffer saved just before it, that exists only where
    // a precision makes the output narrower than that buffer (transformers' eager attention: the
    // probabilities, computed in fp32, cast to the model's dtype for the product with v). Not part of
    // the graph-dtype totals (savedBytes, the cost report).
    bool onlyWhenNarrowed = false;
    // An extra buffer an operator computes as autocast runs softmax without a dtype (BERT's, BART's,
    // GPT-2's eager attention): in fp32 under autocast, in the output's dtype under any other precision.
    bool fp32UnderAutocast = false;
};

struct OpCost {
    double forwardFlops = 0;
    double backwardFlops = 0;
    double bytesRead = 0;
    double bytesWritten = 0;
    std::vector<SavedTensor> saved;  // activations autograd saves (parameters excluded)
    // Bytes the backward allocates beside its inputs' gradients and alive with them, at the graph's
    // dtype of input 0 (it narrows with that input where a precision narrows it): e.g. the
    // log-probabilities' gradient between cross_entropy's nll_loss and log_softmax backward.
    double backwardScratch = 0;
    double savedBytes() const;
};

// Which inputs of an operation need a gradient (activations derived from a trainable
// path or parameters); computed once per graph by requiresGrad().
std::vector<bool> requiresGrad(const Graph& g);

// Infers output dtypes, shapes and (where it can) known integer contents of op `opIndex`,
// writing them into the graph's output values. Throws ShapeError with a message naming
// the problem (the caller adds file and node). Unknown operator types throw ShapeError
// beginning with "unsupported operator".
void inferShapes(Graph& g, int opIndex);

// Cost of one operation at batch size n and sequence length s.
// gradMask: requiresGrad() of the graph (indexed by value).
OpCost operationCost(const Graph& g, int opIndex, int64_t n, int64_t s, const std::vector<bool>& gradMask);

bool isSupportedOperator(std::string_view type);
std::vector<std::string> supportedOperators();

}  // namespace ts
