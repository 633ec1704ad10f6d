#pragma once
// Internal to the op_lowering*.cpp files: what one operation's lowering sees (its inputs, attributes
// and the graph), and the tables each family file contributes.
//
// Tensor inputs go through t(i), which moves a CPU tensor to the operation's compute device (the
// device of its first non-CPU input): shape vectors and small integer constants live on the CPU,
// as Python lists do in eager PyTorch. Arguments (shapes, axes, scalars) go through ints(i) and
// scalar(i), which read the graph's known contents when the tensor sits on an accelerator, so that
// reading an argument never waits for the device.
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "op_lowering.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profiler.h"

namespace ts::torchexec {

class OpCtx {
public:
    OpCtx(const Graph& g, int opIndex, const std::vector<at::Tensor>& inputs, const LoweringOptions& options);

    const Graph& g;
    const Operation& op;
    const std::vector<at::Tensor>& inputs;
    const LoweringOptions& options;

    size_t numInputs() const { return inputs.size(); }
    size_t numOutputs() const { return op.outputs.size(); }
    bool has(size_t i) const { return i < inputs.size() && inputs[i].defined(); }
    // Whether output k is used by the graph (present and not an omitted placeholder).
    bool wantsOutput(size_t k) const { return k < op.outputs.size() && op.outputs[k] >= 0; }
    // Tensor input i on the compute device; throws when missing.
    at::Tensor t(size_t i) const;
    // An operand of an elementwise operation: as t(i), except that a CPU scalar stays on the CPU,
    // where ATen reads it as a number (no copy to the device).
    at::Tensor operand(size_t i) const;
    const at::Tensor& raw(size_t i) const;  // as given (any device)
    at::Device device() const { return device_; }
    // The device for tensors an operation creates without tensor inputs (generators).
    at::Device creationDevice() const { return options.device; }

    // Integer contents of argument input i (shape vectors, axes, sizes).
    std::vector<int64_t> ints(size_t i) const;
    // One number from argument input i (a scalar or one-element tensor).
    double scalar(size_t i) const;
    int64_t scalarInt(size_t i) const;
    // Known value of a one-element floating or integer argument without touching the device.
    std::optional<double> knownScalar(size_t i) const;

    int64_t attrInt(const std::string& key, int64_t def) const { return op.attrInt(key, def); }
    double attrFloat(const std::string& key, double def) const { return op.attrFloat(key, def); }
    std::string attrString(const std::string& key, const std::string& def) const { return op.attrString(key, def); }
    std::vector<int64_t> attrInts(const std::string& key, const std::vector<int64_t>& def = {}) const {
        return op.attrInts(key, def);
    }
    std::vector<double> attrFloats(const std::string& key) const;
    std::vector<std::string> attrStrings(const std::string& key) const;
    bool hasAttr(const std::string& key) const { return op.hasAttr(key); }
    int64_t opset() const { return op.attrInt("_opset", 17); }

    // Declared dtype of output k (graph shape inference).
    DType outDtype(size_t k) const;
    const Value& inputValue(size_t i) const { return g.values[static_cast<size_t>(op.inputs[i])]; }

    // Throws ExecutionError "<op name> (<type>): <problem>".
    [[noreturn]] void fail(const std::string& problem) const;

private:
    at::Device device_ = at::kCPU;
};

using Outputs = std::vector<at::Tensor>;
using LowerFn = Outputs (*)(const OpCtx&);

struct LoweringEntry {
    const char* type;
    LowerFn run;
};

// Each family file lists its operators.
void addElementwiseLowerings(std::vector<LoweringEntry>& t);  // op_lowering.cpp: unary, binary, activations
void addNnLowerings(std::vector<LoweringEntry>& t);           // op_lowering_nn.cpp
void addTransformerLowerings(std::vector<LoweringEntry>& t);  // op_lowering_transformer.cpp
void addRecurrentLowerings(std::vector<LoweringEntry>& t);    // op_lowering_recurrent.cpp
void addResizeLowerings(std::vector<LoweringEntry>& t);       // op_lowering_resize.cpp
void addTensorLowerings(std::vector<LoweringEntry>& t);       // op_lowering_tensor.cpp

// ---- helpers shared by the family files ----
int64_t normalizeAxis(const OpCtx& c, int64_t axis, int64_t rank);
// Adds the dimension size to negative indices (ONNX index convention).
at::Tensor wrapNegativeIndices(const at::Tensor& idx, int64_t size);
std::vector<int64_t> sizesOf(const at::Tensor& t);

}  // namespace ts::torchexec
