// Operators that PyTorch runs as one but its ONNX exporters write as several nodes, read back as the
// one operator: autograd saves only what F.silu, F.gelu and F.scaled_dot_product_attention save, and a
// GPU runs each as one kernel (or one attention kernel), where the decomposed nodes would each be
// charged a kernel and would save their own intermediates (a Sigmoid's output, an Erf's input, the
// [S, S] scores and probabilities of every attention head).
//
// - SiLU: both exporters write F.silu / nn.SiLU as Mul(x, Sigmoid(x)) (ONNX has no Swish before
//   opset 24).
// - GELU: the legacy exporter writes F.gelu below opset 20 (ONNX's Gelu) as its symbolic function
//   does: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), and approximate="tanh" as
//   Mul(0.5, Mul(x, Add(1, Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, Mul(x, Mul(x, x)))))))))
// - sdpa: both exporters write F.scaled_dot_product_attention as the math it stands for, each side
//   scaled by the scale's square root (matchAttention below).
//
// Only those exact node sequences are read as one operator. The same functions written out in Python
// (`x * 0.5 * (1 + erf(x / sqrt 2))`, transformers' `gelu_new` with its Pow) order their nodes
// differently and keep them, as PyTorch runs them node by node. One cannot be told apart:
// `x * torch.sigmoid(x)` exports exactly as F.silu does and is read as SiLU, where autograd would keep
// its sigmoid too. Every intermediate must feed the pattern alone; otherwise the nodes stay as they are.
#include <algorithm>
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

    // The node of `type` with its usual inputs (two for Mul, Add, Div, MatMul, Reshape; three for Where;
    // one otherwise) producing `tensor`, when that tensor feeds one node only; its index is added to `nodes`.
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
        const std::string t = type;
        const int arity = t == "Where"                                                                ? 3
                          : t == "Mul" || t == "Add" || t == "Div" || t == "MatMul" || t == "Reshape" ? 2
                                                                                                      : 1;
        return n.op_type() == type && n.input_size() == arity && n.output_size() == 1 ? &n : nullptr;
    }

public:
    // How many nodes (and graph outputs) read `tensor`.
    size_t users(const std::string& tensor) const {
        auto it = users_.find(tensor);
        return it == users_.end() ? 0 : it->second.size();
    }
    // The index of the node producing `tensor`, -1 for none.
    int producer(const std::string& tensor) const {
        auto it = producers_.find(tensor);
        return it == producers_.end() ? -1 : it->second;
    }
    static std::vector<int64_t> ints(const onnx::NodeProto& n, const std::string& name) {
        for (const auto& a : n.attribute())
            if (a.name() == name) return {a.ints().begin(), a.ints().end()};
        return {};
    }
    static std::optional<int64_t> intAttr(const onnx::NodeProto& n, const std::string& name) {
        for (const auto& a : n.attribute())
            if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
        return std::nullopt;
    }

private:
    const onnx::GraphProto& g_;
    const std::unordered_map<std::string, int>& producers_;
    const std::unordered_map<std::string, const onnx::TensorProto*>& initializers_;
    std::unordered_map<std::string, std::vector<int>> users_;  // -1: a graph output
};

void take(Fusions& out, int last, FusedOperator f, const std::vector<int>& absorbed) {
    f.nodes = absorbed;
    std::sort(f.nodes.begin(), f.nodes.end());
    out.absorbed.insert(absorbed.begin(), absorbed.end());
    out.at[last] = std::move(f);
}

// Mul(x, Sigmoid(x)), the Sigmoid feeding the Mul alone.
bool matchSilu(const PatternReader& r, int mul, Fusions& out) {
    const onnx::NodeProto& m = r.node(mul);
    if (m.op_type() != "Mul" || m.input_size() != 2) return false;
    for (int k = 0; k < 2; ++k) {
        std::vector<int> nodes;
        const onnx::NodeProto* s = r.feeding(m.input(k), "Sigmoid", nodes);
        if (!s || s->input(0) != m.input(1 - k)) continue;
        take(out, mul, {"Silu", {s->input(0)}, {}, {}}, nodes);
        return true;
    }
    return false;
}

