#include "trainscope/predictors/iteration/layer_bounds.h"

#include <algorithm>

namespace ts::predictors {

const char* passBoundName(PassBound b) {
    switch (b) {
        case PassBound::Compute:
            return "compute";
        case PassBound::Memory:
            return "memory";
        case PassBound::Wave:
            return "wave";
        case PassBound::Latency:
            return "latency";
        case PassBound::Link:
            return "link";
    }
    return "memory";
}

PassBound boundOf(const TimeRow& row, double n) {
    if (row.link) return PassBound::Link;
    const double tiled = row.tiledMs(n);
    const double memory = row.memoryMs.at(n);
    const double work = std::max(tiled, memory);
    if (row.fixedMs > work) return PassBound::Latency;
    if (memory >= tiled) return PassBound::Memory;
    // Wave-bound: a wave (of the whole or the split reduction) is longer than the FLOPs at the
    // full rate with their tail (TimeRow::tiledMs).
    const double compute = row.computeMs.at(n);
    const double tail = compute >= row.waveMs ? row.waveMs : std::max(compute, row.splitWaveMs);
    return row.splitWaveMs > compute + tail / 2 ? PassBound::Wave : PassBound::Compute;
}

LayerBounds::LayerBounds(const TrainingPredictor& predictor, const GpuSpec& gpu, TrainingPrecision p)
    : rows_(prepareIterationTimes(predictor.analysis(), gpu, p, predictor.streamModel(), predictor.table())) {
    const ModelAnalysis& m = predictor.analysis();
    tensorCores_.assign(m.ops.size(), false);
    for (const AnalyzedOp& op : m.ops) {
        const bool gemmLike = op.kind == OpKind::Gemm || op.kind == OpKind::Conv || op.kind == OpKind::Recurrent ||
                              op.kind == OpKind::Attention;
        if (gemmLike && op.op >= 0 && size_t(op.op) < tensorCores_.size())
            tensorCores_[size_t(op.op)] = mathPrecisionOf(op, gpu, p) != TrainingPrecision::Fp32;
    }
}

std::vector<LayerBound> LayerBounds::at(double n) const {
    std::vector<LayerBound> out;
    out.reserve(rows_.forward.size());
    // Both row lists are in graph order; backward rows are the forward rows' subset with a backward.
    size_t b = 0;
    for (const TimeRow& f : rows_.forward) {
        LayerBound l;
        l.op = f.op;
        l.tensorCores = f.op >= 0 && size_t(f.op) < tensorCores_.size() && tensorCores_[size_t(f.op)];
        l.forward = boundOf(f, n);
        if (b < rows_.backward.size() && rows_.backward[b].op == f.op) {
            l.hasBackward = true;
            l.backward = boundOf(rows_.backward[b++], n);
        }
        out.push_back(l);
    }
    return out;
}

}  // namespace ts::predictors
