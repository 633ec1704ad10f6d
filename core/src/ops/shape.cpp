// Shape manipulation: Reshape, Shape, Size, Flatten, Squeeze/Unsqueeze, Transpose, Concat, Split,
// Expand, Tile, Pad, SpaceToDepth/DepthToSpace, Resize/Upsample (ONNX opset 11-18 semantics).
//
// Views (Reshape, Flatten, Squeeze, Unsqueeze, Split, Shape, Size) cost nothing; operators that
// materialise a new tensor count the bytes they move (Transpose too: PyTorch code nearly always
// makes a permuted tensor contiguous before using it). Known integer contents (shape vectors
// computed by Shape -> Gather -> Concat -> Reshape chains) are propagated wherever the data
// is small, so that the batch size stays symbolic through those chains.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/registry.h"

namespace ts::ops {
namespace {

// Copies known contents from input `from` to output `to` when the element count is unchanged.
void keepData(InferCtx& c, size_t from, size_t to) {
    const Value& in = c.in(from);
    Value& out = c.out(to);
    int64_t count = trackableCount(out.shape);
    if (in.intData && static_cast<int64_t>(in.intData->size()) == count) out.intData = in.intData;
    if (in.floatData && static_cast<int64_t>(in.floatData->size()) == count) out.floatData = in.floatData;
}

// out[m0, m1, ...] = in[picks[0][m0], picks[1][m1], ...] (row-major), for contents tracking.
template <typename T>
std::vector<T> pickAlongAxes(const std::vector<T>& data, const std::vector<int64_t>& inShape,
                             const std::vector<std::vector<int64_t>>& picks) {
    std::vector<int64_t> strides(inShape.size(), 1);
    for (size_t i = inShape.size(); i-- > 1;) strides[i - 1] = strides[i] * inShape[i];
    std::vector<int64_t> offsets{0};
    for (size_t a = 0; a < picks.size(); ++a) {
        std::vector<int64_t> next;
        next.reserve(offsets.size() * picks[a].size());
        for (int64_t base : offsets)
            for (int64_t p : picks[a]) next.push_back(base + p * strides[a]);
        offsets = std::move(next);
    }
    std::vector<T> out;
    out.reserve(offsets.size());
    for (int64_t o : offsets) out.push_back(data[static_cast<size_t>(o)]);
    return out;
}

// Applies `picks` to whichever contents input `from` carries, storing them on output `to`.
void pickData(InferCtx& c, size_t from, size_t to, const std::vector<std::vector<int64_t>>& picks) {
    const Value& in = c.in(from);
    auto inShape = constantShape(in.shape);
    if (!inShape || picks.size() != inShape->size()) return;
    int64_t count = 1;
    for (size_t a = 0; a < picks.size(); ++a) {
        count *= static_cast<int64_t>(picks[a].size());
        if (count > limits::kMaxKnownValueElements) return;
        for (int64_t i : picks[a])
            if (i < 0 || i >= (*inShape)[a]) return;
    }
    if (count != trackableCount(c.out(to).shape)) return;
    int64_t inCount = trackableCount(in.shape);
    if (in.intData && static_cast<int64_t>(in.intData->size()) == inCount)
        c.out(to).intData = pickAlongAxes(*in.intData, *inShape, picks);
    if (in.floatData && static_cast<int64_t>(in.floatData->size()) == inCount)
        c.out(to).floatData = pickAlongAxes(*in.floatData, *inShape, picks);
}

std::vector<int64_t> iota(int64_t n) {
    std::vector<int64_t> r(static_cast<size_t>(std::max<int64_t>(n, 0)));
    for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<int64_t>(i);
    return r;
}

// Axes from input `input` (newer opsets) or attribute `attr` (older ones); nullopt when neither.
std::optional<std::vector<int64_t>> axesOf(const InferCtx& c, size_t input, const char* attr) {
    if (c.hasInput(input)) return knownConstInts(c, input, "axes");
    if (c.op().hasAttr(attr)) return c.op().attrInts(attr);
    return std::nullopt;
}

int64_t checkedConst(const Dim& d, const char* what, const std::string& op) {
    if (!d.isConstant()) throw ShapeError(op + " needs a concrete " + what + ", got " + d.str());
    return d.constant();
}

// ---- views ----

void inferReshape(InferCtx& c) {
    c.expectInputs(1, 2);
    const Value& data = c.in(0);
    std::vector<Dim> target;
    if (c.hasInput(1)) target = knownInts(c, 1, "target shape");
    else for (int64_t v : c.op().attrInts("shape")) target.push_back(Dim(v));  // opset < 5
    bool allowZero = c.op().attrInt("allowzero", 0) != 0;
    if (target.size() > static_cast<size_t>(limits::kMaxRank)) throw ShapeError("Reshape target has too many dimensions");
    Shape out(target.size());
    int inferred = -1;
    Dim known(1);
    for (size_t i = 0; i < target.size(); ++i) {
        const Dim& t = target[i];
        if (t.isConstant() && t.constant() == -1) {
            if (inferred >= 0) throw ShapeError("Reshape target " + shapeStr(target) + " has more than one -1");
            inferred = static_cast<int>(i);
            continue;
        }
        if (t.isConstant() && t.constant() == 0 && !allowZero) {
            if (i >= data.shape.size())
                throw ShapeError("Reshape target " + shapeStr(target) + " copies dimension " + std::to_string(i) +
                                 " that input " + shapeStr(data.shape) + " lacks");
            out[i] = data.shape[i];
        } else if (t.isConstant() && t.constant() < 0) {
            throw ShapeError("Reshape target " + shapeStr(target) + " has a negative dimension");
        } else {
            out[i] = t;
        }
        known = known * out[i];
    }
    Dim total = numel(data.shape);
    if (inferred >= 0) {
        std::optional<Dim> q = known == Dim(0) ? std::nullopt : total.divExact(known);
        if (!q)
            throw ShapeError("cannot reshape " + shapeStr(data.shape) + " to " + shapeStr(target) +
                             ": the size is not a multiple of " + known.str());
        out[inferred] = *q;
    } else if (numel(out) != total) {
        throw ShapeError("cannot reshape " + shapeStr(data.shape) + " (" + total.str() + " elements) to " +
                         shapeStr(out));
    }
    c.setOutput(0, data.dtype, std::move(out));
    keepData(c, 0, 0);
}

void inferShape(InferCtx& c) {
    c.expectInputs(1, 1);
    const Shape& s = c.in(0).shape;
    auto r = static_cast<int64_t>(s.size());
    auto clampAxis = [r](int64_t a) { return std::clamp(a < 0 ? a + r : a, int64_t(0), r); };
    int64_t start = clampAxis(c.op().attrInt("start", 0));
    int64_t end = c.op().hasAttr("end") ? clampAxis(c.op().attrInt("end", r)) : r;
    std::vector<Dim> dims;
    for (int64_t i = start; i < end; ++i) dims.push_back(s[static_cast<size_t>(i)]);
    c.setOutput(0, DType::Int64, {Dim(static_cast<int64_t>(dims.size()))});
    c.out(0).intData = std::move(dims);
}

void inferSize(InferCtx& c) {
    c.expectInputs(1, 1);
    Dim n = numel(c.in(0).shape);
    c.setOutput(0, DType::Int64, {});
    c.out(0).intData = std::vector<Dim>{n};
}

void inferFlatten(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& in = c.in(0);
    auto r = static_cast<int64_t>(in.shape.size());
    int64_t axis = c.op().attrInt("axis", 1);
    if (axis < -r || axis > r) throw ShapeError("Flatten axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    Dim outer = numel(Shape(in.shape.begin(), in.shape.begin() + axis));
    Dim inner = numel(Shape(in.shape.begin() + axis, in.shape.end()));
    c.setOutput(0, in.dtype, {outer, inner});
    keepData(c, 0, 0);
}

void inferSqueeze(InferCtx& c) {
    c.expectInputs(1, 2);
    const Value& in = c.in(0);
    auto r = static_cast<int64_t>(in.shape.size());
    std::vector<bool> drop(in.shape.size(), false);
    if (auto axes = axesOf(c, 1, "axes")) {
        for (int64_t a : *axes) {
            int64_t ax = normalizeAxis(a, r);
            if (in.shape[size_t(ax)] != Dim(1))
                throw ShapeError("Squeeze axis " + std::to_string(a) + " has size " + in.shape[size_t(ax)].str() +
                                 ", not 1, in " + shapeStr(in.shape));
            drop[size_t(ax)] = true;
        }
    } else {
        for (size_t i = 0; i < in.shape.size(); ++i) drop[i] = in.shape[i] == Dim(1);
    }
    Shape out;
    for (size_t i = 0; i < in.shape.size(); ++i)
        if (!drop[i]) out.push_back(in.shape[i]);
    c.setOutput(0, in.dtype, std::move(out));
    keepData(c, 0, 0);
}

void inferUnsqueeze(InferCtx& c) {
    c.expectInputs(1, 2);
    const Value& in = c.in(0);
    auto axes = axesOf(c, 1, "axes");
    if (!axes) throw ShapeError("Unsqueeze needs axes");
    auto outRank = static_cast<int64_t>(in.shape.size() + axes->size());
    std::vector<bool> inserted(size_t(outRank), false);
    for (int64_t a : *axes) {
        int64_t ax = normalizeAxis(a, outRank);
        if (inserted[size_t(ax)]) throw ShapeError("Unsqueeze axis " + std::to_string(a) + " is repeated");
        inserted[size_t(ax)] = true;
    }
    Shape out;
    size_t next = 0;
    for (int64_t i = 0; i < outRank; ++i) out.push_back(inserted[size_t(i)] ? Dim(1) : in.shape[next++]);
    c.setOutput(0, in.dtype, std::move(out));
    keepData(c, 0, 0);
}

// ---- copies ----

void inferTranspose(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& in = c.in(0);
    auto r = static_cast<int64_t>(in.shape.size());
    std::vector<int64_t> perm = c.op().attrInts("perm");
    if (perm.empty())
        for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
    if (static_cast<int64_t>(perm.size()) != r)
        throw ShapeError("Transpose perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(r));
    std::vector<bool> seen(size_t(r), false);
    Shape out;
    for (int64_t p : perm) {
        int64_t ax = normalizeAxis(p, r);
        if (seen[size_t(ax)]) throw ShapeError("Transpose perm repeats axis " + std::to_string(p));
        seen[size_t(ax)] = true;
        out.push_back(in.shape[size_t(ax)]);
    }
    c.setOutput(0, in.dtype, std::move(out));
    // Contents: out[m] = in[m permuted back] (the pads of torch's Pad export: Reshape [-1, 2],
    // reversed, transposed, flattened).
    auto inShape = constantShape(in.shape);
    if (!inShape || trackableCount(c.out(0).shape) < 0) return;
    std::vector<int64_t> strides(size_t(r), 1);
    for (int64_t i = r - 1; i > 0; --i) strides[size_t(i - 1)] = strides[size_t(i)] * (*inShape)[size_t(i)];
    std::vector<int64_t> offsets{0};
    for (int64_t p : perm) {
        int64_t ax = normalizeAxis(p, r);
        std::vector<int64_t> next;
        for (int64_t base : offsets)
            for (int64_t k = 0; k < (*inShape)[size_t(ax)]; ++k) next.push_back(base + k * strides[size_t(ax)]);
        offsets = std::move(next);
    }
    auto permute = [&](const auto& src) {
        std::remove_cvref_t<decltype(src)> result;
        for (int64_t o : offsets) result.push_back(src[size_t(o)]);
        return result;
    };
    int64_t count = trackableCount(in.shape);
    if (in.intData && int64_t(in.intData->size()) == count) c.out(0).intData = permute(*in.intData);
    if (in.floatData && int64_t(in.floatData->size()) == count) c.out(0).floatData = permute(*in.floatData);
}

void inferConcat(InferCtx& c) {
    c.expectInputs(1);
    std::vector<const Value*> parts;
    for (size_t i = 0; i < c.numInputs(); ++i)
        if (c.hasInput(i)) parts.push_back(&c.in(i));
    if (parts.empty()) throw ShapeError("Concat has no inputs");
    const Shape& first = parts[0]->shape;
    auto r = static_cast<int64_t>(first.size());
    if (!c.op().hasAttr("axis")) throw ShapeError("Concat needs an axis");
    int64_t axis = normalizeAxis(c.op().attrInt("axis", 0), r);
    Shape out = first;
    out[size_t(axis)] = Dim(0);
    for (const Value* p : parts) {
        if (p->shape.size() != first.size())
            throw ShapeError("Concat inputs " + shapeStr(first) + " and " + shapeStr(p->shape) + " differ in rank");
        for (int64_t i = 0; i < r; ++i)
            if (i != axis && p->shape[size_t(i)] != first[size_t(i)])
                throw ShapeError("Concat inputs " + shapeStr(first) + " and " + shapeStr(p->shape) +
                                 " differ outside axis " + std::to_string(axis));
        out[size_t(axis)] = out[size_t(axis)] + p->shape[size_t(axis)];
    }
    c.setOutput(0, parts[0]->dtype, out);

    // Contents: each input contributes a block of (axis size * inner) elements per outer index.
    if (trackableCount(out) < 0) return;
    auto outer = numel(Shape(first.begin(), first.begin() + axis));
    auto inner = numel(Shape(first.begin() + axis + 1, first.end()));
    if (!outer.isConstant() || !inner.isConstant()) return;
    auto concatData = [&](auto member) {
        using Vec = std::remove_cvref_t<decltype(*(parts[0]->*member))>;
        Vec result;
        for (int64_t o = 0; o < outer.constant(); ++o)
            for (const Value* p : parts) {
                const auto& data = p->*member;
                int64_t block = p->shape[size_t(axis)].constant() * inner.constant();
                if (!data || static_cast<int64_t>(data->size()) != outer.constant() * block) return std::optional<Vec>{};
                result.insert(result.end(), data->begin() + o * block, data->begin() + (o + 1) * block);
            }
        return std::optional<Vec>{std::move(result)};
    };
    c.out(0).intData = concatData(&Value::intData);
    c.out(0).floatData = concatData(&Value::floatData);
}

void inferSplit(InferCtx& c) {
    c.expectInputs(1, 2);
    const Value& in = c.in(0);
    auto r = static_cast<int64_t>(in.shape.size());
    if (r == 0) throw ShapeError("Split of a scalar (the input needs rank 1 or more)");
    int64_t axis = normalizeAxis(c.op().attrInt("axis", 0), r);
    const Dim& total = in.shape[size_t(axis)];
    size_t n = c.numOutputs();
    if (n == 0) throw ShapeError("Split has no outputs");
    std::vector<Dim> sizes;
    if (c.hasInput(1) || c.op().hasAttr("split")) {
        std::vector<int64_t> split = c.hasInput(1) ? knownConstInts(c, 1, "split") : c.op().attrInts("split");
        if (split.size() != n)
            throw ShapeError("Split into " + std::to_string(split.size()) + " parts but " + std::to_string(n) + " outputs");
        Dim sum(0);
        for (int64_t s : split) {
            if (s < 0) throw ShapeError("Split has a negative part size");
            sizes.push_back(Dim(s));
            sum = sum + Dim(s);
        }
        if (sum != total)
            throw ShapeError("Split parts add up to " + sum.str() + ", not the axis size " + total.str());
    } else if (auto parts = total.divExact(Dim(static_cast<int64_t>(n)))) {
        sizes.assign(n, *parts);
    } else if (total.isConstant() && c.op().hasAttr("num_outputs")) {
        // Opset 18: ceil-sized parts, the last one smaller.
        int64_t t = total.constant(), each = (t + int64_t(n) - 1) / int64_t(n);
        for (size_t i = 0; i < n; ++i) sizes.push_back(Dim(std::clamp<int64_t>(t - each * int64_t(i), 0, each)));
    } else {
        throw ShapeError("Split cannot divide axis size " + total.str() + " into " + std::to_string(n) + " equal parts");
    }
    int64_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
        Shape s = in.shape;
        s[size_t(axis)] = sizes[i];
        c.setOutput(i, in.dtype, s);
        if (r == 1 && sizes[i].isConstant()) {
            pickData(c, 0, i, {[&] {
                         std::vector<int64_t> idx;
                         for (int64_t k = 0; k < sizes[i].constant(); ++k) idx.push_back(offset + k);
                         return idx;
                     }()});
            offset += sizes[i].constant();
        }
    }
}

void inferExpand(InferCtx& c) {
    c.expectInputs(2, 2);
    const Value& in = c.in(0);
    std::vector<Dim> target = knownInts(c, 1, "target shape");
    for (const Dim& d : target)
        if (d.isConstant() && d.constant() < 0) throw ShapeError("Expand target " + shapeStr(target) + " is negative");
    Shape out = broadcastShapes(in.shape, target);
    c.setOutput(0, in.dtype, out);
    auto inShape = constantShape(in.shape);
    auto outShape = constantShape(out);
    if (!inShape || !outShape) return;
    std::vector<std::vector<int64_t>> picks;
    size_t lead = outShape->size() - inShape->size();
    for (size_t i = 0; i < inShape->size(); ++i) {
        int64_t o = (*outShape)[lead + i];
        picks.push_back((*inShape)[i] == o ? iota(o) : std::vector<int64_t>(size_t(o), 0));
    }
    // New leading axes repeat the whole (broadcast) tensor.
    int64_t repeat = 1;
    for (size_t i = 0; i < lead; ++i) repeat *= (*outShape)[i];
    if (repeat == 1) {
        pickData(c, 0, 0, picks);
    } else if (trackableCount(out) >= 0) {
        auto apply = [&](const auto& src) {
            auto body = pickAlongAxes(src, *inShape, picks);
            std::remove_cvref_t<decltype(body)> all;
            for (int64_t k = 0; k < repeat; ++k) all.insert(all.end(), body.begin(), body.end());
            return all;
        };
        if (in.intData && int64_t(in.intData->size()) == trackableCount(in.shape)) c.out(0).intData = apply(*in.intData);
        if (in.floatData && int64_t(in.floatData->size()) == trackableCount(in.shape))
            c.out(0).floatData = apply(*in.floatData);
    }
}

void inferTile(InferCtx& c) {
    c.expectInputs(2, 2);
    const Value& in = c.in(0);
    // Repeats may follow the batch (BLOOM's ALiBi slopes tiled to [batch x heads, 1, 1] from the ids' size).
    std::vector<Dim> repeats = knownInts(c, 1, "repeats");
    if (repeats.size() != in.shape.size())
        throw ShapeError("Tile has " + std::to_string(repeats.size()) + " repeats for rank " + std::to_string(in.shape.size()));
    Shape out;
    for (size_t i = 0; i < repeats.size(); ++i) {
        for (const Dim::Term& t : repeats[i].terms())  // a symbolic count never below zero
            if (t.coef < 0) throw ShapeError("Tile repeat count is negative");
        out.push_back(in.shape[i] * repeats[i]);
    }
    c.setOutput(0, in.dtype, out);
    auto constRepeats = constantShape(repeats);
    if (auto inShape = constantShape(in.shape); inShape && constRepeats && trackableCount(out) >= 0) {
        std::vector<std::vector<int64_t>> picks;
        for (size_t i = 0; i < inShape->size(); ++i) {
            std::vector<int64_t> idx;
            for (int64_t k = 0; k < (*inShape)[i] * (*constRepeats)[i]; ++k) idx.push_back(k % (*inShape)[i]);
            picks.push_back(std::move(idx));
        }
        pickData(c, 0, 0, picks);
    }
}

void inferPad(InferCtx& c) {
    c.expectInputs(1, 4);
    const Value& in = c.in(0);
    auto r = static_cast<int64_t>(in.shape.size());
    std::vector<int64_t> pads = c.hasInput(1) ? knownConstInts(c, 1, "pads") : c.op().attrInts("pads");
    std::vector<int64_t> axes;
    if (c.hasInput(3)) {
        for (int64_t a : knownConstInts(c, 3, "axes")) axes.push_back(normalizeAxis(a, r));
    } else {
        axes = iota(r);
    }
    if (pads.size() != 2 * axes.size())
        throw ShapeError("Pad has " + std::to_string(pads.size()) + " pads for " + std::to_string(axes.size()) + " axes");
    Shape out = in.shape;
    auto k = axes.size();
    for (size_t i = 0; i < k; ++i) {
        Dim& d = out[size_t(axes[i])];
        d = d + Dim(pads[i]) + Dim(pads[i + k]);
        if (d.isConstant() && d.constant() < 0)
            throw ShapeError("Pad " + std::to_string(pads[i]) + "/" + std::to_string(pads[i + k]) +
                             " crops more than the dimension holds in " + shapeStr(in.shape));
    }
    c.setOutput(0, in.dtype, std::move(out));
}

void inferSpaceToDepth(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& in = c.in(0);
    if (in.shape.size() != 4) throw ShapeError("SpaceToDepth needs a 4-D input, got " + shapeStr(in.shape));
    int64_t b = c.op().attrInt("blocksize", 0);
    if (b <= 0) throw ShapeError("SpaceToDepth needs a positive blocksize");
    auto h = in.shape[2].divExact(Dim(b)), w = in.shape[3].divExact(Dim(b));
    if (!h || !w) throw ShapeError("SpaceToDepth: " + shapeStr(in.shape) + " is not divisible by blocksize " + std::to_string(b));
    c.setOutput(0, in.dtype, {in.shape[0], in.shape[1] * Dim(b * b), *h, *w});
}

void inferDepthToSpace(InferCtx& c) {
    c.expectInputs(1, 1);
    const Value& in = c.in(0);
    if (in.shape.size() != 4) throw ShapeError("DepthToSpace needs a 4-D input, got " + shapeStr(in.shape));
    int64_t b = c.op().attrInt("blocksize", 0);
    if (b <= 0) throw ShapeError("DepthToSpace needs a positive blocksize");
    auto ch = in.shape[1].divExact(Dim(b * b));
    if (!ch) throw ShapeError("DepthToSpace: channels " + in.shape[1].str() + " not divisible by blocksize^2");
    c.setOutput(0, in.dtype, {in.shape[0], *ch, in.shape[2] * Dim(b), in.shape[3] * Dim(b)});
}

// An input that is present and not an empty placeholder tensor (exporters pass "" or a [0] tensor).
bool meaningful(const InferCtx& c, size_t i) {
    if (!c.hasInput(i)) return false;
    const Shape& s = c.in(i).shape;
    return !(s.size() == 1 && s[0] == Dim(0));
}

Dim scaledDim(const Dim& d, double scale, const std::string& op) {
    if (!(scale > 0) || !std::isfinite(scale) || scale > double(limits::kMaxDimValue)) throw ShapeError(op + " has an invalid scale");
    if (d.isConstant()) return Dim(static_cast<int64_t>(std::floor(static_cast<double>(d.constant()) * scale)));
    if (scale == std::floor(scale)) return d * Dim(static_cast<int64_t>(scale));
    throw ShapeError(op + " scales symbolic dimension " + d.str() + " by a fraction");
}

void inferResize(InferCtx& c) {
    const Operation& op = c.op();
    const Value& in = c.in(0);
    auto r = static_cast<int64_t>(in.shape.size());
    bool upsample = op.type == "Upsample";
    int64_t opset = op.attrInt("_opset", 17);
    // Resize-10 and Upsample-9 take (X, scales); Resize-11+ takes (X, roi, scales, sizes).
    size_t scalesInput = (upsample || opset <= 10) ? 1 : 2;
    size_t sizesInput = (upsample || opset <= 10) ? 99 : 3;
    std::vector<int64_t> axes = op.hasAttr("axes") ? op.attrInts("axes") : iota(r);
    for (int64_t& a : axes) a = normalizeAxis(a, r);
    Shape out = in.shape;
    if (meaningful(c, sizesInput)) {
        std::vector<Dim> sizes = knownInts(c, sizesInput, "sizes");
        if (sizes.size() != axes.size())
            throw ShapeError(op.type + " has " + std::to_string(sizes.size()) + " sizes for rank " + std::to_string(r));
        std::string policy = op.attrString("keep_aspect_ratio_policy", "stretch");
        if (policy == "stretch") {
            for (size_t i = 0; i < axes.size(); ++i) out[size_t(axes[i])] = sizes[i];
        } else {
            double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
            for (size_t i = 0; i < axes.size(); ++i) {
                double ratio = double(checkedConst(sizes[i], "size", op.type)) /
                               double(checkedConst(in.shape[size_t(axes[i])], "dimension", op.type));
                scale = policy == "not_larger" ? std::min(scale, ratio) : std::max(scale, ratio);
            }
            for (int64_t a : axes)
                out[size_t(a)] = Dim(static_cast<int64_t>(std::round(double(out[size_t(a)].constant()) * scale)));
        }
    } else {
        std::vector<double> scales;
        if (meaningful(c, scalesInput)) {
            const Value& s = c.in(scalesInput);
            if (!s.floatData) throw ShapeError(op.type + " scales are computed at run time (data-dependent shape)");
            scales = *s.floatData;
        } else if (op.hasAttr("scales")) {
            auto it = op.attrs.find("scales");
            if (auto* v = std::get_if<std::vector<double>>(&it->second)) scales = *v;
        } else {
            throw ShapeError(op.type + " needs scales or sizes");
        }
        if (scales.size() != axes.size())
            throw ShapeError(op.type + " has " + std::to_string(scales.size()) + " scales for rank " + std::to_string(r));
        for (size_t i = 0; i < axes.size(); ++i) out[size_t(axes[i])] = scaledDim(in.shape[size_t(axes[i])], scales[i], op.type);
    }
    c.setOutput(0, in.dtype, std::move(out));
}

// ---- costs ----

// A materialised copy: data inputs read once, outputs written once. Broadcast-style copies
// (Expand, Tile) sum gradients back in backward: one FLOP per output element.
OpCost copyCost(const CostCtx& c, bool reducesInBackward, bool allInputs) {
    OpCost cost;
    cost.bytesRead = allInputs ? c.allInputBytes() : c.inBytes(0);
    cost.bytesWritten = c.allOutputBytes();
    if (reducesInBackward && c.inNeedsGrad(0)) cost.backwardFlops = c.outNumel(0);
    return cost;
}
OpCost plainCopyCost(const CostCtx& c) { return copyCost(c, false, false); }
OpCost concatCost(const CostCtx& c) { return copyCost(c, false, true); }
OpCost broadcastCopyCost(const CostCtx& c) { return copyCost(c, true, false); }

OpCost resizeCost(const CostCtx& c) {
    OpCost cost = copyCost(c, false, false);
    std::vector<int64_t> in = c.inShape(0), out = c.outShape(0);
    int resized = 0;
    for (size_t i = 0; i < in.size() && i < out.size(); ++i) resized += in[i] != out[i];
    std::string mode = c.op().attrString("mode", "nearest");
    double perElement = 0;
    if (mode == "linear" || mode == "bilinear") perElement = 3.0 * (std::pow(2.0, resized) - 1);  // lerps
    else if (mode == "cubic" || mode == "bicubic") perElement = 7.0 * (std::pow(4.0, resized) - 1) / 3;
    cost.forwardFlops = perElement * c.outNumel(0);
    if (c.inNeedsGrad(0)) cost.backwardFlops = std::max(perElement, 1.0) * c.outNumel(0);
    return cost;
}

}  // namespace

void registerShapeOps(std::vector<OpDef>& t) {
    t.push_back({"Reshape", inferReshape, zeroCost});
    t.push_back({"Shape", inferShape, zeroCost});
    t.push_back({"Size", inferSize, zeroCost});
    t.push_back({"Flatten", inferFlatten, zeroCost});
    t.push_back({"Squeeze", inferSqueeze, zeroCost});
    t.push_back({"Unsqueeze", inferUnsqueeze, zeroCost});
    t.push_back({"Transpose", inferTranspose, plainCopyCost});
    t.push_back({"Concat", inferConcat, concatCost});
    t.push_back({"Split", inferSplit, zeroCost});  // chunk/split are views in PyTorch
    t.push_back({"Expand", inferExpand, broadcastCopyCost});
    t.push_back({"Tile", inferTile, broadcastCopyCost});
    t.push_back({"Pad", inferPad, plainCopyCost});
    t.push_back({"SpaceToDepth", inferSpaceToDepth, plainCopyCost});
    t.push_back({"DepthToSpace", inferDepthToSpace, plainCopyCost});
    t.push_back({"Resize", inferResize, resizeCost});
    t.push_back({"Upsample", inferResize, resizeCost});
}

}  // namespace ts::ops
