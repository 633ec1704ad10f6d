#pragma once
// Internal (LibTorch): one training iteration of a graph as PyTorch would run it: autocast for
// the AMP precisions, a loss on random labels, backward (with dynamic loss scaling for fp16),
// and the optimizer's step. Each phase can be timed separately by the caller.
#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "graph_executor.h"
#include "trainscope/core/profiler.h"

namespace ts::torchexec {

// Enables autocast (AMP precisions) or TF32 for its lifetime, restoring the previous state.
class PrecisionScope {
public:
    PrecisionScope(TrainingPrecision p, const at::Device& device);
    ~PrecisionScope();
    PrecisionScope(const PrecisionScope&) = delete;
    PrecisionScope& operator=(const PrecisionScope&) = delete;

private:
    TrainingPrecision precision_;
    at::DeviceType deviceType_;
    bool prevEnabled_ = false;
    at::ScalarType prevDtype_ = at::kFloat;
    bool prevTf32Cublas_ = false, prevTf32Cudnn_ = false;
};

// Chooses the loss from the graph's first floating output: cross-entropy over the last dimension
// with random labels when it looks like class scores (rank >= 2, last dim >= 2, not an image),
// otherwise the mean square of the output.
class LossFunction {
public:
    LossFunction(const Graph& g, int64_t batch, int64_t seq, const at::Device& device, at::Generator& gen);
    at::Tensor operator()(const GraphExecutor& ex) const;
    const std::string& description() const { return description_; }
    double labelBytes() const { return labels_.defined() ? static_cast<double>(labels_.nbytes()) : 0; }

private:
    int output_ = -1;
    bool crossEntropy_ = false;
    at::Tensor labels_;
    std::string description_;
};

// The optimizer over the executor's parameters, with the fp16 gradient scaler when needed.
class TrainingStep {
public:
    TrainingStep(GraphExecutor& ex, Optimizer kind, TrainingPrecision precision);
    ~TrainingStep();

    void zeroGrad();                     // set_to_none, as PyTorch's default
    void backward(const at::Tensor& loss);  // scales the loss for amp-fp16
    void step();                         // unscales, skips on inf/nan (fp16), updates the scale
    // Bytes of optimizer state (momentum, Adam moments) currently allocated.
    double optimizerStateBytes() const;
    double gradientBytes() const;
    bool lastStepSkipped() const { return skipped_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    bool skipped_ = false;
};

}  // namespace ts::torchexec
