#pragma once
// Per-layer figures the module tree, the roofline and the timeline share: predicted time, share of
// the iteration, FLOPs and DRAM bytes at the current batch and precision, arithmetic intensity,
// achieved FLOP/s, what bounds the layer and whether it runs on tensor cores. Derived from the
// target GPU's prediction and the predictor's model analysis; measured kernels (a loaded profile
// with CUPTI records) decide tensor-core use where they exist.
#include <QString>
#include <vector>

namespace ts::gui {

class ExplorerState;

enum class LayerBound { Compute, Memory, Launch };
QString layerBoundName(LayerBound b);  // "compute", "memory", "launch"

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
    LayerBound bound = LayerBound::Memory;
};

struct LayerFigures {
    int op = -1;
    double forwardMs = 0, backwardMs = 0;  // predicted, target GPU
    double share = 0;                      // (forward + backward) / iteration
    double forwardFlops = 0, backwardFlops = 0;
    double forwardBytes = 0;                // DRAM bytes read and written by the forward kernels
    double intensity = 0;                   // forwardFlops / forwardBytes (FLOP/byte)
    double achievedFlopsPerS = 0;           // forwardFlops / forwardMs
    LayerBound bound = LayerBound::Memory;  // of the forward pass
    PassFigures backward;                   // the backward pass (zero when the layer has none)
    TensorCoreUse tensorCores = TensorCoreUse::No;
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
LayerFigureTable computeLayerFigures(const ExplorerState& state);

// A pass is launch-bound when its predicted time is under this and more than twice what its FLOPs
// and bytes need at the roofline: fixed costs dominate it.
inline constexpr double kLaunchBoundMs = 0.02;

}  // namespace ts::gui
