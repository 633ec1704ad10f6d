#pragma once
// Internal to the model analysis: the element size of every value under a training precision (the
// model in bf16 with its fp32 islands, or autocast's output dtypes), and the size an operation's
// kernel reads an input at (autocast's cast copies).
#include <string>
#include <vector>

#include "trainscope/core/graph.h"
#include "trainscope/predictors/iteration/model_analysis.h"

namespace ts::predictors {

inline bool isFloat32(const Value& v) {
    return v.dtype == DType::Float32;
}

inline bool isData(const Value& v) {
    return v.kind == ValueKind::Activation || v.kind == ValueKind::Input;
}

// Element size of every value under precision p.
std::vector<int> elementSizes(const Graph& g, TrainingPrecision p);

// The value whose storage each value is (itself, or through casts to the dtype and element size a
// tensor already has, which Tensor.to returns as they are: x.float() of an fp32 x is x), so that
// tensors saved for backward through such casts are counted once.
std::vector<int> storageRoots(const Graph& g, const std::vector<int>& es);

// How the kernel of `op` reads input `v` under p: autocast's cast copy, or the tensor itself.
int readSize(const Graph& g, const Operation& op, const std::string& opClass, int v, TrainingPrecision p,
             const std::vector<int>& es);

}  // namespace ts::predictors
