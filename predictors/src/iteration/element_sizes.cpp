// What each value's elements weigh under a training precision: autocast's rules (torch.amp's CUDA
// lists), the model in bf16 with its fp32 islands, and the size a kernel reads an input at.
#include "element_sizes.h"

#include <algorithm>
#include <set>

#include "trainscope/core/ops.h"

namespace ts::predictors {

AutocastRule autocastRuleOf(const std::string& t) {
    // torch.amp's CUDA lists: ops that run in lower precision, and ops that autocast to float32.
    static const std::set<std::string> lower = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Einsum",
                                                "LSTM", "GRU",           "RNN",  "MixtureOfExperts"};
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

std::vector<int> elementSizes(const Graph& g, TrainingPrecision p) {
    std::vector<int> es(g.values.size());
    for (size_t v = 0; v < g.values.size(); ++v) es[v] = dtypeSize(g.values[v].dtype);
    if (p == TrainingPrecision::Bf16Params) {
        // The model itself in bf16: parameters, the batch and what is computed from them, but for
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
        }
        return es;
    }
    if (!isAutocast(p)) return es;
    for (const Operation& op : g.ops) {
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
