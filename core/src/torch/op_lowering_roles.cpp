// What the consumers of a value say about its contents (see op_lowering_roles.h).
#include "op_lowering_roles.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace ts::torchexec {
namespace {

struct Use {
    const Operation* op;
    size_t slot;
};

std::vector<Use> usesOf(const Graph& g, int value) {
    std::vector<Use> uses;
    for (const Operation& op : g.ops)
        for (size_t k = 0; k < op.inputs.size(); ++k)
            if (op.inputs[k] == value) uses.push_back({&op, k});
    return uses;
}

// Operations through which a value reaches its real consumer with its contents unchanged.
bool passesThrough(const Operation& op, size_t slot) {
    static const std::set<std::string> anySlot{"Identity",  "AllReduce", "AllToAll", "Cast",
                                               "Transpose", "Flatten",   "Concat"};
    static const std::set<std::string> dataSlot{"Reshape", "Unsqueeze", "Squeeze", "Expand",  "Tile",    "Slice",
                                                "Split",   "CastLike",  "Gather",  "Dropout", "Identity"};
    return anySlot.count(op.type) != 0 || (slot == 0 && dataSlot.count(op.type) != 0);
}

constexpr int kMaxTrace = 8;

int64_t dimOf(const Graph& g, int value, int64_t axis, int64_t n, int64_t s) {
    if (value < 0) return 0;
    std::vector<int64_t> shape = evalShape(g.values[static_cast<size_t>(value)].shape, n, s);
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (axis < 0) axis += rank;
    return axis >= 0 && axis < rank ? shape[static_cast<size_t>(axis)] : 0;
}

std::optional<double> knownNumber(const Value& v) {
    if (v.floatData && v.floatData->size() == 1) return (*v.floatData)[0];
    if (v.intData && v.intData->size() == 1 && (*v.intData)[0].isConstant())
        return static_cast<double>((*v.intData)[0].constant());
    return std::nullopt;
}

}  // namespace

namespace {

std::optional<int64_t> boundFrom(const Graph& g, int value, int64_t n, int64_t s, int depth) {
    std::optional<int64_t> bound;
    auto tighten = [&](int64_t b) {
        if (b > 0) bound = bound ? std::min(*bound, b) : b;
    };
    if (depth > kMaxTrace) return bound;
    for (const Use& u : usesOf(g, value)) {
        const Operation& op = *u.op;
        const std::string& t = op.type;
        if (u.slot == 1 && (t == "Gather" || t == "GatherElements" || t == "ScatterElements" || t == "Scatter")) {
            tighten(dimOf(g, op.inputs[0], op.attrInt("axis", 0), n, s));
        } else if (u.slot == 1 && (t == "GatherND" || t == "ScatterND")) {
            const int64_t rank = static_cast<int64_t>(g.values[static_cast<size_t>(op.inputs[0])].shape.size());
            for (int64_t d = op.attrInt("batch_dims", 0); d < rank; ++d) tighten(dimOf(g, op.inputs[0], d, n, s));
        } else if (u.slot == 1 && (t == "SoftmaxCrossEntropyLoss" || t == "NegativeLogLikelihoodLoss")) {
            tighten(dimOf(g, op.inputs[0], 1, n, s));
        } else if (u.slot == 0 && t == "OneHot" && op.inputs.size() > 1 && op.inputs[1] >= 0) {
            if (auto depthValue = knownNumber(g.values[static_cast<size_t>(op.inputs[1])]))
                tighten(static_cast<int64_t>(*depthValue));
        } else if (passesThrough(op, u.slot)) {
            for (int out : op.outputs)
                if (out >= 0)
                    if (auto b = boundFrom(g, out, n, s, depth + 1)) tighten(*b);
        }
    }
    return bound;
}

}  // namespace

std::optional<int64_t> indexBound(const Graph& g, int value, int64_t n, int64_t s) {
    return boundFrom(g, value, n, s, 0);
}

// Sequence lengths (of a recurrent layer or ReverseSequence) cover the whole sequence.
std::optional<int64_t> sequenceLength(const Graph& g, int value, int64_t n, int64_t s) {
    for (const Use& u : usesOf(g, value)) {
        const Operation& op = *u.op;
        if (u.slot == 4 && (op.type == "LSTM" || op.type == "GRU" || op.type == "RNN"))
            return dimOf(g, op.inputs[0], op.attrInt("layout", 0) == 0 ? 0 : 1, n, s);
        if (u.slot == 1 && op.type == "ReverseSequence")
            return dimOf(g, op.inputs[0], op.attrInt("time_axis", 0), n, s);
    }
    return std::nullopt;
}

