// Indexing: Gather (also embeddings), GatherElements, GatherND, Slice, Scatter*, OneHot, TopK,
// Trilu, Range, EyeLike, GridSample, ReverseSequence (ONNX opset 11-18 semantics).
// Slice is a view (zero cost) as in PyTorch; gathers and scatters count the bytes they move.
//
// Gather and Slice propagate known integer contents so that shape vectors (Shape -> Gather ->
// batch size, Shape -> Slice -> leading dims) stay symbolic. Operators whose output size
// depends on tensor values (NonZero, Unique, Compress) are rejected as data-dependent.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/registry.h"

namespace ts::ops {
namespace {

// Start/end values at or beyond this magnitude mean "to the end" (exporters use INT64_MAX).
constexpr int64_t kEndMarker = limits::kMaxDimValue;

bool isIntegral(DType t) {
    switch (t) {
        case DType::Int64: case DType::Int32: case DType::Int16: case DType::Int8: case DType::UInt8:
        case DType::Bool: return true;
        default: return false;
    }
}

// A scalar (or one-element) input's value as a Dim: from intData, or from an integral floatData.
std::optional<Dim> scalarDim(const Value& v) {
    if (v.intData && v.intData->size() == 1) return (*v.intData)[0];
    if (v.floatData && v.floatData->size() == 1) {
        double f = (*v.floatData)[0];
        if (std::isfinite(f) && f == std::floor(f) && std::fabs(f) < double(kEndMarker)) return Dim(int64_t(f));
    }
    return std::nullopt;
}

// ---- Gather family ----

void inferGather(InferCtx& c) {
    c.expectInputs(2, 2);
    const Value& data = c.in(0);
    const Value& indices = c.in(1);
    auto r = static_cast<int64_t>(data.shape.size());
    if (r == 0) throw ShapeError("Gather needs an input of rank 1 or more");
    int64_t axis = normalizeAxis(c.op().attrInt("axis", 0), r);
    Shape out(data.shape.begin(), data.shape.begin() + axis);
    out.insert(out.end(), indices.shape.begin(), indices.shape.end());
    out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());

    // Known indices: check their range and resolve negative ones.
    const Dim& axisDim = data.shape[size_t(axis)];
    std::vector<int64_t> idx;
    bool indicesKnown = indices.intData.has_value();
    if (indicesKnown) {
        for (const Dim& d : *indices.intData) {
            if (!d.isConstant()) {
                indicesKnown = false;
                break;
            }
            int64_t i = d.constant();
            if (axisDim.isConstant()) {
                int64_t n = axisDim.constant();
                if (i < -n || i >= n)
                    throw ShapeError("Gather index " + std::to_string(i) + " is out of range for axis " +
                                     std::to_string(axis) + " of " + shapeStr(data.shape));
                if (i < 0) i += n;
            } else if (i < 0) {
                indicesKnown = false;  // counts from a symbolic end
                break;
            }
            idx.push_back(i);
        }
    }
    c.setOutput(0, data.dtype, out);

    // Contents: blocks of `inner` elements picked per outer index.
    auto dataShape = constantShape(data.shape);
    if (!indicesKnown || !dataShape || trackableCount(out) < 0) return;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= (*dataShape)[size_t(i)];
    for (int64_t i = axis + 1; i < r; ++i) inner *= (*dataShape)[size_t(i)];
    int64_t count = trackableCount(data.shape);
    auto gather = [&](const auto& src) {
        std::remove_cvref_t<decltype(src)> result;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i : idx) {
                auto begin = src.begin() + (o * (*dataShape)[size_t(axis)] + i) * inner;
                result.insert(result.end(), begin, begin + inner);
            }
        return result;
    };
    if (data.intData && int64_t(data.intData->size()) == count) c.out(0).intData = gather(*data.intData);
    if (data.floatData && int64_t(data.floatData->size()) == count) c.out(0).floatData = gather(*data.floatData);
}

void inferGatherElements(InferCtx& c) {
    c.expectInputs(2, 2);
    const Value& data = c.in(0);
    const Value& indices = c.in(1);
    if (data.shape.size() != indices.shape.size())
        throw ShapeError("GatherElements data " + shapeStr(data.shape) + " and indices " + shapeStr(indices.shape) +
                         " differ in rank");
    normalizeAxis(c.op().attrInt("axis", 0), static_cast<int64_t>(data.shape.size()));
    c.setOutput(0, data.dtype, indices.shape);
}

