#include "ops/registry.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>

namespace ts {
namespace ops {
namespace {


std::vector<OpDef> allDefs() {
    std::vector<OpDef> defs;
    registerConvPoolOps(defs);
    registerMatMulOps(defs);
    registerNormalizationOps(defs);
    registerActivationOps(defs);
    registerElementwiseOps(defs);
    registerReductionOps(defs);
    registerRecurrentOps(defs);
    registerShapeOps(defs);
    registerIndexingOps(defs);
    registerMiscOps(defs);
    registerTransformerOps(defs);
    registerCollectiveOps(defs);
    return defs;
}

const std::unordered_map<std::string, OpDef>& table() {
    static const std::unordered_map<std::string, OpDef> t = [] {
        std::unordered_map<std::string, OpDef> m;
        for (auto& d : allDefs()) m.emplace(d.type, d);
        return m;
    }();
    return t;
}

}  // namespace

const std::unordered_map<std::string, OpDef>& opTable() { return table(); }

const OpDef* findOpDef(const std::string& type) {
    const auto& t = table();
    auto it = t.find(type);
    return it == t.end() ? nullptr : &it->second;
}

const Value& InferCtx::in(size_t i) const {
    if (!hasInput(i)) throw ShapeError(op().type + " is missing input " + std::to_string(i));
    return g.values[g.ops[opIndex].inputs[i]];
}

Value& InferCtx::out(size_t i) {
    if (i >= numOutputs()) throw ShapeError(op().type + " has no output " + std::to_string(i));
    return g.values[g.ops[opIndex].outputs[i]];
}

void InferCtx::setOutput(size_t i, DType dtype, Shape shape) {
    if (shape.size() > static_cast<size_t>(limits::kMaxRank))
        throw ShapeError("output rank " + std::to_string(shape.size()) + " exceeds the limit of " +
                         std::to_string(limits::kMaxRank));
    for (const Dim& d : shape) {
        // Evaluate at a moderate batch to catch absurd or negative sizes early.
        int64_t v = d.eval(1, 1);
        if (v < 0) throw ShapeError("negative dimension " + d.str() + " in output shape " + shapeStr(shape));
        if (v > limits::kMaxDimValue) throw ShapeError("absurd dimension " + d.str() + " in output shape");
    }
    Dim total = numel(shape);
    if (total.eval(1, 1) > limits::kMaxTensorElements)
        throw ShapeError("output of shape " + shapeStr(shape) + " has an absurd number of elements");
    Value& v = out(i);
    v.dtype = dtype;
    v.shape = std::move(shape);
    v.intData.reset();
    v.floatData.reset();
}

void InferCtx::expectInputs(size_t min, int max) const {
    size_t n = numInputs();
    if (n < min || (max >= 0 && n > static_cast<size_t>(max)))
        throw ShapeError(op().type + " expects " + std::to_string(min) +
                         (max < 0 ? " or more" : (max == static_cast<int>(min) ? "" : " to " + std::to_string(max))) +
                         " inputs, got " + std::to_string(n));
}

std::vector<int64_t> CostCtx::inShape(size_t i) const {
    return hasInput(i) ? evalShape(g.values[op().inputs[i]].shape, n, s) : std::vector<int64_t>{};
}
std::vector<int64_t> CostCtx::outShape(size_t i) const {
    return i < op().outputs.size() ? evalShape(g.values[op().outputs[i]].shape, n, s) : std::vector<int64_t>{};
}
double CostCtx::inNumel(size_t i) const {
    if (!hasInput(i)) return 0;
    return static_cast<double>(numel(g.values[op().inputs[i]].shape).eval(n, s));
}
double CostCtx::outNumel(size_t i) const {
    if (i >= op().outputs.size()) return 0;
    return static_cast<double>(numel(g.values[op().outputs[i]].shape).eval(n, s));
}
double CostCtx::inBytes(size_t i) const {
    return hasInput(i) ? inNumel(i) * dtypeSize(g.values[op().inputs[i]].dtype) : 0;
}
double CostCtx::outBytes(size_t i) const {
    return i < op().outputs.size() ? outNumel(i) * dtypeSize(g.values[op().outputs[i]].dtype) : 0;
}
bool CostCtx::inNeedsGrad(size_t i) const { return hasInput(i) && grad[op().inputs[i]]; }
bool CostCtx::anyInputNeedsGrad() const {
    for (size_t i = 0; i < op().inputs.size(); ++i)
        if (inNeedsGrad(i)) return true;
    return false;
}
bool CostCtx::inIsParameter(size_t i) const {
    return hasInput(i) && g.values[op().inputs[i]].kind == ValueKind::Parameter;
}
double CostCtx::allInputBytes() const {
    double b = 0;
    for (size_t i = 0; i < op().inputs.size(); ++i) b += inBytes(i);
    return b;
}
double CostCtx::allOutputBytes() const {
    double b = 0;
    for (size_t i = 0; i < op().outputs.size(); ++i) b += outBytes(i);
    return b;
}

Shape broadcastShapes(const Shape& a, const Shape& b) {
    size_t rank = std::max(a.size(), b.size());
    Shape r(rank);
    for (size_t i = 0; i < rank; ++i) {
        const Dim* da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
        const Dim* db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
        if (!da) r[i] = *db;
        else if (!db) r[i] = *da;
        else if (*da == *db) r[i] = *da;
        else if (*da == Dim(1)) r[i] = *db;
        else if (*db == Dim(1)) r[i] = *da;
        else throw ShapeError("shapes " + shapeStr(a) + " and " + shapeStr(b) + " do not broadcast");
    }
    return r;
}

// A scalar has no axis: callers index shape[axis], so rank 0 is refused here once for all.
int64_t normalizeAxis(int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank)
        throw ShapeError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

std::vector<Dim> knownInts(const InferCtx& c, size_t input, const char* what) {
    const Value& v = c.in(input);
    if (!v.intData)
        throw ShapeError(std::string(what) + " of " + c.op().type +
                         " is computed from data at run time (data-dependent shape)");
    return *v.intData;
}

std::vector<int64_t> knownConstInts(const InferCtx& c, size_t input, const char* what) {
    std::vector<int64_t> r;
    for (const Dim& d : knownInts(c, input, what)) {
        if (!d.isConstant()) throw ShapeError(std::string(what) + " of " + c.op().type + " depends on the batch size");
        r.push_back(d.constant());
    }
    return r;
}

std::optional<std::vector<int64_t>> constantShape(const Shape& s) {
    std::vector<int64_t> r;
    r.reserve(s.size());
    for (const Dim& d : s) {
        if (!d.isConstant()) return std::nullopt;
        r.push_back(d.constant());
    }
    return r;
}

int64_t trackableCount(const Shape& s) {
    Dim n = numel(s);
    if (!n.isConstant() || n.constant() > limits::kMaxKnownValueElements) return -1;
    return n.constant();
}

OpCost elementwiseCost(const CostCtx& c, double flopsPerElement, double backwardFlopsPerElement) {
    OpCost cost;
    double elems = 0;
    for (size_t i = 0; i < c.op().outputs.size(); ++i) elems = std::max(elems, c.outNumel(i));
    cost.forwardFlops = flopsPerElement * elems;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.anyInputNeedsGrad()) cost.backwardFlops = backwardFlopsPerElement * elems;
    return cost;
}

OpCost zeroCost(const CostCtx&) { return {}; }

}  // namespace ops