// Whether some consumer divides by the value or takes its logarithm: zeros would not do.
bool needsNonZero(const Graph& g, int value) {
    for (const Use& u : usesOf(g, value)) {
        const std::string& t = u.op->type;
        if ((u.slot == 1 && (t == "Div" || t == "Mod")) || t == "Log" || t == "Reciprocal" || t == "Sqrt" ||
            (u.slot == 0 && t == "Pow") || t == "Mul")
            return true;
    }
    return false;
}

Rule uniformFanIn(int64_t fanIn) {
    return {Fill::Uniform, 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fanIn, 1)))};
}

int64_t defaultFanIn(const std::vector<int64_t>& shape) {
    if (shape.size() < 2) return shape.empty() ? 1 : shape[0];
    int64_t f = shape[1];
    for (size_t i = 2; i < shape.size(); ++i) f *= shape[i];
    return f;
}

namespace {

std::optional<Rule> roleFrom(const Graph& g, int value, const std::vector<int64_t>& shape, int64_t n, int64_t s,
                             int depth) {
    if (depth > kMaxTrace) return std::nullopt;
    const size_t rank = shape.size();
    for (const Use& u : usesOf(g, value)) {
        const Operation& op = *u.op;
        const std::string& t = op.type;
        const size_t k = u.slot;
        if (t == "Conv" || t == "ConvTranspose") return k == 1 ? uniformFanIn(defaultFanIn(shape)) : Rule{Fill::Zeros};
        if (t == "Gemm" && rank == 2) {
            if (k == 1) return uniformFanIn(op.attrInt("transB", 0) ? shape[1] : shape[0]);
            if (k == 0) return uniformFanIn(op.attrInt("transA", 0) ? shape[0] : shape[1]);
            return Rule{Fill::Zeros};
        }
        if (t == "MatMul" && rank >= 1) {
            if (k == 1) return uniformFanIn(rank >= 2 ? shape[rank - 2] : shape[0]);
            return uniformFanIn(shape.back());
        }
        if ((t == "Gather" || t == "GatherElements" || t == "GatherND") && k == 0)
            return Rule{Fill::Normal, 1.0};  // nn.Embedding
        if (t == "BatchNormalization") return Rule{k == 1 || k == 4 ? Fill::Ones : Fill::Zeros};
        if (t == "RMSNormalization") return Rule{k == 1 && op.attrFloat("scale_offset", 0.0) == 0 ? Fill::Ones : Fill::Zeros};
        if (t == "LayerNormalization" || t == "InstanceNormalization" || t == "GroupNormalization")
            return Rule{k == 1 ? Fill::Ones : Fill::Zeros};
        if (t == "LSTM" || t == "GRU" || t == "RNN") {
            if (k < 1 || k > 3) return Rule{Fill::Zeros};
            const int64_t hidden = op.attrInt("hidden_size", dimOf(g, op.inputs[2], 2, n, s));
            return uniformFanIn(hidden);  // PyTorch draws weights and biases from +-1/sqrt(hidden)
        }
        if (t == "PRelu" && k == 1) return Rule{Fill::Value, 0.25};
        if (t == "Add" || t == "Sub" || t == "Sum") return Rule{Fill::Zeros};
        if (t == "Mul" || t == "Div") return Rule{Fill::Ones};
        if (passesThrough(op, k))
            for (int out : op.outputs)
                if (out >= 0)
                    if (auto r = roleFrom(g, out, evalShape(g.values[static_cast<size_t>(out)].shape, n, s), n, s,
                                          depth + 1))
                        return r;
    }
    return std::nullopt;
}

}  // namespace

std::optional<Rule> roleOf(const Graph& g, int value, const std::vector<int64_t>& shape, int64_t n, int64_t s) {
    return roleFrom(g, value, shape, n, s, 0);
}

bool nameSuggestsMask(const std::string& name) {
    std::string lower;
    for (char ch : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return lower.find("mask") != std::string::npos;
}

}  // namespace ts::torchexec