void inferGatherND(InferCtx& c) {
    c.expectInputs(2, 2);
    const Value& data = c.in(0);
    const Value& indices = c.in(1);
    auto r = static_cast<int64_t>(data.shape.size());
    auto q = static_cast<int64_t>(indices.shape.size());
    int64_t b = c.op().attrInt("batch_dims", 0);
    if (q < 1 || r < 1) throw ShapeError("GatherND needs inputs of rank 1 or more");
    if (b < 0 || b >= std::min(r, q)) throw ShapeError("GatherND batch_dims " + std::to_string(b) + " is out of range");
    const Dim& last = indices.shape.back();
    if (!last.isConstant()) throw ShapeError("GatherND index depth " + last.str() + " is not a constant");
    int64_t k = last.constant();
    if (k < 1 || k > r - b)
        throw ShapeError("GatherND index depth " + std::to_string(k) + " does not fit data " + shapeStr(data.shape));
    for (int64_t i = 0; i < b; ++i)
        if (data.shape[size_t(i)] != indices.shape[size_t(i)])
            throw ShapeError("GatherND batch dimensions of " + shapeStr(data.shape) + " and " +
                             shapeStr(indices.shape) + " differ");
    Shape out(indices.shape.begin(), indices.shape.end() - 1);
    out.insert(out.end(), data.shape.begin() + b + k, data.shape.end());
    c.setOutput(0, data.dtype, std::move(out));
}

// ---- Slice ----

// Length of data[start:end:step] along a dimension of size d (ONNX clamping rules).
int64_t concreteSliceLength(int64_t start, int64_t end, int64_t step, int64_t d, int64_t* firstIndex) {
    if (start < 0) start = start <= -kEndMarker ? -kEndMarker : start + d;
    if (end < 0) end = end <= -kEndMarker ? -kEndMarker : end + d;
    start = std::min(start, kEndMarker);
    end = std::min(end, kEndMarker);
    int64_t len = 0;
    if (step > 0) {
        start = std::clamp<int64_t>(start, 0, d);
        end = std::clamp<int64_t>(end, 0, d);
        len = end > start ? (end - start + step - 1) / step : 0;
    } else {
        if (d == 0) return 0;
        start = std::clamp<int64_t>(start, 0, d - 1);
        end = std::clamp<int64_t>(end, -1, d - 1);
        len = start > end ? (start - end - step - 1) / -step : 0;
    }
    *firstIndex = start;
    return len;
}

// A position along a symbolic dimension d, assuming d is at least as large as any constant bound.
Dim symbolicPosition(const Dim& v, const Dim& d, bool positiveStep, bool isEnd) {
    if (!v.isConstant()) return v;
    int64_t x = v.constant();
    if (x >= kEndMarker) return positiveStep ? d : d - Dim(1);
    if (x <= -kEndMarker) return positiveStep ? Dim(0) : Dim(isEnd ? -1 : 0);
    return x < 0 ? d + Dim(x) : Dim(x);
}

