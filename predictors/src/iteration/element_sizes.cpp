// What each value's elements weigh under a training precision: autocast's rules (torch.amp's CUDA
// lists), the model in bf16 with its fp32 islands, and the size a kernel reads an input at.
#include "element_sizes.h"

#include <algorithm>
#include <set>

#include "trainscope/core/ops.h"

namespace ts::predictors {

AutocastRule autocastRuleOf(const std::string& t) {
    // torch.amp's CUDA lists: ops that run in lower precision, and ops that autocast to float32.
    static const std::set<std::string> lower = {
        "Conv", "ConvTranspose", "Gemm", "MatMul",           "Einsum",
        "LSTM", "GRU",           "RNN",  "MixtureOfExperts", "ScaledDotProductAttention"};
    static const std::set<std::string> fp32 = {"Softmax",
                                               "LogSoftmax",
                                               "LayerNormalization",
                                               "GroupNormalization",
                                               "Pow",
                                               "Exp",
                                               "Log",
                                               "ReduceSum",
                                               "ReduceL2",
                                               "ReduceLogSumExp",
                                               "CumSum",
                                               "SoftmaxCrossEntropyLoss",
                                               "NegativeLogLikelihoodLoss",
                                               "Reciprocal",
                                               "Softplus"};
    if (lower.count(t)) return AutocastRule::Lower;
    if (fp32.count(t)) return AutocastRule::Fp32;
    return AutocastRule::Follow;
}

namespace {

// CastLike(x, like) casts to like's dtype, under every precision: its output weighs what `like` does.
bool castLikeOfFloats(const Graph& g, const Operation& op) {
    return op.type == "CastLike" && op.inputs.size() >= 2 && op.inputs[1] >= 0 && !op.outputs.empty() &&
           op.outputs[0] >= 0 && isFloat32(g.values[size_t(op.inputs[1])]) &&
           isFloat32(g.values[size_t(op.outputs[0])]);
}

}  // namespace

std::vector<int> elementSizes(const Graph& g, TrainingPrecision p) {
    std::vector<int> es(g.values.size());
    for (size_t v = 0; v < g.values.size(); ++v) es[v] = dtypeSize(g.values[v].dtype);
    if (isModelIn16Bit(p)) {
        // The model itself in bf16 or fp16: parameters, the batch and what is computed from them, but for
        // a module's own fp32 island: from a cast whose "dtype_role" is "fp32" to one back to the
        // "model" dtype (transformers' RMSNorm), operations follow their widest input.
        for (size_t v = 0; v < g.values.size(); ++v)
            if (isFloat32(g.values[v])) es[v] = 2;
        for (const Operation& op : g.ops) {
            const std::string role = op.type == "Cast" ? op.attrString("dtype_role", "") : "";
            int follow = 2;
            for (int in : op.inputs)
                if (in >= 0 && isData(g.values[in]) && isFloat32(g.values[in])) follow = std::max(follow, es[in]);
            for (int out : op.outputs)
                if (out >= 0 && isFloat32(g.values[out])) es[out] = role == "fp32" ? 4 : role == "model" ? 2 : follow;
            if (castLikeOfFloats(g, op)) es[size_t(op.outputs[0])] = es[size_t(op.inputs[1])];
        }
        return es;
    }
    if (!isAutocast(p)) return es;
    for (const Operation& op : g.ops) {
        if (castLikeOfFloats(g, op)) {
            es[size_t(op.outputs[0])] = es[size_t(op.inputs[1])];
            continue;
        }
        const AutocastRule rule = autocastRuleOf(op.type);
        int follow = 0;
        for (int in : op.inputs)
            if (in >= 0 && isData(g.values[in]) && isFloating(g.values[in].dtype)) follow = std::max(follow, es[in]);
        for (int out : op.outputs) {
            if (!isFloat32(g.values[out]) || op.type == "Cast" || op.type == "CastLike") continue;
            if (rule == AutocastRule::Lower)
                es[out] = 2;
            else if (rule == AutocastRule::Fp32)
                es[out] = 4;
            else if (follow > 0)
                es[out] = follow;
        }
    }
    return es;
}

std::vector<int> storageRoots(const Graph& g, const std::vector<int>& es) {
    std::vector<int> root(g.values.size());
    for (size_t v = 0; v < root.size(); ++v) root[v] = int(v);
    for (const Operation& op : g.ops) {  // in graph order: a cast's input has its root already
        if ((op.type != "Cast" && op.type != "CastLike") || op.inputs.empty() || op.outputs.empty()) continue;
        const int in = op.inputs[0], out = op.outputs[0];
        if (in >= 0 && out >= 0 && es[size_t(in)] == es[size_t(out)] &&
            g.values[size_t(in)].dtype == g.values[size_t(out)].dtype)
            root[size_t(out)] = root[size_t(in)];
    }
    return root;
}

int readSize(const Graph& g, const Operation& op, const std::string& opClass, int v, TrainingPrecision p,
             const std::vector<int>& es) {
    if (!isAutocast(p) || !isFloat32(g.values[v])) return es[v];
    switch (autocastRuleOf(op.type)) {
        case AutocastRule::Lower:
            return p == TrainingPrecision::Fp8 && opClass == "linear" ? 1 : 2;
        case AutocastRule::Fp32:
            return 4;
        default:
            return es[v];
    }
}

}  // namespace ts::predictors
