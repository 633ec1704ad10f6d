#include "trainscope/core/fine_tuning.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "trainscope/core/errors.h"
#include "trainscope/core/ops.h"

namespace ts {
namespace {

constexpr int64_t kOnnxFloat = 1;  // ONNX's TensorProto FLOAT, Cast's "to"

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// in and out features of a linear layer's weight, or {0, 0} when the op is not one.
std::pair<int64_t, int64_t> linearShape(const Graph& g, const Operation& op) {
    if ((op.type != "MatMul" && op.type != "Gemm") || op.inputs.size() < 2 || op.inputs[1] < 0) return {0, 0};
    const Value& w = g.values[op.inputs[1]];
    if (w.kind != ValueKind::Parameter || w.shape.size() != 2 || !w.shape[0].isConstant() || !w.shape[1].isConstant() ||
        !isFloating(w.dtype))
        return {0, 0};
    if (op.type == "Gemm" && op.attrInt("transA", 0) != 0) return {0, 0};
    const int64_t rows = w.shape[0].constant(), cols = w.shape[1].constant();
    const bool transposed = op.type == "Gemm" && op.attrInt("transB", 0) != 0;  // nn.Linear's [out, in]
    return transposed ? std::pair{cols, rows} : std::pair{rows, cols};
}

}  // namespace

std::string blockOf(const std::string& path) {
    size_t start = 0;
    while (start < path.size()) {
        size_t end = path.find('.', start);
        if (end == std::string::npos) end = path.size();
        if (end > start && std::all_of(path.begin() + long(start), path.begin() + long(end),
                                       [](unsigned char c) { return std::isdigit(c) != 0; }))
            return path.substr(0, end);
        start = end + 1;
    }
    return "";
}

void trainOnly(Graph& g, const std::vector<std::string>& trainable, const std::string& optionName) {
    for (Value& v : g.values)
        if (v.kind == ValueKind::Parameter) v.frozen = true;
    trainAlso(g, trainable, optionName);
}

void trainAlso(Graph& g, const std::vector<std::string>& trainable, const std::string& optionName, bool asCopies) {
    for (const std::string& pattern : trainable) {
        bool matched = false;
        for (Value& v : g.values)
            if (v.kind == ValueKind::Parameter && contains(v.name, pattern)) {
                v.frozen = v.nf4;  // a 4-bit weight cannot train
                v.besideFrozenOriginal = asCopies && !v.frozen && !v.adapter;
                matched = true;
            }
        if (!matched) throw ModelError(optionName, "no parameter of " + g.name + " matches '" + pattern + "'");
    }
}

std::vector<int> loraTargets(const Graph& g, const LoraOptions& o) {
    std::vector<int> out;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const Operation& op = g.ops[i];
        // A sparse block's router is a bare weight in transformers 5, no nn.Linear: neither PEFT nor
        // bitsandbytes touches it.
        if (linearShape(g, op).first == 0 || op.attrInt("router", 0) != 0) continue;
        bool wanted = o.targets.empty() && !blockOf(op.modulePath).empty();
        for (const std::string& t : o.targets) wanted |= contains(op.modulePath, t);
        if (wanted) out.push_back(int(i));
    }
    return out;
}

