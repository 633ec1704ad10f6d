#pragma once
// What bounds each operation's forward and backward pass in a training iteration, and whether its
// arithmetic runs on tensor cores: read off the terms of the iteration rows the predictor times
// the pass with (operation_times.h: kernel(n) = max(tiled(n), memory(n)) + fixed),
// so that the explorer, the CLI and the report say what the time model computes. The rows are
// prepared once per (model, GPU, precision); at() is one pass over them per batch size.
//
//   LayerBounds bounds(predictor, gpu, TrainingPrecision::AmpFp16);
//   for (const LayerBound& b : bounds.at(32)) ... passBoundName(b.forward) ...
#include <cstdint>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace ts::predictors {

enum class PassBound : uint8_t {
    Compute,  // its FLOPs at the precision's sustained rate (and the last wave's half) take longest
    Memory,   // its DRAM bytes at the achieved bandwidth take longest
    Wave,     // one wave of output tiles takes longer than its FLOPs spread over every SM: too few
              // tiles to fill the GPU (small GEMMs, recurrent time steps)
    Latency,  // the fixed time of its kernels (launch gap and ramp, recurrent steps) exceeds its work
    Link,     // a collective: its bytes over the interconnect (tensor parallelism's all-reduces)
};
inline constexpr int kPassBoundCount = 5;
const char* passBoundName(PassBound b);  // "compute", "memory", "wave", "latency", "link"

// The term of `row`'s kernel time that wins at batch n (the row's host floor and casts aside).
PassBound boundOf(const TimeRow& row, double n);

struct LayerBound {
    int op = -1;               // graph operation
    bool tensorCores = false;  // a GEMM, convolution or recurrent layer whose math runs on tensor
                               // cores at this precision on this GPU (mathPrecisionOf)
    PassBound forward = PassBound::Memory;
    bool hasBackward = false;
    PassBound backward = PassBound::Memory;
};

class LayerBounds {
public:
    // The iteration rows of `predictor`'s model on `gpu` at `p`. Throws ModelError naming the GPU
    // when it cannot train at `p` (unsupportedReason).
    LayerBounds(const TrainingPredictor& predictor, const GpuSpec& gpu, TrainingPrecision p);
    // Every operation that does work, graph order.
    std::vector<LayerBound> at(double n) const;

private:
    OperationTimes rows_;
    std::vector<bool> tensorCores_;  // by graph operation
};

}  // namespace ts::predictors
