// What the time model needs to know of one operation besides its costs (model_analysis.cpp): its kind, the
// shape of its GEMMs or convolution, its attention backend, a recurrent layer's steps, and the kernels
// autograd adds around it.
#include "op_kinds.h"

#include <algorithm>

namespace ts::predictors {

void classifyOp(const Graph& g, const Operation& op, const OpCost& c2, const std::vector<bool>& grad,
                const std::vector<std::array<double, 3>>& numel, const std::vector<int>& gradConsumers, int64_t seq,
                AnalyzedOp& a) {
    const bool work = c2.forwardFlops > 0 || c2.bytesRead > 0 || c2.bytesWritten > 0;
    // An MoE layer's experts are grouped GEMMs: timed as one GEMM of the tokens' outputs over the
    // reduction its FLOPs imply (top_k x 3 x the expert width), its weights read once.
    if (op.type == "Gemm" || op.type == "MatMul" || op.type == "Einsum" || op.type == "MixtureOfExperts")
        a.kind = OpKind::Gemm;
    else if (op.type == "Conv" || op.type == "ConvTranspose")
        a.kind = OpKind::Conv;
    else if (op.type == "LSTM" || op.type == "GRU" || op.type == "RNN")
        a.kind = OpKind::Recurrent;
    else if (op.type == "ScaledDotProductAttention")
        a.kind = OpKind::Attention;
    else
        a.kind = work ? OpKind::Memory : OpKind::None;
    if (!work) a.kind = OpKind::None;
    if (op.type == "AllReduce") {  // f moves nothing forward, but its backward sums the gradient
        a.kind = OpKind::Collective;
        a.collectiveGroup = int(op.attrInt("group_size", 1));
        a.reducesInBackward = op.attrString("pass", "forward") == "backward";
        a.sequenceParallel = op.attrInt("sequence_parallel", 0) != 0;
    }
    if (op.type == "AllToAll") {  // the routed copies out and back, forward and backward
        a.kind = OpKind::Collective;
        a.collectiveGroup = int(op.attrInt("group_size", 1));
        a.allToAll = true;
        a.collectiveCopies = double(std::max<int64_t>(1, op.attrInt("copies", 1)));
    }
    for (int in : op.inputs) a.backward |= in >= 0 && grad[in];
    a.backward &= a.hasWork();
    if (a.kind == OpKind::Gemm || a.kind == OpKind::Conv) {
        int needing = 0;
        for (size_t k = 0; k < std::min<size_t>(2, op.inputs.size()); ++k)
            needing += op.inputs[k] >= 0 && grad[op.inputs[k]];
        a.backwardKernels = std::max(1, needing);
    }
    if ((a.kind == OpKind::Gemm || a.kind == OpKind::Conv) && !op.outputs.empty()) {
        // Every output element is one dot product of the reduction length: FLOPs = 2 x outputs x K.
        const double outputs = numel[op.outputs[0]][1];
        if (outputs > 0) a.gemmReduction = std::max(1.0, c2.forwardFlops / (2 * outputs));
        const std::vector<int64_t> y = evalShape(g.values[op.outputs[0]].shape, 1, seq);
        if (a.kind == OpKind::Conv && y.size() >= 2) {
            const int64_t groups = std::max<int64_t>(1, op.attrInt("group", 1));
            a.gemmColumns = double(y[1]) / double(groups);
            a.groupedConv = groups > 1;
            const auto kernel = op.attrInts("kernel_shape");
            const auto strides = op.attrInts("strides", std::vector<int64_t>(kernel.size(), 1));
            const auto dilations = op.attrInts("dilations", std::vector<int64_t>(kernel.size(), 1));
            auto all = [](const std::vector<int64_t>& v, int64_t x) {
                return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
            };
            a.winogradEligible = op.type == "Conv" && groups == 1 && kernel.size() == 2 && all(kernel, 3) &&
                                 all(strides, 1) && all(dilations, 1);
        } else if (!y.empty())
            a.gemmColumns = double(y.back());
    }
    if (a.kind == OpKind::Recurrent && op.hasAttr("hidden_size")) {
        // Each time step multiplies the hidden state by the recurrent weights: a GEMM of
        // reduction H and 4 (LSTM) or 3 (GRU) x H gate columns.
        const double h = double(op.attrInt("hidden_size", 0));
        a.gemmReduction = h;
        a.gemmColumns = (op.type == "LSTM" ? 4 : op.type == "GRU" ? 3 : 1) * h;
        a.bidirectional = op.attrString("direction", "forward") == "bidirectional";
    }
    if (a.kind == OpKind::Attention) {
        const std::string backend = op.attrString("backend", "math");
        a.attentionBackend = backend == "flash"       ? AttentionBackend::Flash
                             : backend == "efficient" ? AttentionBackend::Efficient
                                                      : AttentionBackend::Math;
        // A sliding window that sdpa gets as a mask runs the efficient kernel (ops/transformer.cpp).
        const int64_t window = op.attrInt("window", 0);
        if (window > 0 && window < seq && op.attrInt("window_as_mask", 0) != 0)
            a.attentionBackend = AttentionBackend::Efficient;
    }
    if (a.kind == OpKind::Recurrent && !op.inputs.empty() && op.inputs[0] >= 0) {
        const std::vector<int64_t> x = evalShape(g.values[op.inputs[0]].shape, 1, seq);
        const size_t axis = op.attrInt("layout", 0) == 0 ? 0 : 1;
        a.steps = x.size() > axis ? double(x[axis]) : 1;
    }
    a.needsChannelsFirst = op.type == "InstanceNormalization" && op.attrInt("keeps_layout", 0) == 0;
    if ((op.type == "BatchNormalization" || a.needsChannelsFirst) && !op.inputs.empty() && op.inputs[0] >= 0) {
        const std::vector<int64_t> x = evalShape(g.values[op.inputs[0]].shape, 1, seq);
        // Rank 2 (BatchNorm1d on features) runs PyTorch's channels-last kernels, which split the batch.
        const double channels = x.size() >= 3 ? double(x[1]) : 0;
        (op.type == "BatchNormalization" ? a.normPlanes : a.normPlanesPerSample) = channels;
    }
    a.gradientPassThrough = op.type == "Add";
    if (a.gradientPassThrough && !op.outputs.empty())
        for (int in : op.inputs)
            a.reductionKernels += in >= 0 && grad[in] && numel[in][1] < numel[op.outputs[0]][1];
    for (int out : op.outputs)
        if (out >= 0) a.accumulationKernels += std::max(0, gradConsumers[out] - 1);
}

}  // namespace ts::predictors
