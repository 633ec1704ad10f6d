#pragma once
// Internal (includes LibTorch): how each graph operation runs as ATen calls, and how the values
// that no operation produces (inputs, parameters, buffers, constants) get contents.
//
// Operations follow ONNX semantics (ops.h); the lowering calls differentiable ATen functions so
// that autograd gives each operation's backward, and autocast (set by the caller) decides which
// run in 16 bits, as in PyTorch training.
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts::torchexec {

struct LoweringOptions {
    bool training = true;  // Dropout and BatchNormalization in training mode
    // Filled in by GraphExecutor::runOp: where generators (ConstantOfShape, Range...) create their
    // outputs, and the sizes at which the graph's symbolic known contents are evaluated.
    at::Device device = at::kCPU;
    int64_t batch = 1;
    int64_t seq = 1;
};

// Runs operation `opIndex` of `g` on `inputs` (one per op input; an undefined tensor for an
// omitted optional input) and returns one tensor per op output. Throws ExecutionError naming the
// operation and the problem (unsupported operator or attribute).
std::vector<at::Tensor> runOperation(const Graph& g, int opIndex, const std::vector<at::Tensor>& inputs,
                                     const LoweringOptions& options);

// Contents for a value no operation produces, at batch n and sequence s, on `device`:
// - Parameter: PyTorch's default initialisation for its role (uniform +-1/sqrt(fan_in) for weights,
//   ones for normalization scales, zeros for biases), requires_grad set;
// - Buffer: running means 0, running variances 1, anything else zeros;
// - Constant: its known contents (intData/floatData), else values valid for every consumer;
// - Input: float data ~ N(0,1); integer ids uniform in the range every consumer accepts
//   (for example below the vocabulary of the Gather or Embedding that reads them); masks all ones.
// `gen` is a CPU generator: contents are drawn on the CPU and moved to `device`, so that the same
// seed gives the same model and batch on every device.
at::Tensor initialValue(const Graph& g, int valueIndex, int64_t n, int64_t s, const at::Device& device,
                        at::Generator& gen);

// Whether the executor can run this operator type.
bool canExecute(const std::string& type);

at::ScalarType scalarTypeOf(DType t);  // throws ExecutionError for String/Unknown
DType dtypeOf(at::ScalarType t);

}  // namespace ts::torchexec