// The legacy exporter's F.gelu (approximate "none"): Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5),
// matched from its last Mul.
bool matchErfGelu(const PatternReader& r, int last, Fusions& out) {
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
        take(out, last, {"Gelu", {x}, {{"approximate", std::string("none")}}, {}}, more);
        return true;
    }
    return false;
}

// The legacy exporter's F.gelu(approximate="tanh"):
// Mul(0.5, Mul(x, Add(1, Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, Mul(x, Mul(x, x))))))))), from its Tanh.
bool matchTanhGelu(const PatternReader& r, int tanhIndex, Fusions& out) {
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
        take(out, last.front(), {"Gelu", {x}, {{"approximate", std::string("tanh")}}, {}}, more);
        return true;
    }
    return false;
}

// The key of an attention before the exporters' transpose of its last two axes: Transpose(k, [0, 1, 3, 2])
// (legacy), or Reshape(Transpose(Reshape(k, [-1, S, D]), [0, 2, 1]), [N, H, D, S]) (torch.export-based).
// With every size fixed, the torch.export-based exporter's optimizer folds the key's own 4-D form away
// where it was a view: the inner Reshape then reads a grouped-query key as repeat_kv expanded it,
// [N, Hkv, rep, S, D], or there is none and the Transpose reads nn.MultiheadAttention's [N * H, S, D].
// That tensor is returned; the importer views it as [N, H, S, D] (attentionShapesFit).
const std::string* untransposedKey(const PatternReader& r, const std::string& kt, std::vector<int>& nodes) {
    if (const onnx::NodeProto* t = r.feeding(kt, "Transpose", nodes)) {
        if (PatternReader::ints(*t, "perm") == std::vector<int64_t>{0, 1, 3, 2}) return &t->input(0);
        return nullptr;
    }
    const onnx::NodeProto* outer = r.feeding(kt, "Reshape", nodes);
    const onnx::NodeProto* t = outer ? r.feeding(outer->input(0), "Transpose", nodes) : nullptr;
    if (!t || PatternReader::ints(*t, "perm") != std::vector<int64_t>{0, 2, 1}) return nullptr;
    const onnx::NodeProto* inner = r.feeding(t->input(0), "Reshape", nodes);
    return inner ? &inner->input(0) : &t->input(0);
}

// Both sides scaled by one factor: the same tensor, two Sqrt nodes of one tensor (the legacy exporter's
// sqrt of a scale it computes from the head size), or equal constants.
bool sameScale(const PatternReader& r, const std::string& a, const std::string& b, std::vector<int>& nodes) {
    if (a == b) return true;
    std::vector<int> roots;
    const onnx::NodeProto* sa = r.feeding(a, "Sqrt", roots);
    const onnx::NodeProto* sb = r.feeding(b, "Sqrt", roots);
    if (sa && sb && sa->input(0) == sb->input(0)) {
        nodes.insert(nodes.end(), roots.begin(), roots.end());
        return true;
    }
    std::optional<double> va = r.scalar(a), vb = r.scalar(b);
    return va && vb && *va == *vb;
}

