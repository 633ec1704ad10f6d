// The batch size of a trace, found from its recorded shapes, and one operator's shapes rewritten
// at another batch (trace_change.h says how and why).
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "trace_change_internal.h"

namespace ts::predictors {
namespace {

// Assumed: a second size of the data input leading at least this share of the activation inputs
// the batch leads makes the batch ambiguous (a [batch, sequence] input whose sequence leads as
// often: seq-first layouts), and the trace is refused rather than guessed.
constexpr double kAmbiguousShare = 0.8;

// Assumed: no tensor dimension reaches 2^50; larger recorded sizes (a damaged or hostile trace) are
// not sizes a batch can be found in or scaled by.
constexpr double kMaxSize = 0x1p50;
bool sizeLike(double d) {
    return d >= 2 && d < kMaxSize;
}

std::string shapeText(const Shape& s) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << (s[i] < kMaxSize ? int64_t(s[i]) : -1);
    os << "]";
    return os.str();
}

bool multipleOf(double d, double b) {
    return b >= 1 && d >= b && std::fmod(d, b) == 0;
}

}  // namespace

bool isAccumulateGrad(const std::string& opName) {
    return opName.find("AccumulateGrad") != std::string::npos;
}

std::set<Shape> parameterShapes(const KinetoTrace& t) {
    std::set<Shape> out;
    for (const TraceOperator& op : t.operators) {
        if (op.inputShapes < 0 || !isAccumulateGrad(t.str(op.name))) continue;
        const std::optional<OperatorShapes> s = operatorShapesOf(t, op);
        if (!s) continue;
        for (const Shape& d : s->dims) {
            if (d.empty()) continue;
            out.insert(d);
            if (d.size() == 2) out.insert({d[1], d[0]});
        }
    }
    return out;
}

std::vector<int32_t> operatorParents(const KinetoTrace& t) {
    std::vector<int32_t> parent(t.operators.size(), -1);
    std::vector<int32_t> stack;
    int32_t thread = -1;
    for (size_t i = 0; i < t.operators.size(); ++i) {
        const TraceOperator& op = t.operators[i];
        if (op.thread != thread) stack.clear(), thread = op.thread;
        while (!stack.empty()) {
            const TraceOperator& top = t.operators[size_t(stack.back())];
            if (top.startUs + top.durationUs > op.startUs) break;
            stack.pop_back();
        }
        parent[i] = stack.empty() ? -1 : stack.back();
        stack.push_back(int32_t(i));
    }
    return parent;
}

TraceBatch findTraceBatch(const KinetoTrace& t) {
    TraceBatch b;
    if (!t.recordShapes) {
        b.problem = "was recorded without record_shapes: no operator's input shapes say which dimension is the batch";
        return b;
    }
    const std::set<Shape> parameters = parameterShapes(t);
    std::map<int64_t, int64_t> leading;  // leading size -> activation inputs
    const TraceOperator* first = nullptr;
    Shape firstInput;
    const int32_t firstStep = t.steps.empty() ? -1 : 0;
    for (const TraceOperator& op : t.operators) {
        if (!t.steps.empty() && op.step < 0) continue;
        const std::optional<OperatorShapes> s = operatorShapesOf(t, op);
        if (!s) continue;
        for (const Shape& d : s->dims) {
            if (d.empty() || parameters.count(d)) continue;
            ++b.activationInputs;
            if (sizeLike(d[0])) ++leading[int64_t(d[0])];
            const bool earlier = !first || op.startUs < first->startUs;
            if (earlier && op.step == firstStep && product(d) > 1) first = &op, firstInput = d;
        }
    }
    if (!first) {
        b.problem = "has no operator with a tensor input in its steps: there is no batch to find";
        return b;
    }
    // The batch is a size of the data: of the first input's sizes, the one leading the most inputs.
    std::vector<std::pair<int64_t, int64_t>> candidates;  // (size, inputs it leads)
    for (double d : firstInput) {
        if (!sizeLike(d)) continue;
        const int64_t size = int64_t(d);
        if (std::any_of(candidates.begin(), candidates.end(), [&](auto& c) { return c.first == size; })) continue;
        candidates.emplace_back(size, leading.count(size) ? leading[size] : 0);
    }
    std::stable_sort(candidates.begin(), candidates.end(), [](auto& x, auto& y) { return x.second > y.second; });
    const std::string firstText = "the step's first input " + shapeText(firstInput) + " (" + t.str(first->name) + ")";
    if (candidates.empty() || candidates[0].second == 0) {
        b.problem = "none of the sizes of " + firstText +
                    " leads another operator's input, so the batch dimension cannot be identified";
        return b;
    }
    if (candidates.size() > 1 && double(candidates[1].second) >= kAmbiguousShare * double(candidates[0].second)) {
        b.problem = "the batch dimension is ambiguous: sizes " + std::to_string(candidates[0].first) + " and " +
                    std::to_string(candidates[1].first) + " of " + firstText + " lead " +
                    std::to_string(candidates[0].second) + " and " + std::to_string(candidates[1].second) +
                    " activation inputs";
        return b;
    }
    b.batch = candidates[0].first;
    b.leadingBatch = candidates[0].second;
    if (firstInput.size() == 2)
        for (double d : firstInput)
            if (sizeLike(d) && int64_t(d) != b.batch && double(b.batch) * d < kMaxSize)
                b.tokenSizes.push_back(b.batch * int64_t(d));
    auto top = std::max_element(leading.begin(), leading.end(), [](auto& x, auto& y) { return x.second < y.second; });
    std::ostringstream how;
    how << "batch " << b.batch << ": a size of " << firstText << ", the leading dimension of " << b.leadingBatch
        << " of " << b.activationInputs << " activation inputs";
    if (top->first != b.batch) how << " (the most common leading size is " << top->first << ", " << top->second << ")";
    if (!b.tokenSizes.empty())
        how << "; " << b.tokenSizes.front() << " (batch x the data's other size: flattened tokens) scales with it";
    how << (parameters.empty() ? "; the trace records no AccumulateGrad, so parameters are not told apart"
                               : "; " + std::to_string(parameters.size()) + " parameter shapes (AccumulateGrad) kept");
    b.how = how.str();
    return b;
}