void inferSlice(InferCtx& c) {
    const Operation& op = c.op();
    const Value& data = c.in(0);
    auto r = static_cast<int64_t>(data.shape.size());
    std::vector<Dim> starts, ends;
    std::vector<int64_t> axes, steps;
    if (c.numInputs() >= 3) {
        starts = knownInts(c, 1, "starts");
        ends = knownInts(c, 2, "ends");
        if (c.hasInput(3)) axes = knownConstInts(c, 3, "axes");
        if (c.hasInput(4)) steps = knownConstInts(c, 4, "steps");
    } else {  // opset < 10: attributes
        for (int64_t v : op.attrInts("starts")) starts.push_back(Dim(v));
        for (int64_t v : op.attrInts("ends")) ends.push_back(Dim(v));
        axes = op.attrInts("axes");
    }
    if (starts.size() != ends.size()) throw ShapeError("Slice has different numbers of starts and ends");
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size())
        throw ShapeError("Slice starts, ends, axes and steps differ in length");

    Shape out = data.shape;
    std::vector<bool> seen(size_t(r), false);
    auto dataShape = constantShape(data.shape);
    std::vector<std::vector<int64_t>> picks;
    if (dataShape)
        for (int64_t d : *dataShape) {
            std::vector<int64_t> all(size_t(std::min<int64_t>(d, limits::kMaxKnownValueElements + 1)));
            for (size_t i = 0; i < all.size(); ++i) all[i] = int64_t(i);
            picks.push_back(std::move(all));
        }
    for (size_t i = 0; i < axes.size(); ++i) {
        int64_t axis = normalizeAxis(axes[i], r);
        if (seen[size_t(axis)]) throw ShapeError("Slice axis " + std::to_string(axes[i]) + " is repeated");
        seen[size_t(axis)] = true;
        int64_t step = steps[i];
        if (step == 0) throw ShapeError("Slice step is zero");
        const Dim& d = data.shape[size_t(axis)];
        if (d.isConstant() && starts[i].isConstant() && ends[i].isConstant()) {
            int64_t first = 0;
            int64_t len = concreteSliceLength(starts[i].constant(), ends[i].constant(), step, d.constant(), &first);
            out[size_t(axis)] = Dim(len);
            if (!picks.empty() && len <= limits::kMaxKnownValueElements) {
                std::vector<int64_t> idx;
                for (int64_t k = 0; k < len; ++k) idx.push_back(first + k * step);
                picks[size_t(axis)] = std::move(idx);
            }
            continue;
        }
        if (!d.isConstant() && step < 0 && starts[i].isConstant() && starts[i].constant() >= 0 &&
            starts[i].constant() < kEndMarker)
            throw ShapeError("Slice backwards from " + starts[i].str() + " over symbolic size " + d.str() +
                             " depends on whether the start is clamped");
        // Symbolic bounds (a sequence length from Shape) are assumed to lie inside the dimension.
        auto position = [&](const Dim& v, bool isEnd) {
            if (!v.isConstant()) return v;
            if (!d.isConstant()) return symbolicPosition(v, d, step > 0, isEnd);
            int64_t x = v.constant(), n = d.constant();
            if (x < 0) x = x <= -kEndMarker ? -kEndMarker : x + n;
            if (step > 0) return Dim(std::clamp<int64_t>(x, 0, n));
            return Dim(std::clamp<int64_t>(std::min(x, kEndMarker), isEnd ? -1 : 0, std::max<int64_t>(n - 1, 0)));
        };
        Dim start = position(starts[i], false);
        Dim end = position(ends[i], true);
        Dim span = step > 0 ? end - start : start - end;
        int64_t stride = step > 0 ? step : -step;
        std::optional<Dim> len;
        if (span.isConstant()) len = Dim(std::max<int64_t>(0, (span.constant() + stride - 1) / stride));
        else len = span.divExact(Dim(stride));
        if (!len) throw ShapeError("Slice with step " + std::to_string(step) + " over symbolic size " + span.str());
        out[size_t(axis)] = *len;
    }
    c.setOutput(0, data.dtype, out);

    int64_t count = trackableCount(data.shape);
    if (picks.empty() || count < 0 || trackableCount(out) < 0) return;
    auto select = [&](const auto& src) {
        std::vector<int64_t> strides(size_t(r), 1);
        for (int64_t i = r - 1; i > 0; --i) strides[size_t(i - 1)] = strides[size_t(i)] * (*dataShape)[size_t(i)];
        std::vector<int64_t> offsets{0};
        for (int64_t a = 0; a < r; ++a) {
            std::vector<int64_t> next;
            for (int64_t base : offsets)
                for (int64_t p : picks[size_t(a)]) next.push_back(base + p * strides[size_t(a)]);
            offsets = std::move(next);
        }
        std::remove_cvref_t<decltype(src)> result;
        for (int64_t o : offsets) result.push_back(src[size_t(o)]);
        return result;
    };
    if (data.intData && int64_t(data.intData->size()) == count) c.out(0).intData = select(*data.intData);
    if (data.floatData && int64_t(data.floatData->size()) == count) c.out(0).floatData = select(*data.floatData);
}

// ---- same-shape and simple shape rules ----

void inferScatter(InferCtx& c) {
    c.expectInputs(3, 3);
    const Value& data = c.in(0);
    c.setOutput(0, data.dtype, data.shape);
}

