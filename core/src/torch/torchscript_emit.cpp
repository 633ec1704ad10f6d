// The TorchScript importer's translation of one executed ATen (or prim::) operation into canonical
// ONNX-style operations, with the attributes and constant inputs each canonical operator expects.
#include <set>

#include "torchscript_import.h"

namespace ts::torchscript_import {

namespace {
const std::map<std::string, std::string>& unaryOps() {
    static const std::map<std::string, std::string> table{
        {"relu", "Relu"},       {"sigmoid", "Sigmoid"},     {"tanh", "Tanh"},         {"exp", "Exp"},
        {"log", "Log"},         {"sqrt", "Sqrt"},           {"neg", "Neg"},           {"abs", "Abs"},
        {"erf", "Erf"},         {"reciprocal", "Reciprocal"}, {"floor", "Floor"},     {"ceil", "Ceil"},
        {"sin", "Sin"},         {"cos", "Cos"},             {"logical_not", "Not"},   {"bitwise_not", "Not"},
        {"hardswish", "HardSwish"}, {"sign", "Sign"},       {"contiguous", "Identity"}, {"clone", "Identity"},
        {"detach", "Identity"}, {"alias", "Identity"},      {"lift_fresh", "Identity"}};
    return table;
}
const std::map<std::string, std::string>& binaryOps() {
    static const std::map<std::string, std::string> table{
        {"add", "Add"},       {"sub", "Sub"},         {"mul", "Mul"},          {"div", "Div"},
        {"true_divide", "Div"}, {"pow", "Pow"},       {"eq", "Equal"},         {"lt", "Less"},
        {"gt", "Greater"},    {"le", "LessOrEqual"},  {"ge", "GreaterOrEqual"}, {"maximum", "Max"},
        {"minimum", "Min"},   {"remainder", "Mod"},   {"fmod", "Mod"},         {"floor_divide", "Div"},
        {"__and__", "And"},   {"bitwise_and", "And"}, {"logical_and", "And"},  {"__or__", "Or"},
        {"bitwise_or", "Or"}, {"logical_or", "Or"},   {"diff", "Sub"}};
    return table;
}
const std::set<std::string>& creationOps() {
    static const std::set<std::string> names{
        "zeros", "ones", "full", "empty", "rand", "randn", "randint", "arange", "zeros_like", "ones_like",
        "full_like", "empty_like", "rand_like", "randn_like", "new_zeros", "new_ones", "new_full", "new_empty",
        "scalar_tensor", "tensor", "linspace", "eye"};
    return names;
}
const std::set<std::string>& reshapeOps() {
    static const std::set<std::string> names{"view", "reshape", "_unsafe_view", "squeeze", "unsqueeze", "view_as",
                                             "reshape_as", "flatten", "unflatten", "_reshape_alias"};
    return names;
}
}  // namespace

void TorchScriptImporter::emit(tj::Node* n, const std::vector<IValue>& in, const std::vector<IValue>& out, int step) {
    std::string name = n->kind().toUnqualString();
    const bool aten = n->kind().is_aten();
    const bool inplace = name.size() > 1 && name.back() == '_' && name.rfind("__", 0) != 0;
    if (inplace) name.pop_back();
    const std::string label = modulePath(n) + "/" + name;
    auto T = [&](size_t i) { return i < in.size() ? tensorInput(n, i, in[i]) : -1; };
    auto opt = [&](size_t i) { return i < in.size() && !in[i].isNone() ? T(i) : -1; };
    auto intList = [&](size_t i) -> std::vector<int64_t> {
        if (in[i].isInt()) return {in[i].toInt()};
        return in[i].toIntVector();
    };
    const at::Tensor firstOut = out[0].isTensor() ? out[0].toTensor() : at::Tensor();
    const int64_t outRank = firstOut.defined() ? firstOut.dim() : 0;
    const int64_t inRank = !in.empty() && in[0].isTensor() ? in[0].toTensor().dim() : 0;
    auto axis = [&](int64_t a, int64_t rank) { return a < 0 ? a + rank : a; };
    auto bind = [&](int opIndex) {
        Handle h{g_.ops[opIndex].outputs.back(), {}};
        handles_[n->output(0)] = h;
        if (inplace) handles_[n->input(0)] = h;
    };
    auto op = [&](const std::string& type, std::vector<int> inputs, std::map<std::string, Attribute> attrs = {}) {
        int idx = addOp(type, std::move(inputs), 1, n, step, std::move(attrs));
        bind(idx);
        return idx;
    };
    auto shapeConst = [&](int opIndex) {  // filled with the op's fitted output shape at the end
        int c = constInts(label, "shape", std::vector<int64_t>(static_cast<size_t>(outRank), 0));
        shapeConstants_.emplace_back(c, g_.ops[opIndex].outputs.back());
        return c;
    };
    auto spatialList = [&](size_t i, size_t count, int64_t def) {
        std::vector<int64_t> v = in[i].isNone() ? std::vector<int64_t>{} : intList(i);
        if (v.empty()) v.assign(count, def);
        if (v.size() == 1) v.assign(count, v[0]);
        return v;
    };
    auto doubled = [](std::vector<int64_t> p) {
        std::vector<int64_t> r = p;
        r.insert(r.end(), p.begin(), p.end());
        return r;
    };

    if (!aten) unsupported(n);
    if (auto u = unaryOps().find(name); u != unaryOps().end()) {
        op(u->second, {T(0)});
    } else if (auto b = binaryOps().find(name); b != binaryOps().end() && in.size() >= 2) {
        op(b->second, {T(0), T(1)});
    } else if (name == "rsub") {
        op("Sub", {T(1), T(0)});
    } else if (name == "ne") {
        int eq = addOp("Equal", {T(0), T(1)}, 1, n, step);
        op("Not", {g_.ops[eq].outputs[0]});
    } else if (name == "where" && in.size() == 3) {
        op("Where", {T(0), T(1), T(2)});
    } else if (name == "masked_fill") {
        op("Where", {T(1), T(2), T(0)});
    } else if (name == "_convolution" || name == "conv1d" || name == "conv2d" || name == "conv3d" ||
               name == "conv_transpose1d" || name == "conv_transpose2d" || name == "conv_transpose3d") {
        const at::Tensor w = in[1].toTensor();
        const size_t sp = static_cast<size_t>(w.dim() - 2);
        const bool full = name == "_convolution";
        const bool transposed = full ? in[6].toBool() : name.rfind("conv_transpose", 0) == 0;
        std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
        std::vector<int64_t> strides = spatialList(3, sp, 1);
        std::vector<int64_t> dilations = spatialList(full || !transposed ? 5 : 7, sp, 1);
        int64_t groups = full ? in[8].toInt() : transposed ? in[6].toInt() : in[6].toInt();
        std::vector<int64_t> pads;
        if (in[4].isString()) {  // padding="same" / "valid"
            std::vector<int64_t> begin(sp, 0), end(sp, 0);
            if (in[4].toStringRef() == "same")
                for (size_t i = 0; i < sp; ++i) {
                    int64_t total = dilations[i] * (kernel[i] - 1);
                    begin[i] = total / 2;
                    end[i] = total - begin[i];
                }
            pads = begin;
            pads.insert(pads.end(), end.begin(), end.end());
        } else {
            pads = doubled(spatialList(4, sp, 0));
        }
        std::map<std::string, Attribute> attrs{{"kernel_shape", kernel}, {"strides", strides}, {"pads", pads},
                                               {"dilations", dilations}, {"group", groups}};
        std::vector<int> inputs{T(0), T(1)};
        if (!in[2].isNone()) inputs.push_back(T(2));
        if (transposed) attrs["output_padding"] = spatialList(full ? 7 : 5, sp, 0);
        op(transposed ? "ConvTranspose" : "Conv", inputs, attrs);
    } else if (name == "linear") {
        const at::Tensor w = in[1].toTensor();
        if (inRank == 2) {
            std::vector<int> inputs{T(0), T(1)};
            if (!in[2].isNone()) inputs.push_back(T(2));
            op("Gemm", inputs, {{"transB", int64_t(1)}});
        } else {  // as the ONNX exporter: MatMul with the transposed weight, then the bias
            int tr = addOp("Transpose", {T(1)}, 1, n, step, {{"perm", std::vector<int64_t>{1, 0}}});
            int wt = g_.ops[tr].outputs[0];
            origin_[wt] = {};
            g_.values[wt].shape = {Dim(w.size(1)), Dim(w.size(0))};
            int mm = op("MatMul", {T(0), wt});
            if (!in[2].isNone()) op("Add", {g_.ops[mm].outputs[0], T(2)});
        }
    } else if (name == "addmm") {
        op("Gemm", {T(1), T(2), T(0)}, {{"beta", in[3].toScalar().toDouble()}, {"alpha", in[4].toScalar().toDouble()}});
    } else if (name == "matmul" || name == "bmm" || name == "mm") {
        op("MatMul", {T(0), T(1)});
    } else if (name == "einsum") {
        std::vector<int> inputs;
        for (const Handle& h : handles_[n->input(1)].items) inputs.push_back(h.value);
        op("Einsum", inputs, {{"equation", in[0].toStringRef()}});
    } else if (name == "batch_norm" || name == "instance_norm") {
        const int64_t c = in[0].toTensor().size(1);
        auto orConst = [&](size_t i, const char* what) {
            return in[i].isNone() ? constShaped(label, what, DType::Float32, {Dim(c)}) : T(i);
        };
        if (name == "batch_norm") {
            op("BatchNormalization", {T(0), orConst(1, "scale"), orConst(2, "bias"), orConst(3, "mean"), orConst(4, "var")},
               {{"epsilon", in[7].toDouble()}, {"momentum", 1.0 - in[6].toDouble()},
                {"training_mode", int64_t(in[5].toBool() ? 1 : 0)}});
        } else {
            op("InstanceNormalization", {T(0), orConst(1, "scale"), orConst(2, "bias")}, {{"epsilon", in[7].toDouble()}});
        }
    } else if (name == "layer_norm") {
        std::vector<int64_t> normalized = intList(1);
        Shape ns;
        for (int64_t d : normalized) ns.push_back(Dim(d));
        int scale = in[2].isNone() ? constShaped(label, "scale", DType::Float32, ns) : T(2);
        std::vector<int> inputs{T(0), scale};
        if (!in[3].isNone()) inputs.push_back(T(3));
        op("LayerNormalization", inputs,
           {{"axis", -static_cast<int64_t>(normalized.size())}, {"epsilon", in[4].toDouble()}});
    } else if (name == "group_norm") {
        int64_t c = in[0].toTensor().size(1);
        int scale = in[2].isNone() ? constShaped(label, "scale", DType::Float32, {Dim(c)}) : T(2);
        int bias = in[3].isNone() ? constShaped(label, "bias", DType::Float32, {Dim(c)}) : T(3);
        op("GroupNormalization", {T(0), scale, bias}, {{"num_groups", in[1].toInt()}, {"epsilon", in[4].toDouble()}});
    } else if (name == "max_pool1d" || name == "max_pool2d" || name == "max_pool3d") {
        const size_t sp = static_cast<size_t>(inRank - 2);
        std::vector<int64_t> kernel = spatialList(1, sp, 1);
        std::vector<int64_t> strides = spatialList(2, sp, 0);
        if (in[2].isNone() || in[2].toIntVector().empty()) strides = kernel;
        op("MaxPool", {T(0)},
           {{"kernel_shape", kernel}, {"strides", strides}, {"pads", doubled(spatialList(3, sp, 0))},
            {"dilations", spatialList(4, sp, 1)}, {"ceil_mode", int64_t(in[5].toBool() ? 1 : 0)}});
    } else if (name == "avg_pool1d" || name == "avg_pool2d" || name == "avg_pool3d") {
        const size_t sp = static_cast<size_t>(inRank - 2);
        std::vector<int64_t> kernel = spatialList(1, sp, 1);
        std::vector<int64_t> strides = spatialList(2, sp, 0);
        if (in[2].isNone() || in[2].toIntVector().empty()) strides = kernel;
        op("AveragePool", {T(0)},
           {{"kernel_shape", kernel}, {"strides", strides}, {"pads", doubled(spatialList(3, sp, 0))},
            {"ceil_mode", int64_t(in[4].toBool() ? 1 : 0)}, {"count_include_pad", int64_t(in[5].toBool() ? 1 : 0)}});
    } else if (name == "adaptive_avg_pool1d" || name == "adaptive_avg_pool2d" || name == "adaptive_avg_pool3d" ||
               name == "adaptive_max_pool2d") {
        const at::Tensor x = in[0].toTensor();
        const size_t sp = static_cast<size_t>(x.dim() - 2);
        std::vector<int64_t> target = spatialList(1, sp, 1);
        bool global = true, divisible = true;
        std::vector<int64_t> kernel;
        for (size_t i = 0; i < sp; ++i) {
            int64_t size = x.size(static_cast<int64_t>(i) + 2);
            global &= target[i] == 1;
            divisible &= target[i] > 0 && size % target[i] == 0;
            kernel.push_back(target[i] > 0 ? size / target[i] : 1);
        }
        const bool isMax = name == "adaptive_max_pool2d";
        if (global) op(isMax ? "GlobalMaxPool" : "GlobalAveragePool", {T(0)});
        else if (divisible)
            op(isMax ? "MaxPool" : "AveragePool", {T(0)}, {{"kernel_shape", kernel}, {"strides", kernel}});
        else
            throw ImportError(name + " from " + c10::str(x.sizes()) + " to " + c10::str(target) +
                              " is not a plain pooling (module '" + modulePath(n) +
                              "'); try an input size that is a multiple of the output size");
    } else if (name == "softmax" || name == "log_softmax") {
        op(name == "softmax" ? "Softmax" : "LogSoftmax", {T(0)}, {{"axis", in[1].toInt()}});
    } else if (name == "gelu") {
        op("Gelu", {T(0)}, {{"approximate", in.size() > 1 && in[1].isString() ? in[1].toStringRef() : "none"}});
    } else if (name == "silu") {
        int sig = addOp("Sigmoid", {T(0)}, 1, n, step);
        op("Mul", {T(0), g_.ops[sig].outputs[0]});
    } else if (name == "hardtanh" || name == "relu6" || name == "clamp" || name == "clip" || name == "clamp_min" ||
               name == "clamp_max") {
        int lo = -1, hi = -1;
        if (name == "relu6") lo = constFloat(label, "min", 0), hi = constFloat(label, "max", 6);
        else if (name == "clamp_max") hi = opt(1);
        else lo = opt(1), hi = name == "clamp_min" ? -1 : opt(2);
        op("Clip", {T(0), lo, hi});
    } else if (name == "leaky_relu") {
        op("LeakyRelu", {T(0)}, {{"alpha", in.size() > 1 ? in[1].toScalar().toDouble() : 0.01}});
    } else if (name == "elu") {
        op("Elu", {T(0)}, {{"alpha", in.size() > 1 ? in[1].toScalar().toDouble() : 1.0}});
    } else if (name == "hardsigmoid") {
        op("HardSigmoid", {T(0)}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
    } else if (name == "dropout" || name == "feature_dropout" || name == "alpha_dropout" ||
               name == "feature_alpha_dropout") {
        int ratio = constFloat(label, "ratio", in[1].toDouble());
        int training = constInts(label, "training_mode", {in[2].toBool() ? 1 : 0}, true);
        g_.values[training].dtype = DType::Bool;
        op("Dropout", {T(0), ratio, training});
    } else if (name == "flatten" && inRank >= 2 && in[1].toInt() == 1 && axis(in[2].toInt(), inRank) == inRank - 1) {
        op("Flatten", {T(0)}, {{"axis", int64_t(1)}});
    } else if (reshapeOps().count(name)) {
        int r = addOp("Reshape", {T(0), -1}, 1, n, step);
        g_.ops[r].inputs[1] = shapeConst(r);
        bind(r);
    } else if (name == "expand" || name == "expand_as" || name == "broadcast_to") {
        int r = addOp("Expand", {T(0), -1}, 1, n, step);
        g_.ops[r].inputs[1] = shapeConst(r);
        bind(r);
    } else if (creationOps().count(name)) {
        int r = addOp("ConstantOfShape", {-1}, 1, n, step);
        g_.ops[r].inputs[0] = shapeConst(r);
        bind(r);
    } else if (name == "permute") {
        std::vector<int64_t> perm = intList(1);
        for (int64_t& p : perm) p = axis(p, inRank);
        op("Transpose", {T(0)}, {{"perm", perm}});
    } else if (name == "transpose" || name == "t" || name == "numpy_T") {
        std::vector<int64_t> perm(static_cast<size_t>(inRank));
        for (int64_t i = 0; i < inRank; ++i) perm[i] = i;
        if (name == "transpose") std::swap(perm[axis(in[1].toInt(), inRank)], perm[axis(in[2].toInt(), inRank)]);
        else std::reverse(perm.begin(), perm.end());
        op("Transpose", {T(0)}, {{"perm", perm}});
    } else if (name == "cat" || name == "concat" || name == "stack") {
        std::vector<int> inputs;
        const Handle list = handles_[n->input(0)];
        const auto tensors = in[0].toTensorVector();
        for (size_t i = 0; i < tensors.size(); ++i)
            inputs.push_back(i < list.items.size() && list.items[i].value >= 0
                                 ? list.items[i].value
                                 : constantTensor(tensors[i], label + "/const"));
        op("Concat", inputs, {{"axis", axis(in[1].toInt(), outRank)}});
    } else if (name == "split" || name == "split_with_sizes" || name == "chunk" || name == "unsafe_chunk" ||
               name == "unsafe_split" || name == "unbind" || name == "tensor_split") {
        const auto parts = out[0].toTensorVector();
        int64_t dim = axis(name == "unbind" ? (in.size() > 1 ? in[1].toInt() : 0) : in[2].toInt(), inRank);
        std::vector<int64_t> sizes;
        for (const at::Tensor& p : parts) sizes.push_back(name == "unbind" ? 1 : p.size(dim));
        int s = addOp("Split", {T(0), constInts(label, "split", sizes)}, static_cast<int>(parts.size()), n, step,
                      {{"axis", dim}});
        Handle h;
        for (int v : g_.ops[s].outputs) h.items.push_back(Handle{v, {}});
        handles_[n->output(0)] = h;
    } else if (name == "slice" || name == "narrow") {
        int64_t dim = axis(in[1].toInt(), inRank);
        const std::vector<int64_t> bounds = followedInts(n, in);  // start, end; refitted after every run
        int64_t stride = name == "slice" && in.size() > 4 ? in[4].toInt() : 1;
        const int starts = constInts(label, "starts", {bounds.at(0)}), ends = constInts(label, "ends", {bounds.at(1)});
        followedConstants_.push_back({starts, step, 1, 0});  // slot 1: after the one output's sizes
        followedConstants_.push_back({ends, step, 1, 1});
        op("Slice", {T(0), starts, ends, constInts(label, "axes", {dim}), constInts(label, "steps", {stride})});
    } else if (name == "select") {
        op("Gather", {T(0), constInts(label, "index", {in[2].toInt()}, true)}, {{"axis", axis(in[1].toInt(), inRank)}});
    } else if (name == "index_select") {
        op("Gather", {T(0), T(2)}, {{"axis", axis(in[1].toInt(), inRank)}});
    } else if (name == "embedding") {
        op("Gather", {T(0), T(1)}, {{"axis", int64_t(0)}});
    } else if (name == "gather") {
        op("GatherElements", {T(0), T(2)}, {{"axis", axis(in[1].toInt(), inRank)}});
    } else if (name == "index") {  // x[..., idx]: the first index tensor, as a Gather on its axis
        const auto indices = in[1].toListRef();
        const Handle list = handles_[n->input(1)];
        for (size_t d = 0; d < indices.size(); ++d) {
            if (indices[d].isNone()) continue;
            int idx = d < list.items.size() && list.items[d].value >= 0
                          ? list.items[d].value
                          : constantTensor(indices[d].toTensor(), label + "/index");
            op("Gather", {T(0), idx}, {{"axis", static_cast<int64_t>(d)}});
            break;
        }
    } else if (name == "to" || name == "type_as" || name == "float" || name == "long" || name == "int" ||
               name == "half" || name == "bool" || name == "type" || name == "double") {
        DType from = dtypeOf(in[0].toTensor().scalar_type()), to = dtypeOf(firstOut.scalar_type());
        if (from == to) op("Identity", {T(0)});
        else op("Cast", {T(0)}, {{"to", int64_t(onnxDtypeCode(to))}});
    } else if (name == "mean" || name == "sum" || name == "amax" || name == "amin") {
        std::vector<int64_t> axes;
        if (in.size() > 1 && !in[1].isNone() && (in[1].isIntList() || in[1].isInt())) axes = intList(1);
        if (axes.empty())
            for (int64_t i = 0; i < inRank; ++i) axes.push_back(i);
        for (int64_t& a : axes) a = axis(a, inRank);
        int64_t keep = in.size() > 2 && in[2].isBool() && in[2].toBool() ? 1 : 0;
        const std::string type = name == "mean" ? "ReduceMean" : name == "sum" ? "ReduceSum" : name == "amax" ? "ReduceMax" : "ReduceMin";
        if (type == "ReduceSum") op(type, {T(0), constInts(label, "axes", axes)}, {{"keepdims", keep}});
        else op(type, {T(0)}, {{"axes", axes}, {"keepdims", keep}});
    } else if (name == "cumsum") {
        op("CumSum", {T(0), constInts(label, "axis", {in[1].toInt()}, true)});
    } else if (name == "tril" || name == "triu") {
        op("Trilu", {T(0), constInts(label, "k", {in.size() > 1 ? in[1].toInt() : 0}, true)},
           {{"upper", int64_t(name == "triu" ? 1 : 0)}});
    } else if (name == "pad" || name == "constant_pad_nd") {
        std::vector<int64_t> torchPads = intList(1), pads(static_cast<size_t>(2 * inRank), 0);
        for (size_t i = 0; i + 1 < torchPads.size() + 1 && i / 2 < static_cast<size_t>(inRank); i += 2) {
            size_t ax = static_cast<size_t>(inRank) - 1 - i / 2;
            pads[ax] = torchPads[i];
            pads[ax + static_cast<size_t>(inRank)] = torchPads[i + 1];
        }
        op("Pad", {T(0), constInts(label, "pads", pads)});
    } else if (name == "repeat") {
        op("Tile", {T(0), constInts(label, "repeats", intList(1))});
    } else {
        unsupported(n);
    }
}

}  // namespace ts::torchscript_import
