#pragma once
// Per-layer figures the module tree, the roofline and the timeline share: predicted time, share of
// the iteration, FLOPs and DRAM bytes at the current batch and precision, arithmetic intensity,
// achieved FLOP/s, what bounds each pass and whether it runs on tensor cores. Derived from one
// snapshot's target prediction and the predictor's model analysis; the bound and the predicted
// tensor-core use are the predictor's (predictors/iteration/layer_bounds.h, as the CLI prints
// them); measured kernels (a loaded profile with CUPTI records) decide tensor-core use where they
// exist.
#include <QString>
#include <vector>

#include "trainscope/predictors/iteration/layer_bounds.h"

namespace ts::gui {

struct PredictionSnapshot;

using predictors::PassBound;
QString boundName(PassBound b);  // predictors' passBoundName: "compute", "memory", "wave", "latency"

enum class TensorCoreUse { No, Predicted, Measured, MeasuredNone };
QString tensorCoreName(TensorCoreUse t);  // "", "yes (predicted)", "yes (measured)", "no (measured)"
inline bool usesTensorCores(TensorCoreUse t) {
    return t == TensorCoreUse::Predicted || t == TensorCoreUse::Measured;
}

// One pass's position on the roofline.
struct PassFigures {
    double flops = 0;
    double bytes = 0;              // DRAM bytes its kernels read and write
    double intensity = 0;          // flops / bytes (FLOP/byte)
    double achievedFlopsPerS = 0;  // flops / its predicted time
    PassBound bound = PassBound::Memory;
};

struct LayerFigures {
    int op = -1;
    double forwardMs = 0, backwardMs = 0;  // predicted, target GPU
    double share = 0;                      // (forward + backward) / iteration
    double forwardFlops = 0, backwardFlops = 0;
    double forwardBytes = 0;              // DRAM bytes read and written by the forward kernels
    double intensity = 0;                 // forwardFlops / forwardBytes (FLOP/byte)
    double achievedFlopsPerS = 0;         // forwardFlops / forwardMs
    PassBound bound = PassBound::Memory;  // of the forward pass
    PassFigures backward;                 // the backward pass (zero when the layer has none)
    TensorCoreUse tensorCores = TensorCoreUse::No;
    // Bytes autograd keeps for backward at the current batch and precision, without checkpointing; a
    // tensor several layers keep counts at the first of them (the memory model's activations, by layer).
    double savedBytes = 0;
    double totalMs() const { return forwardMs + backwardMs; }
};

struct LayerFigureTable {
    std::vector<LayerFigures> layers;  // the timed layers, graph order
    std::vector<int> rowOfOp;          // graph op -> index in layers, -1 when untimed
    double iterationMs = 0;
    double peakFlopsPerS = 0;      // the precision's peak (tensor cores when it uses them)
    double fp32PeakFlopsPerS = 0;  // CUDA cores: what layers autocast leaves in fp32 reach
    double bandwidthBytesPerS = 0;
    const LayerFigures* find(int op) const {
        return op >= 0 && size_t(op) < rowOfOp.size() && rowOfOp[size_t(op)] >= 0 ? &layers[size_t(rowOfOp[size_t(op)])]
                                                                                  : nullptr;
    }
};

// Empty when there is no model or the prediction is unsupported.
LayerFigureTable computeLayerFigures(const PredictionSnapshot& snapshot);

}  // namespace ts::gui