// ---- public API (ops.h) ----

double OpCost::savedBytes() const {
    double b = 0;
    for (const SavedTensor& s : saved)
        if (!s.onlyWhenNarrowed) b += s.bytes;
    return b;
}

void inferShapes(Graph& g, int opIndex) {
    const Operation& op = g.ops.at(opIndex);
    const ops::OpDef* def = ops::findOpDef(op.type);
    if (!def) throw ShapeError("unsupported operator " + op.type);
    ops::InferCtx ctx{g, opIndex};
    def->infer(ctx);
}

OpCost operationCost(const Graph& g, int opIndex, int64_t n, int64_t s, const std::vector<bool>& gradMask) {
    const Operation& op = g.ops.at(opIndex);
    const ops::OpDef* def = ops::findOpDef(op.type);
    if (!def) throw ShapeError("unsupported operator " + op.type);
    ops::CostCtx ctx{g, opIndex, n, s, gradMask};
    OpCost cost = def->cost(ctx);
    // Sequence parallelism: the op runs on its GPU's 1/k of the tokens (the graph keeps the whole
    // sequence's shapes, which no symbolic size can divide): its work, traffic and saved bytes.
    if (const int64_t k = op.attrInt("sequence_shards", 1); k > 1) {
        const double f = 1.0 / double(k);
        cost.forwardFlops *= f;
        cost.backwardFlops *= f;
        cost.bytesRead *= f;
        cost.bytesWritten *= f;
        for (SavedTensor& t : cost.saved) t.bytes *= f;
        cost.backwardScratch *= f;
    }
    return cost;
}

std::vector<bool> requiresGrad(const Graph& g) {
    std::vector<bool> grad(g.values.size(), false);
    for (size_t v = 0; v < g.values.size(); ++v)
        grad[v] = g.values[v].kind == ValueKind::Parameter && !g.values[v].frozen && isFloating(g.values[v].dtype);
    for (const Operation& op : g.ops) {
        bool any = false;
        for (int in : op.inputs) any |= in >= 0 && grad[in];
        if (!any) continue;
        for (int out : op.outputs) grad[out] = isFloating(g.values[out].dtype);
    }
    return grad;
}

bool isSupportedOperator(std::string_view type) { return ops::findOpDef(std::string(type)) != nullptr; }

std::vector<std::string> supportedOperators() {
    std::vector<std::string> names;
    for (const auto& [name, def] : ops::opTable()) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace ts