void inferOneHot(InferCtx& c) {
    c.expectInputs(3, 3);
    const Value& indices = c.in(0);
    const Value& values = c.in(2);
    std::optional<Dim> depth = scalarDim(c.in(1));
    if (!depth) throw ShapeError("OneHot depth is computed at run time (data-dependent shape)");
    if (depth->isConstant() && depth->constant() < 1) throw ShapeError("OneHot depth must be positive");
    auto r = static_cast<int64_t>(indices.shape.size());
    int64_t axis = c.op().attrInt("axis", -1);
    if (axis < -(r + 1) || axis > r) throw ShapeError("OneHot axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += r + 1;
    Shape out = indices.shape;
    out.insert(out.begin() + axis, *depth);
    c.setOutput(0, values.dtype, std::move(out));
}

void inferTopK(InferCtx& c) {
    c.expectInputs(1, 2);
    const Value& x = c.in(0);
    auto r = static_cast<int64_t>(x.shape.size());
    int64_t axis = normalizeAxis(c.op().attrInt("axis", -1), r);
    std::optional<Dim> k = c.hasInput(1) ? scalarDim(c.in(1)) : std::optional<Dim>(Dim(c.op().attrInt("k", -1)));
    if (!k) throw ShapeError("TopK k is computed at run time (data-dependent shape)");
    const Dim& d = x.shape[size_t(axis)];
    if (k->isConstant() && (k->constant() < 0 || (d.isConstant() && k->constant() > d.constant())))
        throw ShapeError("TopK k = " + k->str() + " does not fit axis size " + d.str());
    Shape out = x.shape;
    out[size_t(axis)] = *k;
    c.setOutput(0, x.dtype, out);
    if (c.numOutputs() > 1) c.setOutput(1, DType::Int64, out);
}

void inferDataDependent(InferCtx& c) {
    throw ShapeError(c.op().type + " has an output size that depends on tensor values (data-dependent shape), "
                     "which static analysis cannot size");
}

void inferSameShape(InferCtx& c) {
    c.expectInputs(1);
    const Value& x = c.in(0);
    c.setOutput(0, x.dtype, x.shape);
}

void inferRange(InferCtx& c) {
    c.expectInputs(3, 3);
    const Value& startV = c.in(0);
    const Value& limitV = c.in(1);
    const Value& deltaV = c.in(2);
    DType dtype = startV.dtype;
    if (isIntegral(dtype)) {
        std::optional<Dim> start = scalarDim(startV), limit = scalarDim(limitV), delta = scalarDim(deltaV);
        if (!start || !limit || !delta) throw ShapeError("Range bounds are computed at run time (data-dependent shape)");
        if (!delta->isConstant() || delta->constant() == 0) throw ShapeError("Range delta must be a nonzero constant");
        int64_t step = delta->constant();
        Dim span = *limit - *start;
        Dim len;
        if (span.isConstant()) {
            int64_t s = span.constant();
            len = Dim(step > 0 ? std::max<int64_t>(0, (s + step - 1) / step) : std::max<int64_t>(0, (-s - step - 1) / -step));
        } else if (auto q = span.divExact(Dim(step))) {
            len = *q;
        } else {
            throw ShapeError("Range length (" + span.str() + ") / " + std::to_string(step) + " is not exact");
        }
        c.setOutput(0, dtype, {len});
        if (start->isConstant() && len.isConstant() && len.constant() <= limits::kMaxKnownValueElements) {
            std::vector<Dim> data;
            for (int64_t i = 0; i < len.constant(); ++i) data.push_back(Dim(start->constant() + i * step));
            c.out(0).intData = std::move(data);
        }
        return;
    }
    auto scalar = [](const Value& v) -> std::optional<double> {
        if (v.floatData && v.floatData->size() == 1) return (*v.floatData)[0];
        if (v.intData && v.intData->size() == 1 && (*v.intData)[0].isConstant())
            return double((*v.intData)[0].constant());
        return std::nullopt;
    };
    auto start = scalar(startV), limit = scalar(limitV), delta = scalar(deltaV);
    if (!start || !limit || !delta) throw ShapeError("Range bounds are computed at run time (data-dependent shape)");
    if (*delta == 0 || !std::isfinite(*delta)) throw ShapeError("Range delta must be nonzero");
    double n = std::ceil((*limit - *start) / *delta);
    if (!std::isfinite(n) || n > double(limits::kMaxDimValue)) throw ShapeError("Range has an absurd length");
    auto len = static_cast<int64_t>(std::max(0.0, n));
    c.setOutput(0, dtype, {Dim(len)});
    if (len <= limits::kMaxKnownValueElements) {
        std::vector<double> data;
        for (int64_t i = 0; i < len; ++i) data.push_back(*start + double(i) * *delta);
        c.out(0).floatData = std::move(data);
    }
}

void inferEyeLike(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& x = c.in(0);
    if (x.shape.size() != 2) throw ShapeError("EyeLike needs a 2-D input, got " + shapeStr(x.shape));
    DType dtype = c.op().hasAttr("dtype") ? dtypeFromOnnx(int(c.op().attrInt("dtype", 1))) : x.dtype;
    if (dtype == DType::Unknown) throw ShapeError("EyeLike has an unsupported dtype");
    c.setOutput(0, dtype, x.shape);
}

void inferGridSample(InferCtx& c) {
    c.expectInputs(2, 2);
    const Value& x = c.in(0);
    const Value& grid = c.in(1);
    if (x.shape.size() < 3 || grid.shape.size() != x.shape.size())
        throw ShapeError("GridSample input " + shapeStr(x.shape) + " and grid " + shapeStr(grid.shape) + " do not match");
    Shape out{x.shape[0], x.shape[1]};
    out.insert(out.end(), grid.shape.begin() + 1, grid.shape.end() - 1);
    c.setOutput(0, x.dtype, std::move(out));
}

// ---- costs ----

// Gather-style reads touch only the selected elements. Backward scatter-adds the gradient
// (one FLOP per output element) and keeps the indices.
OpCost gatherCost(const CostCtx& c) {
    OpCost cost;
    double elemSize = c.inNumel(0) > 0 ? c.inBytes(0) / c.inNumel(0) : 0;
    cost.bytesRead = c.inBytes(1) + c.outNumel(0) * elemSize;
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = c.outNumel(0);
        saveInput(c, cost, 1);
    }
    return cost;
}

