// A trace's precision: the one it was recorded in, the names --precision takes for a trace, and
// autocast's rule for an ATen operator (its lists are the model analysis' own, autocastRuleOf).
#include <algorithm>
#include <array>
#include <map>
#include <sstream>

#include "trace_change_internal.h"
#include "trainscope/predictors/iteration/model_analysis.h"

namespace ts::predictors {
namespace {

bool startsWith(const std::string& s, const std::string& p) {
    return s.compare(0, p.size(), p) == 0;
}

bool endsWith(const std::string& s, const std::string& p) {
    return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

std::string percent(double part, double whole) {
    std::ostringstream os;
    os.precision(0);
    os << std::fixed << (whole > 0 ? 100 * part / whole : 0) << "%";
    return os.str();
}

}  // namespace

AutocastRule autocastRuleOfAtenOp(const std::string& atenName) {
    if (!startsWith(atenName, "aten::")) return AutocastRule::Follow;
    std::string n = atenName.substr(6);
    while (!n.empty() && n.front() == '_') n.erase(0, 1);
    while (!n.empty() && n.back() == '_') n.pop_back();  // in-place forms
    for (const char* suffix : {"_backward_data", "_backward_input", "_backward_weight", "_backward", "_forward"})
        if (endsWith(n, suffix)) {
            n.erase(n.size() - std::string(suffix).size());
            break;
        }
    for (const char* prefix : {"native_", "cudnn_", "miopen_", "mkldnn_", "safe_"})
        if (startsWith(n, prefix)) n.erase(0, std::string(prefix).size());
    if (n.find("attention") != std::string::npos) return autocastRuleOf("MatMul");  // two batched GEMMs
    // ATen's names for the graph's operator types that autocast's lists name.
    static const std::map<std::string, std::string> onnxType = {
        {"linear", "Gemm"},
        {"addmm", "Gemm"},
        {"addmv", "Gemm"},
        {"addbmm", "Gemm"},
        {"baddbmm", "Gemm"},
        {"addr", "Gemm"},
        {"mm", "MatMul"},
        {"bmm", "MatMul"},
        {"matmul", "MatMul"},
        {"mv", "MatMul"},
        {"dot", "MatMul"},
        {"vdot", "MatMul"},
        {"chain_matmul", "MatMul"},
        {"linalg_multi_dot", "MatMul"},
        {"conv1d", "Conv"},
        {"conv2d", "Conv"},
        {"conv3d", "Conv"},
        {"convolution", "Conv"},
        {"conv_tbc", "Conv"},
        {"conv_transpose1d", "ConvTranspose"},
        {"conv_transpose2d", "ConvTranspose"},
        {"conv_transpose3d", "ConvTranspose"},
        {"convolution_transpose", "ConvTranspose"},
        {"lstm", "LSTM"},
        {"lstm_cell", "LSTM"},
        {"gru", "GRU"},
        {"gru_cell", "GRU"},
        {"rnn", "RNN"},
        {"rnn_tanh", "RNN"},
        {"rnn_relu", "RNN"},
        {"einsum", "Einsum"},
        {"softmax", "Softmax"},
        {"log_softmax", "LogSoftmax"},
        {"layer_norm", "LayerNormalization"},
        {"group_norm", "GroupNormalization"},
        {"pow", "Pow"},
        {"exp", "Exp"},
        {"log", "Log"},
        {"sum", "ReduceSum"},
        {"norm", "ReduceL2"},
        {"linalg_vector_norm", "ReduceL2"},
        {"logsumexp", "ReduceLogSumExp"},
        {"cumsum", "CumSum"},
        {"cross_entropy_loss", "SoftmaxCrossEntropyLoss"},
        {"nll_loss", "NegativeLogLikelihoodLoss"},
        {"nll_loss_nd", "NegativeLogLikelihoodLoss"},
        {"nll_loss2d", "NegativeLogLikelihoodLoss"},
        {"reciprocal", "Reciprocal"},
        {"softplus", "Softplus"},
    };
    auto it = onnxType.find(n);
    return it == onnxType.end() ? AutocastRule::Follow : autocastRuleOf(it->second);
}

TracePrecision recordedTracePrecision(const KinetoTrace& t) {
    TracePrecision p;
    // The arithmetic of the GEMM-class kernels, by time.
    std::array<double, 5> byMath{};  // ComputePrecision
    double total = 0;
    for (const TraceKernel& k : t.kernels)
        if (k.device == t.gpuDevice)
            if (auto m = kernelMathPrecision(t.str(k.name), k.kind))
                byMath[size_t(*m)] += k.durationUs, total += k.durationUs;
    // Without GPU kernels (a CPU trace), the input types of autocast's lower-precision operators.
    if (total <= 0)
        for (const TraceOperator& op : t.operators) {
            if (op.inputTypes < 0 || autocastRuleOfAtenOp(t.str(op.name)) != AutocastRule::Lower) continue;
            const std::optional<OperatorShapes> s = operatorShapesOf(t, op);
            if (!s || s->types.empty()) continue;
            const std::string& type = s->type(t.str(op.name) == "aten::addmm" ? 1 : 0);  // addmm: bias first
            const bool bf16 = type.find("BFloat16") != std::string::npos || type.find("bfloat16") != std::string::npos;
            if (is16BitFloatType(type))
                byMath[size_t(bf16 ? ComputePrecision::Bf16 : ComputePrecision::Fp16)] += 1;
            else if (isFloat32Type(type))
                byMath[size_t(ComputePrecision::Fp32)] += 1;
            total += 1;
        }
    const double fp16 = byMath[size_t(ComputePrecision::Fp16)], bf16 = byMath[size_t(ComputePrecision::Bf16)];
    const double tf32 = byMath[size_t(ComputePrecision::Tf32)], fp32 = byMath[size_t(ComputePrecision::Fp32)];
    // Autocast keeps the parameters in fp32; a model cast to 16 bits has 16-bit parameters.
    int halfParameters = 0, parameters = 0;
    for (const TraceOperator& op : t.operators) {
        if (op.inputTypes < 0 || !isAccumulateGrad(t.str(op.name))) continue;
        const std::optional<OperatorShapes> s = operatorShapesOf(t, op);
        if (!s || s->types.empty()) continue;
        ++parameters;
        halfParameters += is16BitFloatType(s->types[0]) ? 1 : 0;
    }
    std::ostringstream how;
    if (total <= 0) {
        p.how = "fp32: the trace has no GEMM, convolution or attention work to show another precision";
        return p;
    }
    const bool sixteen = fp16 + bf16 > 0.5 * total;
    if (sixteen) {
        p.precision = bf16 > fp16 ? TrainingPrecision::AmpBf16 : TrainingPrecision::AmpFp16;
        p.halfWeights = parameters > 0 && 2 * halfParameters > parameters;
        how << trainingPrecisionName(p.precision) << ": " << percent(fp16 + bf16, total)
            << " of the GEMM, convolution and attention work in " << (bf16 > fp16 ? "BF16" : "FP16")
            << (p.halfWeights    ? ", but the parameters are 16-bit themselves (not autocast)"
                : parameters > 0 ? ", parameters in fp32 (autocast)"
                                 : "");
    } else {
        p.precision = tf32 > fp32 ? TrainingPrecision::Tf32 : TrainingPrecision::Fp32;
        how << trainingPrecisionName(p.precision) << ": " << percent(fp32 + tf32, total)
            << " of the GEMM, convolution and attention work in FP32 or TF32";
    }
    p.how = how.str();
    return p;
}

std::optional<TraceChange> parseTracePrecision(const std::string& name) {
    if (name.empty() || name == "as-recorded") return TraceChange{};
    const std::optional<TrainingPrecision> p = parseTrainingPrecision(name);
    if (!p) return std::nullopt;
    TraceChange c;
    switch (*p) {
        case TrainingPrecision::Fp32:
            c.math = Fp32Math::PyTorchDefault, c.autocast = TraceAutocast::Off;
            return c;
        case TrainingPrecision::Tf32:
            c.math = Fp32Math::Tf32, c.autocast = TraceAutocast::Off;
            return c;
        case TrainingPrecision::Fp32Strict:
            c.math = Fp32Math::Strict, c.autocast = TraceAutocast::Off;
            return c;
        case TrainingPrecision::AmpFp16:
            c.autocast = TraceAutocast::Fp16;
            return c;
        case TrainingPrecision::AmpBf16:
            c.autocast = TraceAutocast::Bf16;
            return c;
        case TrainingPrecision::Fp8:
        case TrainingPrecision::Bf16Params:  // a trace's model cannot be re-run with 16-bit parameters
        case TrainingPrecision::Fp16Params:
            break;
    }
    return std::nullopt;
}

TrainingPrecision changedPrecision(const TraceChange& c, TrainingPrecision recorded) {
    const bool amp = recorded == TrainingPrecision::AmpFp16 || recorded == TrainingPrecision::AmpBf16;
    switch (c.autocast) {
        case TraceAutocast::Fp16:
            return TrainingPrecision::AmpFp16;
        case TraceAutocast::Bf16:
            return TrainingPrecision::AmpBf16;
        case TraceAutocast::Off:
        case TraceAutocast::AsRecorded:
            if (c.autocast == TraceAutocast::AsRecorded && amp) return recorded;
            switch (c.math) {
                case Fp32Math::AsRecorded:
                    return amp ? TrainingPrecision::Fp32 : recorded;
                case Fp32Math::PyTorchDefault:
                    return TrainingPrecision::Fp32;
                case Fp32Math::Tf32:
                    return TrainingPrecision::Tf32;
                case Fp32Math::Strict:
                    return TrainingPrecision::Fp32Strict;
            }
    }
    return recorded;
}

}  // namespace ts::predictors