BatchRewritten rewriteBatch(const std::string& op, OperatorShapes& s, const BatchRewrite& r) {
    BatchRewritten out;
    if (!(r.from >= 1 && r.to >= 1)) return out;
    auto batchDim = [&](const Shape& d, bool batchedGemm) -> int {
        if (d.empty() || (r.parameters && r.parameters->count(d))) return -1;
        for (size_t i = 0; i < d.size(); ++i)
            if (d[i] == r.from) return int(i);
        for (size_t i = 0; i < d.size(); ++i)
            if (sizeLike(d[i]) &&
                std::find(r.tokenSizes.begin(), r.tokenSizes.end(), int64_t(d[i])) != r.tokenSizes.end())
                return int(i);
        // A leading multiple of the batch: batch x heads in a batched GEMM, the global batch of
        // model-parallel embeddings (ranks x batch), flattened samples. Not for 1-D tensors (buffers).
        if ((batchedGemm || d.size() >= 2) && multipleOf(d[0], r.from)) return 0;
        return -1;
    };
    auto scale = [&](size_t input, size_t dim) {
        if (input >= s.dims.size() || dim >= s.dims[input].size()) return;
        double& d = s.dims[input][dim];
        if (multipleOf(d, r.from)) d = d / r.from * r.to;
        out.batched = true;
    };
    const bool mm = op == "aten::mm" || op == "aten::addmm";
    const bool bmm = op == "aten::bmm" || op == "aten::baddbmm";
    if (mm || bmm) {
        const size_t a = op == "aten::addmm" || op == "aten::baddbmm" ? 1 : 0, b = a + 1;
        const size_t rank = bmm ? 3 : 2;
        if (s.dims.size() > b && s.dims[a].size() == rank && s.dims[b].size() == rank) {
            const Shape originalA = s.dims[a], originalB = s.dims[b];
            const int da = batchDim(s.dims[a], bmm), db = batchDim(s.dims[b], bmm);
            const size_t m = rank - 2, k = rank - 1;  // a = [.., M, K], b = [.., K, N]
            if (bmm && (da == 0 || db == 0)) {
                scale(a, 0), scale(b, 0);
                if (a == 1 && s.dims[0].size() == 3) scale(0, 0);
            } else if (da == int(k) || db == int(m)) {
                scale(a, k), scale(b, m);
                out.reductionBatched = true;
            } else if (da == int(m)) {
                scale(a, m);
                if (a == 1 && s.dims[0].size() >= 2 && s.dims[0][s.dims[0].size() - 2] == originalA[m])
                    scale(0, s.dims[0].size() - 2);  // a bias of the output's shape
            } else if (db == int(k)) {
                scale(b, k);
                if (a == 1 && !s.dims[0].empty() && s.dims[0].back() == originalB.back())
                    scale(0, s.dims[0].size() - 1);  // a bias over the output's columns
            }
            return out;
        }
    }
    for (size_t i = 0; i < s.dims.size(); ++i)
        if (const int d = batchDim(s.dims[i], false); d >= 0) scale(i, size_t(d));
    return out;
}

}  // namespace ts::predictors