OpCost copyCost(const CostCtx& c) {
    OpCost cost;
    cost.bytesRead = c.inBytes(0);
    cost.bytesWritten = c.allOutputBytes();
    return cost;
}

OpCost scatterCost(const CostCtx& c) {
    OpCost cost;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    if (c.anyInputNeedsGrad()) {
        cost.backwardFlops = c.outNumel(0);
        saveInput(c, cost, 1);
    }
    return cost;
}

OpCost writeOnlyCost(const CostCtx& c) {
    OpCost cost;
    cost.bytesWritten = c.allOutputBytes();
    cost.bytesRead = c.hasInput(0) ? c.inBytes(0) : 0;
    return cost;
}

OpCost topKCost(const CostCtx& c) {
    OpCost cost;
    // A heap of size k over each row: about log2(k)+1 comparisons per input element.
    std::vector<int64_t> in = c.inShape(0), out = c.outShape(0);
    double k = 1;
    for (size_t i = 0; i < in.size() && i < out.size(); ++i)
        if (in[i] != out[i]) k = std::max<double>(1.0, double(out[i]));
    cost.forwardFlops = c.inNumel(0) * (std::log2(k) + 1);
    cost.bytesRead = c.inBytes(0);
    cost.bytesWritten = c.allOutputBytes();
    if (c.inNeedsGrad(0)) {
        cost.backwardFlops = c.outNumel(0);
        saveOutput(c, cost, 1);
    }
    return cost;
}

OpCost gridSampleCost(const CostCtx& c) {
    OpCost cost = elementwiseCost(c, 10, 20);  // bilinear weights and 4 taps per output
    saveInput(c, cost, 0);
    saveInput(c, cost, 1);
    if (!c.anyInputNeedsGrad()) cost.saved.clear();
    return cost;
}

OpCost triluCost(const CostCtx& c) { return elementwiseCost(c, 1, 1); }

}  // namespace

void registerIndexingOps(std::vector<OpDef>& t) {
    t.push_back({"Gather", inferGather, gatherCost});
    t.push_back({"GatherElements", inferGatherElements, gatherCost});
    t.push_back({"GatherND", inferGatherND, gatherCost});
    t.push_back({"Slice", inferSlice, zeroCost});  // a view in PyTorch
    t.push_back({"ScatterND", inferScatter, scatterCost});
    t.push_back({"ScatterElements", inferScatter, scatterCost});
    t.push_back({"Scatter", inferScatter, scatterCost});
    t.push_back({"OneHot", inferOneHot, writeOnlyCost});
    t.push_back({"TopK", inferTopK, topKCost});
    t.push_back({"NonZero", inferDataDependent, zeroCost});
    t.push_back({"Unique", inferDataDependent, zeroCost});
    t.push_back({"Compress", inferDataDependent, zeroCost});
    t.push_back({"Trilu", inferSameShape, triluCost});
    t.push_back({"ReverseSequence", inferSameShape, copyCost});
    t.push_back({"Range", inferRange, writeOnlyCost});
    t.push_back({"EyeLike", inferEyeLike, writeOnlyCost});
    t.push_back({"GridSample", inferGridSample, gridSampleCost});
}

}  // namespace ts::ops
