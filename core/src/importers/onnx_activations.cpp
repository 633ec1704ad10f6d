// Activations that PyTorch runs as one operator but its ONNX exporters write as several nodes, read
// back as the one operator: autograd saves only the input of F.silu and F.gelu, and a GPU runs each
// as one elementwise kernel, where the decomposed nodes would each be charged a kernel and would save
// their own intermediates (a Sigmoid's output, an Erf's input, ...).
//
// - SiLU: both exporters write F.silu / nn.SiLU as Mul(x, Sigmoid(x)) (ONNX has no Swish before
//   opset 24).
// - GELU: the legacy exporter writes F.gelu below opset 20 (ONNX's Gelu) as its symbolic function
//   does: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), and approximate="tanh" as
//   Mul(0.5, Mul(x, Add(1, Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, Mul(x, Mul(x, x)))))))))
//
// Only those exact node sequences are read as one operator. The same functions written out in Python
// (`x * 0.5 * (1 + erf(x / sqrt 2))`, transformers' `gelu_new` with its Pow) order their nodes
// differently and keep them, as PyTorch runs them node by node. One cannot be told apart:
// `x * torch.sigmoid(x)` exports exactly as F.silu does and is read as SiLU, where autograd would keep
// its sigmoid too. Every intermediate must feed the pattern alone; otherwise the nodes stay as they are.
#include <cmath>

#include "importers/onnx_graph_builder.h"

namespace ts::onnximport {
namespace {

class PatternReader {
public:
    PatternReader(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& producers,
                  const std::unordered_map<std::string, const onnx::TensorProto*>& initializers)
        : g_(g), producers_(producers), initializers_(initializers) {
        for (int i = 0; i < g.node_size(); ++i)
            for (const std::string& in : g.node(i).input())
                if (!in.empty()) users_[in].push_back(i);
        for (const auto& out : g.output()) users_[out.name()].push_back(-1);
    }

    const onnx::NodeProto& node(int i) const { return g_.node(i); }

    // The node of `type` with two inputs (one for Sigmoid, Erf, Tanh) producing `tensor`, when that
    // tensor feeds one node only; its index is added to `nodes`.
    const onnx::NodeProto* feeding(const std::string& tensor, const char* type, std::vector<int>& nodes) const {
        auto it = producers_.find(tensor);
        if (it == producers_.end() || !feedsOne(tensor)) return nullptr;
        const onnx::NodeProto* n = single(it->second, type);
        if (n) nodes.push_back(it->second);
        return n;
    }

    // The one node of `type` that `tensor` feeds; its index is added to `nodes`.
    const onnx::NodeProto* onlyUser(const std::string& tensor, const char* type, std::vector<int>& nodes) const {
        if (!feedsOne(tensor) || users_.at(tensor).front() < 0) return nullptr;
        int i = users_.at(tensor).front();
        const onnx::NodeProto* n = single(i, type);
        if (n) nodes.push_back(i);
        return n;
    }

    // The value of a one-element floating constant (a Constant node or an initializer).
    std::optional<double> scalar(const std::string& tensor) const {
        const onnx::TensorProto* t = nullptr;
        if (auto it = initializers_.find(tensor); it != initializers_.end()) t = it->second;
        if (auto it = producers_.find(tensor); !t && it != producers_.end()) {
            const onnx::NodeProto& n = g_.node(it->second);
            if (n.op_type() != "Constant") return std::nullopt;
            for (const auto& a : n.attribute()) {
                if (a.name() == "value_float") return double(a.f());
                if (a.name() == "value") t = &a.t();
            }
        }
        if (!t) return std::nullopt;
        try {
            TensorInfo info = decodeTensor(*t, "constant '" + tensor + "'");
            if (info.elements == 1 && info.floats && info.floats->size() == 1) return info.floats->front();
        } catch (const OnnxProblem&) {  // a malformed constant is reported where it is imported
        }
        return std::nullopt;
    }

    // For a binary node whose one input is `x`: the other input.
    static const std::string* other(const onnx::NodeProto& n, const std::string& x) {
        if (n.input(0) == x) return &n.input(1);
        if (n.input(1) == x) return &n.input(0);
        return nullptr;
    }

    // For a binary node whose one input is the constant `c`: the other input.
    const std::string* otherThanScalar(const onnx::NodeProto& n, double c) const {
        for (int k = 0; k < 2; ++k) {
            std::optional<double> v = scalar(n.input(k));
            if (v && std::abs(*v - c) <= 1e-5 * std::abs(c)) return &n.input(1 - k);
        }
        return nullptr;
    }

private:
    bool feedsOne(const std::string& tensor) const {
        auto it = users_.find(tensor);
        return it != users_.end() && it->second.size() == 1;
    }

    const onnx::NodeProto* single(int i, const char* type) const {
        const onnx::NodeProto& n = g_.node(i);
        const int arity =
            std::string(type) == "Mul" || std::string(type) == "Add" || std::string(type) == "Div" ? 2 : 1;
        return n.op_type() == type && n.input_size() == arity && n.output_size() == 1 ? &n : nullptr;
    }

