// Tensor manipulation as ATen calls: shapes and views, indexing (gathers, slices, scatters, data-
// dependent selections), reductions, casts, quantization, constants and generators. Integer
// arguments follow ONNX's conventions (negative indices, clamped slice bounds, Reshape's 0 and -1).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "op_lowering_internal.h"
#include "op_lowering_math.h"
#include "trainscope/core/errors.h"

namespace ts::torchexec {
namespace {

at::TensorOptions optionsFor(const OpCtx& c, size_t output, at::Device device) {
    return at::TensorOptions().dtype(scalarTypeOf(c.outDtype(output))).device(device);
}

// Indices for a gather or scatter, negative ones counted from the end. Ids the executor generated
// (model inputs, constants without contents) are never negative: no extra kernel for them.
at::Tensor indicesFor(const OpCtx& c, size_t slot, int64_t size) {
    at::Tensor idx = c.t(slot);
    if (idx.scalar_type() != at::kLong && idx.scalar_type() != at::kInt) idx = idx.to(at::kLong);
    const Value& v = c.inputValue(slot);
    if (!idx.is_cpu() && v.producer < 0 && !v.intData) return idx;
    return wrapNegativeIndices(idx, size);
}

std::vector<int64_t> axesArgument(const OpCtx& c, size_t input, const char* attr) {
    if (c.has(input)) return c.ints(input);
    return c.attrInts(attr);
}

// ---- shapes and views ----

Outputs runReshape(const OpCtx& c) {
    at::Tensor x = c.t(0);
    std::vector<int64_t> target = c.has(1) ? c.ints(1) : c.attrInts("shape");
    const bool allowZero = c.attrInt("allowzero", 0) != 0;
    for (size_t i = 0; i < target.size(); ++i)
        if (target[i] == 0 && !allowZero) {
            if (static_cast<int64_t>(i) >= x.dim())
                c.fail("target copies dimension " + std::to_string(i) + " the input lacks");
            target[i] = x.size(static_cast<int64_t>(i));
        }
    return {x.reshape(target)};
}

Outputs runShape(const OpCtx& c) {
    const at::Tensor& x = c.raw(0);
    const int64_t r = x.dim();
    auto clampAxis = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
    const int64_t start = clampAxis(c.attrInt("start", 0));
    const int64_t end = c.hasAttr("end") ? clampAxis(c.attrInt("end", r)) : r;
    std::vector<int64_t> dims;
    for (int64_t i = start; i < end; ++i) dims.push_back(x.size(i));
    return {at::tensor(dims, at::kLong)};  // on the host, as x.shape in PyTorch
}

Outputs runSize(const OpCtx& c) {
    return {at::scalar_tensor(c.raw(0).numel(), at::kLong)};
}

Outputs runFlatten(const OpCtx& c) {
    at::Tensor x = c.t(0);
    int64_t axis = c.attrInt("axis", 1);
    if (axis < -x.dim() || axis > x.dim()) c.fail("axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += x.dim();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < x.dim(); ++i) (i < axis ? outer : inner) *= x.size(i);
    return {x.reshape({outer, inner})};
}

Outputs runSqueeze(const OpCtx& c) {
    at::Tensor x = c.t(0);
    std::vector<int64_t> axes = axesArgument(c, 1, "axes");
    if (axes.empty()) return {x.squeeze()};
    for (int64_t& a : axes) a = normalizeAxis(c, a, x.dim());
    return {x.squeeze(axes)};
}

Outputs runUnsqueeze(const OpCtx& c) {
    at::Tensor x = c.t(0);
    std::vector<int64_t> axes = axesArgument(c, 1, "axes");
    const int64_t rank = x.dim() + static_cast<int64_t>(axes.size());
    for (int64_t& a : axes) a = normalizeAxis(c, a, rank);
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes) x = x.unsqueeze(a);
    return {x};
}

Outputs runTranspose(const OpCtx& c) {
    at::Tensor x = c.t(0);
    std::vector<int64_t> perm = c.attrInts("perm");
    if (perm.empty())
        for (int64_t i = x.dim() - 1; i >= 0; --i) perm.push_back(i);
    return {x.permute(perm)};
}

Outputs runConcat(const OpCtx& c) {
    std::vector<at::Tensor> xs;
    for (size_t i = 0; i < c.numInputs(); ++i)
        if (c.has(i)) xs.push_back(c.t(i));
    if (xs.empty()) c.fail("has no inputs");
    return {at::cat(xs, normalizeAxis(c, c.attrInt("axis", 0), xs[0].dim()))};
}

Outputs runSplit(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", 0), x.dim());
    const int64_t total = x.size(axis), parts = static_cast<int64_t>(c.numOutputs());
    std::vector<int64_t> sizes = c.has(1) ? c.ints(1) : c.attrInts("split");
    if (sizes.empty()) {
        // Equal parts; opset 18's num_outputs allows a smaller last part.
        const int64_t each = (total + parts - 1) / std::max<int64_t>(parts, 1);
        for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::clamp<int64_t>(total - each * i, 0, each));
    }
    return at::split_with_sizes(x, sizes, axis);
}

// ONNX Expand broadcasts both ways: a target dimension of 1 keeps the input's.
Outputs runExpand(const OpCtx& c) {
    at::Tensor x = c.t(0);
    std::vector<int64_t> target = c.ints(1);
    const size_t rank = std::max(target.size(), static_cast<size_t>(x.dim()));
    std::vector<int64_t> out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t a =
            i < rank - static_cast<size_t>(x.dim()) ? 1 : x.size(static_cast<int64_t>(i - (rank - x.dim())));
        const int64_t b = i < rank - target.size() ? 1 : target[i - (rank - target.size())];
        if (a != b && a != 1 && b != 1)
            c.fail("cannot expand dimension of size " + std::to_string(a) + " to " + std::to_string(b));
        out[i] = a == 1 ? b : a;
    }
    return {x.expand(out)};
}

