#pragma once
// Internal to predictors/trace: the pieces of trace_change.h's analysis shared by its files
// (trace_batch.cpp finds and rewrites the batch, trace_autocast.cpp the precision).
#include <set>
#include <vector>

#include "trace_shapes.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/trace/trace_change.h"

namespace ts::predictors {

using Shape = std::vector<double>;

// The shapes of the trace's parameters: the inputs of AccumulateGrad (autograd accumulates each
// parameter's gradient there once per step), and the transposes of the 2-D ones (a linear layer's
// GEMM reads W^T). Empty when the trace has no backward pass.
std::set<Shape> parameterShapes(const KinetoTrace& trace);
bool isAccumulateGrad(const std::string& opName);

// How a batch of `from` becomes `to` in one operator's shapes.
struct BatchRewrite {
    double from = 0, to = 0;
    std::vector<int64_t> tokenSizes;  // TraceBatch::tokenSizes
    const std::set<Shape>* parameters = nullptr;
};
struct BatchRewritten {
    bool batched = false;           // some input carries the batch
    bool reductionBatched = false;  // a GEMM's reduction dimension does (weight gradients)
};
// Rewrites `shapes` (of operator `op`) in place at the new batch.
BatchRewritten rewriteBatch(const std::string& op, OperatorShapes& shapes, const BatchRewrite& rewrite);

// Where each operator's nearest enclosing operator on its thread is (-1 at the top).
std::vector<int32_t> operatorParents(const KinetoTrace& trace);

}  // namespace ts::predictors