    const onnx::GraphProto& g_;
    const std::unordered_map<std::string, int>& producers_;
    const std::unordered_map<std::string, const onnx::TensorProto*>& initializers_;
    std::unordered_map<std::string, std::vector<int>> users_;  // -1: a graph output
};

void take(ActivationFusions& out, int last, FusedActivation f, const std::vector<int>& absorbed) {
    out.at[last] = std::move(f);
    out.absorbed.insert(absorbed.begin(), absorbed.end());
}

// Mul(x, Sigmoid(x)), the Sigmoid feeding the Mul alone.
bool matchSilu(const PatternReader& r, int mul, ActivationFusions& out) {
    const onnx::NodeProto& m = r.node(mul);
    if (m.op_type() != "Mul" || m.input_size() != 2) return false;
    for (int k = 0; k < 2; ++k) {
        std::vector<int> nodes;
        const onnx::NodeProto* s = r.feeding(m.input(k), "Sigmoid", nodes);
        if (!s || s->input(0) != m.input(1 - k)) continue;
        take(out, mul, {"Silu", s->input(0), ""}, nodes);
        return true;
    }
    return false;
}

// The legacy exporter's F.gelu (approximate "none"): Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5),
// matched from its last Mul.
bool matchErfGelu(const PatternReader& r, int last, ActivationFusions& out) {
    const onnx::NodeProto& m2 = r.node(last);
    if (m2.op_type() != "Mul" || m2.input_size() != 2) return false;
    const std::string* m1Out = r.otherThanScalar(m2, 0.5);
    std::vector<int> nodes;
    const onnx::NodeProto* m1 = m1Out ? r.feeding(*m1Out, "Mul", nodes) : nullptr;
    if (!m1) return false;
    for (int k = 0; k < 2; ++k) {
        const std::string& x = m1->input(k);
        std::vector<int> more = nodes;
        const onnx::NodeProto* add = r.feeding(m1->input(1 - k), "Add", more);
        const std::string* erfOut = add ? r.otherThanScalar(*add, 1.0) : nullptr;
        const onnx::NodeProto* erf = erfOut ? r.feeding(*erfOut, "Erf", more) : nullptr;
        const onnx::NodeProto* div = erf ? r.feeding(erf->input(0), "Div", more) : nullptr;
        if (!div || div->input(0) != x || r.otherThanScalar(*div, std::sqrt(2.0)) != &div->input(0)) continue;
        take(out, last, {"Gelu", x, "none"}, more);
        return true;
    }
    return false;
}

// The legacy exporter's F.gelu(approximate="tanh"):
// Mul(0.5, Mul(x, Add(1, Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, Mul(x, Mul(x, x))))))))), from its Tanh.
bool matchTanhGelu(const PatternReader& r, int tanhIndex, ActivationFusions& out) {
    const onnx::NodeProto& t = r.node(tanhIndex);
    if (t.op_type() != "Tanh" || t.input_size() != 1 || t.output_size() != 1) return false;
    std::vector<int> nodes{tanhIndex};
    const onnx::NodeProto* inner = r.feeding(t.input(0), "Mul", nodes);
    const std::string* sumOut = inner ? r.otherThanScalar(*inner, std::sqrt(2.0 / M_PI)) : nullptr;
    const onnx::NodeProto* sum = sumOut ? r.feeding(*sumOut, "Add", nodes) : nullptr;
    if (!sum) return false;
    for (int k = 0; k < 2; ++k) {
        const std::string& x = sum->input(k);
        std::vector<int> more = nodes;
        const onnx::NodeProto* scaled = r.feeding(sum->input(1 - k), "Mul", more);
        const std::string* cubeOut = scaled ? r.otherThanScalar(*scaled, 0.044715) : nullptr;
        const onnx::NodeProto* cube = cubeOut ? r.feeding(*cubeOut, "Mul", more) : nullptr;
        const std::string* squareOut = cube ? PatternReader::other(*cube, x) : nullptr;
        const onnx::NodeProto* square = squareOut ? r.feeding(*squareOut, "Mul", more) : nullptr;
        if (!square || square->input(0) != x || square->input(1) != x) continue;
        const onnx::NodeProto* add = r.onlyUser(t.output(0), "Add", more);
        if (!add || !r.otherThanScalar(*add, 1.0)) return false;
        const onnx::NodeProto* m1 = r.onlyUser(add->output(0), "Mul", more);
        if (!m1 || !PatternReader::other(*m1, x)) return false;
        std::vector<int> last;
        const onnx::NodeProto* m2 = r.onlyUser(m1->output(0), "Mul", last);
        if (!m2 || !r.otherThanScalar(*m2, 0.5)) return false;
        take(out, last.front(), {"Gelu", x, "tanh"}, more);
        return true;
    }
    return false;
}

}  // namespace

ActivationFusions findDecomposedActivations(
    const onnx::GraphProto& g, const std::unordered_map<std::string, int>& producers,
    const std::unordered_map<std::string, const onnx::TensorProto*>& initializers) {
    PatternReader reader(g, producers, initializers);
    ActivationFusions found;
    for (int i = 0; i < g.node_size(); ++i) {
        if (found.absorbed.count(i) || found.at.count(i)) continue;
        ActivationFusions candidate;
        if (!(matchErfGelu(reader, i, candidate) || matchTanhGelu(reader, i, candidate) ||
              matchSilu(reader, i, candidate)))
            continue;
        // Patterns never overlap one already taken (each intermediate feeds its pattern alone).
        bool overlaps = false;
        for (int n : candidate.absorbed) overlaps |= found.absorbed.count(n) || found.at.count(n);
        for (const auto& [n, f] : candidate.at) overlaps |= found.absorbed.count(n) != 0;
        if (overlaps) continue;
        found.at.insert(candidate.at.begin(), candidate.at.end());
        found.absorbed.insert(candidate.absorbed.begin(), candidate.absorbed.end());
    }
    return found;
}

}  // namespace ts::onnximport