Outputs runTile(const OpCtx& c) {
    at::Tensor x = c.t(0);
    std::vector<int64_t> repeats = c.ints(1);
    if (static_cast<int64_t>(repeats.size()) != x.dim()) c.fail("needs one repeat count per dimension");
    return {x.repeat(repeats)};
}

Outputs runPad(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t rank = x.dim();
    const std::string mode = c.attrString("mode", "constant");
    std::vector<int64_t> pads = c.has(1) ? c.ints(1) : c.attrInts("pads");
    std::vector<int64_t> axes;
    if (c.has(3))
        for (int64_t a : c.ints(3)) axes.push_back(normalizeAxis(c, a, rank));
    else
        for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    if (pads.size() != 2 * axes.size()) c.fail("needs a begin and an end pad for each padded axis");
    std::vector<int64_t> before(static_cast<size_t>(rank), 0), after(static_cast<size_t>(rank), 0);
    for (size_t i = 0; i < axes.size(); ++i) {
        before[static_cast<size_t>(axes[i])] = pads[i];
        after[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
    }
    if (mode == "constant") {
        double value = c.has(2) ? c.scalar(2) : c.attrFloat("value", 0.0);
        std::vector<int64_t> torchPads;
        for (int64_t d = rank - 1; d >= 0; --d) {
            torchPads.push_back(before[static_cast<size_t>(d)]);
            torchPads.push_back(after[static_cast<size_t>(d)]);
        }
        return {at::constant_pad_nd(x, torchPads, value)};
    }
    if (mode != "reflect" && mode != "edge" && mode != "wrap") c.fail("unsupported mode '" + mode + "'");
    // Negative pads crop first; then each padded axis gathers its source positions.
    for (int64_t d = 0; d < rank; ++d) {
        const size_t i = static_cast<size_t>(d);
        const int64_t cropBegin = std::max<int64_t>(0, -before[i]), cropEnd = std::max<int64_t>(0, -after[i]);
        if (cropBegin || cropEnd) x = x.narrow(d, cropBegin, x.size(d) - cropBegin - cropEnd);
        before[i] = std::max<int64_t>(0, before[i]);
        after[i] = std::max<int64_t>(0, after[i]);
    }
    // PyTorch's padding kernels cover the last 1-3 dimensions behind one or two leading ones.
    int64_t first = rank;
    for (int64_t d = 0; d < rank; ++d)
        if (before[static_cast<size_t>(d)] || after[static_cast<size_t>(d)]) {
            first = d;
            break;
        }
    const int64_t padded = rank - first;
    bool native = padded >= 1 && padded <= 3 && (rank == padded + 1 || rank == padded + 2);
    for (int64_t d = first; d < rank && native && mode == "reflect"; ++d)
        native &= before[static_cast<size_t>(d)] < x.size(d) && after[static_cast<size_t>(d)] < x.size(d);
    if (native) {
        std::vector<int64_t> torchPads;
        for (int64_t d = rank - 1; d >= first; --d) {
            torchPads.push_back(before[static_cast<size_t>(d)]);
            torchPads.push_back(after[static_cast<size_t>(d)]);
        }
        const char* torchMode = mode == "reflect" ? "reflect" : mode == "edge" ? "replicate" : "circular";
        return {at::pad(x, torchPads, torchMode)};
    }
    for (int64_t d = 0; d < rank; ++d) {
        const size_t i = static_cast<size_t>(d);
        if (!before[i] && !after[i]) continue;
        if (x.size(d) == 0) c.fail("cannot pad an empty dimension in " + mode + " mode");
        at::Tensor idx = at::tensor(padSourceIndices(mode, x.size(d), before[i], after[i]), at::kLong).to(x.device());
        x = at::index_select(x, d, idx);
    }
    return {x};
}

Outputs runSpaceToDepth(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t b = c.attrInt("blocksize", 0);
    if (x.dim() != 4 || b <= 0 || x.size(2) % b || x.size(3) % b) c.fail("needs a 4-D input divisible by blocksize");
    const int64_t n = x.size(0), ch = x.size(1), h = x.size(2) / b, w = x.size(3) / b;
    return {x.reshape({n, ch, h, b, w, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, ch * b * b, h, w})};
}

Outputs runDepthToSpace(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t b = c.attrInt("blocksize", 0);
    if (x.dim() != 4 || b <= 0 || x.size(1) % (b * b)) c.fail("needs a 4-D input whose channels divide by blocksize^2");
    const int64_t n = x.size(0), ch = x.size(1) / (b * b), h = x.size(2), w = x.size(3);
    if (c.attrString("mode", "DCR") == "CRD") return {at::pixel_shuffle(x, b)};
    return {x.reshape({n, b, b, ch, h, w}).permute({0, 3, 4, 1, 5, 2}).reshape({n, ch, h * b, w * b})};
}

// ---- indexing ----

Outputs runGather(const OpCtx& c) {
    at::Tensor data = c.t(0);
    if (data.dim() == 0) c.fail("needs an input of rank 1 or more");
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", 0), data.dim());
    const at::Tensor& rawIdx = c.raw(1);
    if (rawIdx.dim() == 0 && rawIdx.is_cpu()) {  // x[:, i]: a view, as PyTorch's select
        int64_t i = rawIdx.item<int64_t>();
        return {data.select(axis, i < 0 ? i + data.size(axis) : i)};
    }
    at::Tensor idx = indicesFor(c, 1, data.size(axis));
    if (axis == 0 && data.dim() == 2 && data.is_floating_point()) return {at::embedding(data, idx)};  // nn.Embedding
    std::vector<int64_t> shape(data.sizes().begin(), data.sizes().begin() + axis);
    shape.insert(shape.end(), idx.sizes().begin(), idx.sizes().end());
    shape.insert(shape.end(), data.sizes().begin() + axis + 1, data.sizes().end());
    return {at::index_select(data, axis, idx.reshape({-1})).reshape(shape)};
}

Outputs runGatherElements(const OpCtx& c) {
    at::Tensor data = c.t(0);
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", 0), data.dim());
    return {at::gather(data, axis, indicesFor(c, 1, data.size(axis)).to(at::kLong))};
}

// Rows of `data` picked by index tuples idx[..., k] (after `batch` shared leading dimensions).
Outputs runGatherND(const OpCtx& c) {
    at::Tensor data = c.t(0), idx = c.t(1).to(at::kLong);
    const int64_t batch = c.attrInt("batch_dims", 0);
    const int64_t k = idx.size(-1);
    if (k < 1 || k > data.dim() - batch) c.fail("index depth does not fit the data");
    int64_t batchCount = 1;
    for (int64_t i = 0; i < batch; ++i) batchCount *= data.size(i);
    std::vector<int64_t> outShape(idx.sizes().begin(), idx.sizes().end() - 1);
    outShape.insert(outShape.end(), data.sizes().begin() + batch + k, data.sizes().end());
    std::vector<int64_t> dataShape{batchCount};
    dataShape.insert(dataShape.end(), data.sizes().begin() + batch, data.sizes().end());
    at::Tensor d = data.reshape(dataShape);
    at::Tensor ix = idx.reshape({batchCount, -1, k});
    c10::List<std::optional<at::Tensor>> indices;
    indices.push_back(at::arange(batchCount, ix.options()).unsqueeze(1));
    for (int64_t j = 0; j < k; ++j) indices.push_back(wrapNegativeIndices(ix.select(2, j), data.size(batch + j)));
    return {at::index(d, indices).reshape(outShape)};
}

Outputs runSlice(const OpCtx& c) {
    at::Tensor x = c.t(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (c.numInputs() >= 3) {
        starts = c.ints(1);
        ends = c.ints(2);
        if (c.has(3)) axes = c.ints(3);
        if (c.has(4)) steps = c.ints(4);
    } else {
        starts = c.attrInts("starts");
        ends = c.attrInts("ends");
        axes = c.attrInts("axes");
    }
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        c.fail("starts, ends, axes and steps differ in length");
    for (size_t i = 0; i < starts.size(); ++i) {
        const int64_t axis = normalizeAxis(c, axes[i], x.dim()), n = x.size(axis), step = steps[i];
        if (step == 0) c.fail("step is zero");
        int64_t start = starts[i], end = ends[i];
        if (start < 0) start = start < -n ? -n - 1 : start + n;  // saturating: no overflow at INT64_MIN
        if (end < 0) end = end < -n ? -n - 1 : end + n;
        if (step > 0) {
            start = std::clamp<int64_t>(start, 0, n);
            end = std::clamp<int64_t>(end, 0, n);
            x = x.slice(axis, start, std::max(start, end), step);
        } else {
            start = std::clamp<int64_t>(start, 0, std::max<int64_t>(n - 1, 0));
            end = std::clamp<int64_t>(end, -1, n - 1);
            const int64_t count = n == 0 || start <= end ? 0 : (start - end - 1) / -step + 1;
            at::Tensor idx = at::arange(start, start + step * count, step, at::TensorOptions().dtype(at::kLong));
            if (count == 0) idx = at::empty({0}, at::kLong);
            x = at::index_select(x, axis, idx.to(x.device()));
        }
    }
    return {x};
}

const char* scatterReduction(const OpCtx& c, const std::string& reduction) {
    if (reduction == "mul") return "prod";
    if (reduction == "max") return "amax";
    if (reduction == "min") return "amin";
    c.fail("unsupported reduction '" + reduction + "'");
}

Outputs runScatterND(const OpCtx& c) {
    at::Tensor data = c.t(0), idx = c.t(1).to(at::kLong), updates = c.t(2);
    const int64_t k = idx.size(-1);
    if (k < 1 || k > data.dim()) c.fail("index depth does not fit the data");
    int64_t prefix = 1, rows = idx.numel() / k;
    for (int64_t j = 0; j < k; ++j) prefix *= data.size(j);
    at::Tensor ix = idx.reshape({rows, k});
    at::Tensor flat = at::zeros({rows}, ix.options());
    for (int64_t j = 0; j < k; ++j) flat = flat * data.size(j) + wrapNegativeIndices(ix.select(1, j), data.size(j));
    at::Tensor d = data.reshape({prefix, -1});
    at::Tensor u = updates.reshape({rows, d.size(1)});
    const std::string reduction = c.attrString("reduction", "none");
    at::Tensor y;
    if (reduction == "none" || reduction == "add") {
        c10::List<std::optional<at::Tensor>> indices;
        indices.push_back(flat);
        y = at::index_put(d, indices, u, reduction == "add");
    } else {
        y = at::scatter_reduce(d, 0, flat.unsqueeze(1).expand({rows, d.size(1)}), u, scatterReduction(c, reduction),
                               true);
    }
    return {y.reshape(data.sizes())};
}

Outputs runScatterElements(const OpCtx& c) {
    at::Tensor data = c.t(0), updates = c.t(2);
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", 0), data.dim());
    at::Tensor idx = indicesFor(c, 1, data.size(axis)).to(at::kLong);
    const std::string reduction = c.attrString("reduction", "none");
    if (reduction == "none") return {at::scatter(data, axis, idx, updates)};
    if (reduction == "add") return {at::scatter_add(data, axis, idx, updates)};
    return {at::scatter_reduce(data, axis, idx, updates, scatterReduction(c, reduction), true)};
}

Outputs runOneHot(const OpCtx& c) {
    at::Tensor idx = c.t(0), values = c.t(2);
    const int64_t depth = static_cast<int64_t>(c.scalar(1));
    if (depth < 1) c.fail("depth must be positive");
    at::Tensor i = idx.is_floating_point() ? at::trunc(idx).to(at::kLong) : idx.to(at::kLong);
    i = at::where(i.lt(0), i + depth, i);
    at::Tensor valid = i.ge(0).logical_and(i.lt(depth));
    at::Tensor hot = at::one_hot(at::where(valid, i, at::zeros_like(i)), depth).logical_and(valid.unsqueeze(-1));
    at::Tensor off = values.reshape({-1})[0], on = values.reshape({-1})[1];
    at::Tensor y = at::where(hot, on, off);
    int64_t axis = c.attrInt("axis", -1);
    const int64_t rank = y.dim();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) c.fail("axis is out of range");
    return {y.movedim(-1, axis)};
}

Outputs runTopK(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t k = c.has(1) ? c.scalarInt(1) : c.attrInt("k", -1);
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", -1), x.dim());
    auto [values, indices] = at::topk(x, k, axis, c.attrInt("largest", 1) != 0, true);
    return {values, indices};
}

Outputs runNonZero(const OpCtx& c) {
    at::Tensor x = c.t(0);
    if (x.dim() == 0) x = x.reshape({1});
    return {at::nonzero(x).t().contiguous()};
}

// Unique values (sorted, or in order of first appearance) with first indices, inverse and counts.
Outputs runUnique(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const bool sorted = c.attrInt("sorted", 1) != 0;
    at::Tensor y, inverse, counts;
    int64_t axis = 0;
    if (c.hasAttr("axis")) {
        axis = normalizeAxis(c, c.attrInt("axis", 0), x.dim());
        std::tie(y, inverse, counts) = at::unique_dim(x, axis, true, true, true);
    } else {
        x = x.reshape({-1});
        std::tie(y, inverse, counts) = at::_unique2(x, true, true, true);
    }
    inverse = inverse.reshape({-1});
    const int64_t n = inverse.numel(), u = counts.numel();
    at::Tensor positions = at::arange(n, inverse.options());
    at::Tensor first = at::full({u}, n, inverse.options()).scatter_reduce(0, inverse, positions, "amin", true);
    if (!sorted) {
        at::Tensor order = at::argsort(first);
        at::Tensor rank = at::argsort(order);
        y = at::index_select(y, axis, order);
        first = first.index_select(0, order);
        counts = counts.index_select(0, order);
        inverse = rank.index_select(0, inverse);
    }
    return {y, first, inverse, counts};
}

Outputs runCompress(const OpCtx& c) {
    at::Tensor x = c.t(0), cond = c.t(1).to(at::kBool).reshape({-1});
    int64_t axis = 0;
    if (c.hasAttr("axis"))
        axis = normalizeAxis(c, c.attrInt("axis", 0), x.dim());
    else
        x = x.reshape({-1});
    if (cond.numel() > x.size(axis)) cond = cond.narrow(0, 0, x.size(axis));
    return {at::index_select(x, axis, at::nonzero(cond).reshape({-1}))};
}

Outputs runTrilu(const OpCtx& c) {
    at::Tensor x = c.t(0);
    int64_t k = c.has(1) ? c.scalarInt(1) : 0;
    const int64_t limit = x.dim() >= 2 ? x.size(-1) + x.size(-2) + 1 : 1;
    k = std::clamp<int64_t>(k, -limit, limit);
    return {c.attrInt("upper", 1) != 0 ? at::triu(x, k) : at::tril(x, k)};
}

Outputs runReverseSequence(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t timeAxis = normalizeAxis(c, c.attrInt("time_axis", 0), x.dim());
    const int64_t batchAxis = normalizeAxis(c, c.attrInt("batch_axis", 1), x.dim());
    if (std::set<int64_t>{timeAxis, batchAxis}.size() != 2 || std::max(timeAxis, batchAxis) > 1)
        c.fail("time_axis and batch_axis must be 0 and 1");
    const int64_t T = x.size(timeAxis);
    at::Tensor lens = c.t(1).to(at::kLong).reshape({1, -1});    // [1, B]
    at::Tensor t = at::arange(T, lens.options()).unsqueeze(1);  // [T, 1]
    at::Tensor src = at::where(t.lt(lens), lens - 1 - t, t);    // [T, B]
    if (timeAxis == 1) src = src.t();
    std::vector<int64_t> shape(src.sizes().begin(), src.sizes().end());
    shape.resize(static_cast<size_t>(x.dim()), 1);
    return {at::gather(x, timeAxis, src.reshape(shape).expand(x.sizes()))};
}

// A generator's output: small integer results (shape vectors, position lists) stay on the host, as
// Python lists in eager PyTorch; the rest goes to the executor's device.
at::Tensor placeGenerated(const OpCtx& c, const at::Tensor& host) {
    if (!host.is_floating_point() && host.numel() <= limits::kMaxKnownValueElements) return host;
    return host.to(c.device().is_cpu() ? c.creationDevice() : c.device());
}

Outputs runRange(const OpCtx& c) {
    const DType type = c.outDtype(0);
    if (isFloating(type))
        return {
            placeGenerated(c, at::arange(c.scalar(0), c.scalar(1), c.scalar(2), at::kDouble).to(scalarTypeOf(type)))};
    const int64_t delta = c.scalarInt(2);
    if (delta == 0) c.fail("delta is zero");
    return {placeGenerated(c, at::arange(c.scalarInt(0), c.scalarInt(1), delta, at::kLong).to(scalarTypeOf(type)))};
}

Outputs runEyeLike(const OpCtx& c) {
    const at::Tensor& x = c.raw(0);
    if (x.dim() != 2) c.fail("needs a 2-D input");
    at::Tensor y = at::zeros({x.size(0), x.size(1)}, optionsFor(c, 0, x.device()));
    y.diagonal(c.attrInt("k", 0)).fill_(1);
    return {y};
}

// Greedy non-maximum suppression (op_lowering_math.cpp) on the host: a detector's post-processing,
// not differentiable. Output rows (batch, class, box) in selection order.
Outputs runNonMaxSuppression(const OpCtx& c) {
    at::Tensor boxes = c.raw(0).detach().to(at::kCPU).to(at::kFloat).contiguous();
    at::Tensor scores = c.raw(1).detach().to(at::kCPU).to(at::kFloat).contiguous();
    if (boxes.dim() != 3 || boxes.size(2) != 4 || scores.dim() != 3 || scores.size(0) != boxes.size(0) ||
        scores.size(2) != boxes.size(1))
        c.fail("needs boxes [batches, boxes, 4] and scores [batches, classes, boxes]");
    NmsOptions o;
    o.maxPerClass = c.has(2) ? c.scalarInt(2) : 0;
    o.iouThreshold = c.has(3) ? c.scalar(3) : 0.0;
    if (c.has(4)) o.scoreThreshold = c.scalar(4);
    o.centerPointBox = c.attrInt("center_point_box", 0) != 0;
    std::vector<int64_t> selected = nonMaxSuppression(boxes.data_ptr<float>(), scores.data_ptr<float>(), boxes.size(0),
                                                      scores.size(1), boxes.size(1), o);
    return {at::tensor(selected, at::kLong).reshape({-1, 3}).to(c.device())};
}

// ---- reductions ----

Outputs runReduce(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const std::string& type = c.op.type;
    std::vector<int64_t> axes = c.has(1) ? c.ints(1) : c.attrInts("axes");
    if (axes.empty() && c.attrInt("noop_with_empty_axes", 0) != 0) return {x};
    for (int64_t& a : axes) a = normalizeAxis(c, a, std::max<int64_t>(x.dim(), 1));
    if (axes.empty())
        for (int64_t i = 0; i < x.dim(); ++i) axes.push_back(i);
    std::sort(axes.begin(), axes.end());
    const bool keep = c.attrInt("keepdims", 1) != 0;
    const at::ScalarType dtype = x.scalar_type();
    const bool integral = !x.is_floating_point();
    int64_t reducedCount = 1;
    for (int64_t a : axes) reducedCount *= x.dim() ? x.size(a) : 1;
    at::Tensor y;
    if (reducedCount == 0 && (type == "ReduceMax" || type == "ReduceMin")) {
        // ONNX: the maximum of nothing is the lowest value (and the minimum of nothing the highest).
        at::Tensor shape = at::sum(x, axes, keep).to(dtype);
        const bool max = type == "ReduceMax";
        if (!integral) {
            y = at::full_like(shape,
                              max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
        } else {
            const bool isByte = dtype == at::kByte;
            const int bits = static_cast<int>(at::elementSize(dtype)) * 8 - (isByte ? 0 : 1);
            const int64_t hiValue = bits >= 63 ? INT64_MAX : (int64_t(1) << bits) - 1;
            const int64_t loValue = isByte ? 0 : (bits >= 63 ? INT64_MIN : -(int64_t(1) << bits));
            y = at::full_like(shape, max ? loValue : hiValue);
        }
    } else if (type == "ReduceSum") {
        y = at::sum(x, axes, keep);
    } else if (type == "ReduceMean") {
        y = integral ? at::div(at::sum(x, axes, keep), reducedCount, "trunc") : at::mean(x, axes, keep);
    } else if (type == "ReduceMax") {
        y = at::amax(x, axes, keep);
    } else if (type == "ReduceMin") {
        y = at::amin(x, axes, keep);
    } else if (type == "ReduceProd") {
        y = x;
        for (size_t i = axes.size(); i-- > 0;) y = at::prod(y, axes[i], keep);
    } else if (type == "ReduceL1") {
        y = at::sum(at::abs(x), axes, keep);
    } else if (type == "ReduceL2") {
        y = integral ? at::sqrt(at::sum(x * x, axes, keep).to(at::kDouble)) : at::linalg_vector_norm(x, 2, axes, keep);
    } else if (type == "ReduceSumSquare") {
        y = at::sum(x * x, axes, keep);
    } else if (type == "ReduceLogSum") {
        y = at::log(at::sum(x, axes, keep));
    } else if (type == "ReduceLogSumExp") {
        y = at::logsumexp(x, axes, keep);
    } else {
        c.fail("no reduction lowering");
    }
    return {y.scalar_type() == dtype ? y : y.to(dtype)};
}

Outputs runArg(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", 0), x.dim());
    const bool keep = c.attrInt("keepdims", 1) != 0, last = c.attrInt("select_last_index", 0) != 0;
    const bool max = c.op.type == "ArgMax";
    at::Tensor v = last ? x.flip(axis) : x;
    at::Tensor i = max ? at::argmax(v, axis, keep) : at::argmin(v, axis, keep);
    return {last ? (x.size(axis) - 1) - i : i};
}

Outputs runCumSum(const OpCtx& c) {
    at::Tensor x = c.t(0);
    const int64_t axis = normalizeAxis(c, c.scalarInt(1), x.dim());
    const bool reverse = c.attrInt("reverse", 0) != 0, exclusive = c.attrInt("exclusive", 0) != 0;
    at::Tensor v = reverse ? x.flip(axis) : x;
    at::Tensor y = at::cumsum(v, axis, x.scalar_type());
    if (exclusive && x.size(axis) > 0) {
        std::vector<int64_t> shape = sizesOf(x);
        shape[static_cast<size_t>(axis)] = 1;
        y = at::cat({at::zeros(shape, y.options()), y.narrow(axis, 0, x.size(axis) - 1)}, axis);
    }
    return {reverse ? y.flip(axis) : y};
}

// ---- casts and quantization ----

at::Tensor castTo(const OpCtx& c, const at::Tensor& x, at::ScalarType to) {
    // Float 8 saturates to its largest finite value by default (ONNX Cast's saturate=1).
    if ((to == at::kFloat8_e4m3fn || to == at::kFloat8_e5m2) && c.attrInt("saturate", 1) != 0 &&
        x.is_floating_point()) {
        const double max = to == at::kFloat8_e4m3fn ? 448.0 : 57344.0;
        return at::clamp(x, -max, max).to(to);
    }
    return x.to(to);
}

Outputs runCast(const OpCtx& c) {
    const DType to = c.op.type == "Cast" ? dtypeFromOnnx(static_cast<int>(c.attrInt("to", 0))) : c.inputValue(1).dtype;
    if (to == DType::String || to == DType::Unknown) c.fail("cannot cast to " + std::string(dtypeName(to)));
    return {castTo(c, c.t(0), scalarTypeOf(to))};
}

// Per-axis scale and zero point broadcast along `axis` of x.
at::Tensor alongAxis(const OpCtx& c, const at::Tensor& v, const at::Tensor& x) {
    if (v.dim() == 0 || v.numel() == 1) return v.reshape({});
    if (v.dim() != 1) c.fail("blocked quantization is not supported");
    const int64_t axis = normalizeAxis(c, c.attrInt("axis", 1), x.dim());
    std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
    shape[static_cast<size_t>(axis)] = v.numel();
    return v.reshape(shape);
}

Outputs runQuantize(const OpCtx& c) {
    at::Tensor x = c.t(0);
    at::Tensor scale = alongAxis(c, c.t(1), x);
    const at::ScalarType to = scalarTypeOf(c.outDtype(0));
    at::Tensor zp = c.has(2) ? alongAxis(c, c.t(2), x).to(at::kFloat) : at::zeros({}, x.options().dtype(at::kFloat));
    at::Tensor v = x.to(at::kFloat) / scale.to(at::kFloat);
    if (to == at::kFloat8_e4m3fn || to == at::kFloat8_e5m2) return {castTo(c, v + zp, to)};
    v = at::round(v) + zp;
    const double lo = to == at::kByte ? 0 : to == at::kChar ? -128 : to == at::kShort ? -32768 : -2147483648.0;
    const double hi = to == at::kByte ? 255 : to == at::kChar ? 127 : to == at::kShort ? 32767 : 2147483647.0;
    return {at::clamp(v, lo, hi).to(to)};
}

Outputs runDequantize(const OpCtx& c) {
    at::Tensor x = c.t(0);
    at::Tensor scale = alongAxis(c, c.t(1), x);
    at::Tensor v = x.to(at::kFloat);
    if (c.has(2)) v = v - alongAxis(c, c.t(2), x).to(at::kFloat);
    return {v * scale};
}

Outputs runDynamicQuantize(const OpCtx& c) {
    at::Tensor x = c.t(0).to(at::kFloat);
    at::Tensor lo = at::clamp_max(x.min(), 0), hi = at::clamp_min(x.max(), 0);
    at::Tensor scale = (hi - lo) / 255;
    at::Tensor zp = at::clamp(at::round(-lo / scale), 0, 255);
    at::Tensor y = at::clamp(at::round(x / scale) + zp, 0, 255).to(at::kByte);
    return {y, scale, zp.to(at::kByte)};
}

// ---- constants and generators ----

Outputs runConstant(const OpCtx& c) {
    const at::Device device = c.creationDevice();
    auto ints = [&](const std::vector<int64_t>& v, bool scalar) {
        at::Tensor t = at::tensor(v, at::kLong);
        return scalar ? t.reshape({}) : t;  // integer constants stay on the host, as shape arguments
    };
    auto floats = [&](const std::vector<double>& v, bool scalar) {
        at::Tensor t = at::tensor(v, at::kDouble).to(at::kFloat).to(device);
        return scalar ? t.reshape({}) : t;
    };
    if (c.hasAttr("value_int")) return {ints({c.attrInt("value_int", 0)}, true)};
    if (c.hasAttr("value_ints")) return {ints(c.attrInts("value_ints"), false)};
    if (c.hasAttr("value_float")) return {floats({c.attrFloat("value_float", 0)}, true)};
    if (c.hasAttr("value_floats")) return {floats(c.attrFloats("value_floats"), false)};
    if (c.hasAttr("value")) {
        const at::ScalarType type = scalarTypeOf(c.outDtype(0));
        return {at::full({}, c.attrFloat("value", 0), at::TensorOptions().dtype(at::kDouble)).to(type).to(device)};
    }
    c.fail("has no numeric value (string constants cannot be executed)");
}

Outputs runConstantOfShape(const OpCtx& c) {
    std::vector<int64_t> shape = c.ints(0);
    const at::ScalarType type = scalarTypeOf(c.outDtype(0));
    const double value = c.hasAttr("value") ? c.attrFloat("value", 0) : 0.0;
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    if (!at::isFloatingType(type) && count <= limits::kMaxKnownValueElements)
        return {at::full(shape, value, at::kDouble).to(type)};  // shape math: on the host
    return {at::full(shape, value, at::TensorOptions().dtype(at::kDouble).device(c.creationDevice())).to(type)};
}

std::optional<at::Generator> seededGenerator(const OpCtx& c) {
    if (!c.hasAttr("seed")) return std::nullopt;
    return at::detail::createCPUGenerator(static_cast<uint64_t>(c.attrFloat("seed", 0)));
}

Outputs runRandom(const OpCtx& c) {
    const std::string& type = c.op.type;
    const bool like = type.size() > 4 && type.compare(type.size() - 4, 4, "Like") == 0;
    std::vector<int64_t> shape = like ? sizesOf(c.raw(0)) : c.attrInts("shape");
    const at::Device device = like ? c.raw(0).device() : c.creationDevice();
    std::optional<at::Generator> gen = seededGenerator(c);
    at::Tensor y;
    if (type.rfind("RandomNormal", 0) == 0)
        y = at::normal(c.attrFloat("mean", 0.0), c.attrFloat("scale", 1.0), shape, gen, at::kFloat);
    else
        y = at::empty(shape, at::kFloat).uniform_(c.attrFloat("low", 0.0), c.attrFloat("high", 1.0), gen);
    return {y.to(scalarTypeOf(c.outDtype(0))).to(device)};
}

Outputs runBernoulli(const OpCtx& c) {
    at::Tensor p = c.t(0);
    std::optional<at::Generator> gen = seededGenerator(c);
    at::Tensor y = gen ? at::bernoulli(p.to(at::kCPU).to(at::kFloat), gen).to(p.device()) : at::bernoulli(p);
    return {y.to(scalarTypeOf(c.outDtype(0)))};
}

Outputs runMultinomial(const OpCtx& c) {
    at::Tensor logits = c.t(0);
    at::Tensor y =
        at::multinomial(at::softmax(logits.to(at::kFloat), 1), c.attrInt("sample_size", 1), true, seededGenerator(c));
    return {y.to(scalarTypeOf(c.outDtype(0)))};
}

Outputs runWindow(const OpCtx& c) {
    const int64_t size = c.scalarInt(0);
    const bool periodic = c.attrInt("periodic", 1) != 0;
    at::TensorOptions opts = at::TensorOptions().dtype(at::kDouble).device(c.creationDevice());
    at::Tensor w;
    if (c.op.type == "HannWindow")
        w = at::hann_window(size, periodic, opts);
    else if (c.op.type == "HammingWindow")
        w = at::hamming_window(size, periodic, 25.0 / 46, 21.0 / 46, opts);
    else
        w = at::blackman_window(size, periodic, opts);
    return {w.to(scalarTypeOf(c.outDtype(0)))};
}

}  // namespace

void addTensorLowerings(std::vector<LoweringEntry>& t) {
    t.push_back({"Reshape", runReshape});
    t.push_back({"Shape", runShape});
    t.push_back({"Size", runSize});
    t.push_back({"Flatten", runFlatten});
    t.push_back({"Squeeze", runSqueeze});
    t.push_back({"Unsqueeze", runUnsqueeze});
    t.push_back({"Transpose", runTranspose});
    t.push_back({"Concat", runConcat});
    t.push_back({"Split", runSplit});
    t.push_back({"Expand", runExpand});
    t.push_back({"Tile", runTile});
    t.push_back({"Pad", runPad});
    t.push_back({"SpaceToDepth", runSpaceToDepth});
    t.push_back({"DepthToSpace", runDepthToSpace});
    t.push_back({"Gather", runGather});
    t.push_back({"GatherElements", runGatherElements});
    t.push_back({"GatherND", runGatherND});
    t.push_back({"Slice", runSlice});
    t.push_back({"ScatterND", runScatterND});
    for (const char* type : {"ScatterElements", "Scatter"}) t.push_back({type, runScatterElements});
    t.push_back({"OneHot", runOneHot});
    t.push_back({"TopK", runTopK});
    t.push_back({"NonZero", runNonZero});
    t.push_back({"NonMaxSuppression", runNonMaxSuppression});
    t.push_back({"Unique", runUnique});
    t.push_back({"Compress", runCompress});
    t.push_back({"Trilu", runTrilu});
    t.push_back({"ReverseSequence", runReverseSequence});
    t.push_back({"Range", runRange});
    t.push_back({"EyeLike", runEyeLike});
    for (const char* type : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                             "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
        t.push_back({type, runReduce});
    for (const char* type : {"ArgMax", "ArgMin"}) t.push_back({type, runArg});
    t.push_back({"CumSum", runCumSum});
    for (const char* type : {"Cast", "CastLike"}) t.push_back({type, runCast});
    t.push_back({"QuantizeLinear", runQuantize});
    t.push_back({"DequantizeLinear", runDequantize});
    t.push_back({"DynamicQuantizeLinear", runDynamicQuantize});
    t.push_back({"Constant", runConstant});
    t.push_back({"ConstantOfShape", runConstantOfShape});
    for (const char* type : {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike"})
        t.push_back({type, runRandom});
    t.push_back({"Bernoulli", runBernoulli});
    t.push_back({"Multinomial", runMultinomial});
    for (const char* type : {"HannWindow", "HammingWindow", "BlackmanWindow"}) t.push_back({type, runWindow});
}

}  // namespace ts::torchexec