Graph withLora(const Graph& g, const LoraOptions& o) {
    if (o.rank < 1 || o.rank > (int64_t(1) << 20))
        throw ModelError("--lora", "the LoRA rank must be from 1 to 2^20, got " + std::to_string(o.rank));
    for (const std::string& t : o.targets)
        if (t.empty()) throw ModelError("--lora-targets", "an empty target name");
    if (!(o.dropout >= 0 && o.dropout < 1)) {
        std::ostringstream got;
        got << o.dropout;
        throw ModelError("--lora-dropout", "the LoRA dropout must be from 0 to below 1, got " + got.str());
    }
    const std::vector<int> targets = loraTargets(g, o);
    for (const std::string& t : o.targets) {
        bool used = false;
        for (int i : targets) used |= contains(g.ops[size_t(i)].modulePath, t);
        if (!used) throw ModelError("--lora-targets", "no linear layer of " + g.name + " matches '" + t + "'");
    }
    if (targets.empty())
        throw ModelError("--lora", "no linear layer of " + g.name +
                                       " lies inside numbered transformer blocks; "
                                       "name the layers with --lora-targets");

    Graph out;
    out.name = g.name;
    out.source = g.source;
    out.format = g.format;
    out.defaults = g.defaults;
    out.shard = g.shard;
    for (Value v : g.values) {
        if (v.kind == ValueKind::Parameter) v.frozen = true;
        if (v.kind == ValueKind::Activation) v.producer = -1;
        out.addValue(std::move(v));
    }
    out.inputs = g.inputs;
    out.outputs = g.outputs;
    if (o.qlora) {
        // bitsandbytes' load_in_4bit quantises the base model's linear layers, adapted or not (all but
        // the output layer: those of the blocks), and with them a sparse block's experts.
        LoraOptions all;
        all.rank = o.rank;
        for (int i : loraTargets(g, all)) out.values[size_t(g.ops[size_t(i)].inputs[1])].nf4 = true;
        for (const Operation& op : g.ops)
            if (op.type == "MixtureOfExperts" && !blockOf(op.modulePath).empty())
                for (size_t k = 2; k < op.inputs.size(); ++k) out.values[size_t(op.inputs[k])].nf4 = true;
    }
    const double scale = (o.alpha > 0 ? o.alpha : double(o.rank)) / double(o.rank);
    const int scaleValue = [&] {
        Value c;
        c.name = "lora.scaling";
        c.kind = ValueKind::Constant;
        c.floatData = std::vector<double>{scale};
        return out.addValue(std::move(c));
    }();
    auto addOp = [&](const std::string& type, const std::string& module, std::vector<int> inputs, int output,
                     std::map<std::string, Attribute> attrs = {}) {
        Operation op;
        op.type = type;
        op.modulePath = module;
        op.name = module + "/" + type;
        op.inputs = std::move(inputs);
        op.attrs = std::move(attrs);
        if (output < 0) {
            Value v;
            v.name = op.name + ":out0";
            output = out.addValue(std::move(v));
        }
        op.outputs = {output};
        inferShapes(out, out.addOperation(std::move(op)));
        return output;
    };
    size_t next = 0;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        Operation op = g.ops[i];
        if (next >= targets.size() || targets[next] != int(i)) {
            out.addOperation(std::move(op));
            continue;
        }
        ++next;
        const auto [in, features] = linearShape(g, op);
        const int x = op.inputs[0];
        const int y = op.outputs[0];
        Value base = g.values[size_t(y)];
        base.name += ":base";
        base.producer = -1;
        op.outputs[0] = out.addValue(std::move(base));
        const int baseOut = op.outputs[0];
        const std::string module = op.modulePath;
        out.addOperation(std::move(op));
        auto adapter = [&](const std::string& name, int64_t rows, int64_t cols) {
            Value w;
            w.name = module + "." + name + ".default.weight";
            w.kind = ValueKind::Parameter;
            w.adapter = true;
            w.keptInFp32 = o.fp32Adapters;
            w.shape = {Dim(rows), Dim(cols)};
            return out.addValue(std::move(w));
        };
        const int a = adapter("lora_A", in, o.rank);
        const int b = adapter("lora_B", o.rank, features);
        // PEFT's forward: x.to(lora_A's dtype), dropout, A, B, scaling, the sum with the base's output,
        // cast back to the base output's dtype (CastLike). With fp32 adapters in a bf16 model the
        // Trainer's bf16 autocast runs A and B in bf16: the fp32 dropout's output is cast down again
        // (the copy A saves). In an fp32 model none of the casts does anything.
        const std::map<std::string, Attribute> toFp32{{"to", kOnnxFloat}, {"dtype_role", std::string("fp32")}};
        const std::map<std::string, Attribute> toModel{{"to", kOnnxFloat}, {"dtype_role", std::string("model")}};
        int h = o.fp32Adapters ? addOp("Cast", module + ".lora", {x}, -1, toFp32) : x;
        if (o.dropout > 0)
            h = addOp("Dropout", module + ".lora_dropout.default", {h}, -1,
                      {{"ratio", o.dropout}, {"training_mode", int64_t{1}}});
        if (o.fp32Adapters) h = addOp("Cast", module + ".lora_A.default", {h}, -1, toModel);
        h = addOp("MatMul", module + ".lora_A.default", {h, a}, -1);
        h = addOp("MatMul", module + ".lora_B.default", {h, b}, -1);
        h = addOp("Mul", module + ".lora", {h, scaleValue}, -1);
        if (o.fp32Adapters) {
            h = addOp("Add", module + ".lora", {baseOut, h}, -1);
            addOp("CastLike", module + ".lora", {h, baseOut}, y);
        } else {
            addOp("Add", module + ".lora", {baseOut, h}, y);
        }
    }
    out.validate();
    return out;
}

}  // namespace ts
