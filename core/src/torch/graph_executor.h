#pragma once
// Internal (includes LibTorch): runs a graph's operations in order over ATen tensors, keeping each
// value until its last use so that memory behaves as in an eager PyTorch forward pass.
#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "op_lowering.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profiler.h"

namespace ts::torchexec {

class GraphExecutor {
public:
    GraphExecutor(const Graph& g, int64_t batch, int64_t seq, at::Device device, uint64_t seed);

    const Graph& graph() const { return g_; }
    int64_t batch() const { return batch_; }
    int64_t seq() const { return seq_; }
    const at::Device& device() const { return device_; }

    // Creates every value no operation produces (inputs, parameters, buffers, constants);
    // inputs named in `feeds` take those contents.
    void materializeLeaves(const std::map<std::string, HostTensor>& feeds = {});
    // Only the leaves of these kinds (to measure weights and inputs apart).
    void materializeLeaves(const std::vector<ValueKind>& kinds);
    // Fresh random contents for the model inputs only (a new batch).
    void regenerateInputs();

    // Runs the operations in order. Activations are released after their last use unless
    // `keepAll`; `afterOp` (optional) is called after each operation.
    void forward(const LoweringOptions& options, bool keepAll = false,
                 const std::function<void(int op)>& afterOp = {});
    // Runs one operation on the current values and stores its outputs.
    void runOp(int op, const LoweringOptions& options);
    // Drops the activations whose last reader is `op` (and its unread outputs).
    void releaseDeadAfter(int op);

    at::Tensor& value(int index) { return values_[static_cast<size_t>(index)]; }
    const at::Tensor& value(int index) const { return values_[static_cast<size_t>(index)]; }
    std::vector<at::Tensor> inputsOf(int op) const;
    // Leaf tensors that are trainable parameters (requires_grad), in value order.
    std::vector<at::Tensor> parameters() const;
    std::vector<int> parameterValues() const;  // their value indices
    // Drops every activation (keeps leaves).
    void clearActivations();

    // The last operation reading each value (-1: never read; graph outputs are never released).
    const std::vector<int>& lastUse() const { return lastUse_; }

private:
    const Graph& g_;
    int64_t batch_, seq_;
    at::Device device_;
    at::Generator gen_;
    std::vector<at::Tensor> values_;
    std::vector<int> lastUse_;
};

HostTensor toHost(const at::Tensor& t);
at::Tensor fromHost(const HostTensor& h, const std::string& what);

}  // namespace ts::torchexec