// F.scaled_dot_product_attention (and nn.MultiheadAttention, which calls it) as both exporters write it:
// MatMul(P, v), P the Softmax (over the last axis) of MatMul(Mul(q, c), Mul(k^T, c)) [+ mask], optionally
// through the NaN guard of a boolean mask (Where(IsNaN(P), 0, P)) and a Dropout. Matched from the last
// MatMul. Every intermediate must feed the pattern alone; q, k, v and the mask are the model's tensors.
bool matchAttention(const PatternReader& r, int last, Fusions& out) {
    const onnx::NodeProto& pv = r.node(last);
    if (pv.op_type() != "MatMul" || pv.input_size() != 2 || pv.output_size() != 1) return false;
    std::vector<int> nodes;
    std::string p = pv.input(0);
    double dropout = 0;
    // A Dropout of a constant ratio whose mask nothing reads.
    if (int d = r.producer(p); d >= 0 && r.node(d).op_type() == "Dropout") {
        const onnx::NodeProto& n = r.node(d);
        if (r.users(p) != 1 || n.input_size() < 2 || n.input_size() > 3 ||
            (n.output_size() > 1 && r.users(n.output(1)) != 0))
            return false;
        std::optional<double> ratio = r.scalar(n.input(1));
        if (!ratio || *ratio < 0 || *ratio >= 1) return false;
        dropout = *ratio;
        nodes.push_back(d);
        p = n.input(0);
    }
    // The boolean mask's NaN guard: Where(IsNaN(P), 0, P), P read by the two alone.
    std::string softmaxOut = p;
    if (int w = r.producer(p); w >= 0 && r.node(w).op_type() == "Where") {
        const onnx::NodeProto& where = r.node(w);
        if (where.input_size() != 3 || r.users(p) != 1 || !r.scalar(where.input(1)) || *r.scalar(where.input(1)) != 0)
            return false;
        softmaxOut = where.input(2);
        int isnan = r.producer(where.input(0));
        if (isnan < 0 || r.node(isnan).op_type() != "IsNaN" || r.node(isnan).input(0) != softmaxOut ||
            r.users(where.input(0)) != 1 || r.users(softmaxOut) != 2)
            return false;
        nodes.push_back(w);
        nodes.push_back(isnan);
    } else if (r.users(p) != 1) {
        return false;
    }
    int sm = r.producer(softmaxOut);
    if (sm < 0) return false;
    const onnx::NodeProto& softmax = r.node(sm);
    std::optional<int64_t> axis = PatternReader::intAttr(softmax, "axis");
    if (softmax.op_type() != "Softmax" || softmax.input_size() != 1 || !axis || (*axis != -1 && *axis != 3))
        return false;
    nodes.push_back(sm);
    // Scores, with an additive mask.
    const std::string* mask = nullptr;
    const onnx::NodeProto* scores = r.feeding(softmax.input(0), "MatMul", nodes);
    if (!scores) {
        const onnx::NodeProto* add = r.feeding(softmax.input(0), "Add", nodes);
        for (int k = 0; add && k < 2 && !scores; ++k)
            if ((scores = r.feeding(add->input(k), "MatMul", nodes))) mask = &add->input(1 - k);
        if (!scores) return false;
    }
    std::vector<int> more = nodes;
    const onnx::NodeProto* qs = r.feeding(scores->input(0), "Mul", more);
    const onnx::NodeProto* ks = r.feeding(scores->input(1), "Mul", more);
    if (!qs || !ks) return false;
    // Which input of each Mul is the tensor and which the scale: the key's side is a transpose.
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) {
            std::vector<int> trial = more;
            const std::string* k = untransposedKey(r, ks->input(b), trial);
            if (!k || !sameScale(r, qs->input(1 - a), ks->input(1 - b), trial)) continue;
            FusedOperator f{"ScaledDotProductAttention", {qs->input(a), *k, pv.input(1)}, {}, {}};
            if (mask) f.inputs.push_back(*mask);
            // PyTorch's flash kernel takes no mask; with one, sdpa runs the memory-efficient kernel.
            f.attrs["backend"] = std::string(mask ? "efficient" : "flash");
            if (dropout > 0) f.attrs["dropout"] = dropout;
            take(out, last, std::move(f), trial);
            return true;
        }
    return false;
}

}  // namespace

Fusions findFusedOperators(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& producers,
                           const std::unordered_map<std::string, const onnx::TensorProto*>& initializers) {
    PatternReader reader(g, producers, initializers);
    Fusions found;
    for (int i = 0; i < g.node_size(); ++i) {
        if (found.absorbed.count(i) || found.at.count(i)) continue;
        Fusions candidate;
        if (!(matchErfGelu(reader, i, candidate) || matchTanhGelu(reader, i, candidate) ||
              matchSilu(reader, i, candidate) || matchAttention(reader, i, candidate)))
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
