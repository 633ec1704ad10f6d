// The ONNX importer's weights: which initializers (and weight inputs of export_params=False files)
// are PyTorch parameters, buffers or constants, so that the parameter count equals
// sum(p.numel() for p in model.parameters()).
//
// Files without torch.export metadata (the legacy exporter, other tools): float initializers used as
// tensors are parameters ("layer1.0.conv1.weight"), BatchNorm running statistics buffers, integer and
// scalar initializers constants (small ones keep their contents for shape math). Torch deduplicates
// equal initializers behind Identity nodes named after the original parameter; those become
// separate parameters again.
//
// Files of the torch.export-based exporter (onnx_torch_export.h) say what each initializer is:
// - an initializer named by a PARAMETER target is that parameter, a BUFFER target a buffer;
// - an initializer the exporter's optimizer folded from exactly one parameter is a view of it: the
//   transposed weight of a linear layer (its shape is the parameter's, transposed: the parameter
//   value takes it), Gemma's 1 + weight, a class token expanded to the batch ("expand", leading size
//   the input's batch: the parameter has 1 there and an Expand restores the batch, kept symbolic);
//   when the parameter itself is also in the file (tied weights), a Reshape view of it, so that it
//   is counted once and still gets its gradient;
// - every other initializer (rotary tables folded from inv_freq, causal masks, shape vectors, folded
//   scalars) is a constant;
// - the optimizer merges initializers of equal contents (all-ones norm weights, all-zero biases of
//   a freshly built model) into one, and drops a convolution's all-zero bias; the FX node each ONNX
//   node came from still names the parameters it read, which become separate parameters again
//   (recoverMergedParameters).
#include "importers/onnx_graph_builder.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/ops.h"

namespace ts::onnximport {
namespace {

ValueKind classifyWeight(const std::string& name, DType dtype, const Shape& shape, uint8_t uses) {
    if (!isFloating(dtype)) return ValueKind::Constant;
    if (uses & kStats) return ValueKind::Buffer;
    if (!(uses & kTensor)) return ValueKind::Constant;
    // Scalars that are not state_dict entries are folded constants (attention scales, epsilons).
    if (numel(shape) == Dim(1) && !looksLikeStateDictName(name) && !(uses & kWeightSlot)) return ValueKind::Constant;
    return ValueKind::Parameter;
}

Value valueOf(const std::string& name, TensorInfo info) {
    Value v;
    v.name = name;
    v.dtype = info.dtype;
    v.shape = std::move(info.shape);
    v.intData = std::move(info.ints);
    v.floatData = std::move(info.floats);
    return v;
}

}  // namespace

uint8_t useOf(const std::string& op, size_t i) {
    if (i == 0) return kTensor;
    static const std::unordered_set<std::string> argumentOps{"Reshape",
                                                             "Expand",
                                                             "Tile",
                                                             "Slice",
                                                             "Squeeze",
                                                             "Unsqueeze",
                                                             "Split",
                                                             "TopK",
                                                             "OneHot",
                                                             "Range",
                                                             "ConstantOfShape",
                                                             "Resize",
                                                             "Upsample",
                                                             "Pad",
                                                             "Clip",
                                                             "Dropout",
                                                             "ReduceSum",
                                                             "ReduceMean",
                                                             "ReduceMax",
                                                             "ReduceMin",
                                                             "ReduceProd",
                                                             "ReduceL1",
                                                             "ReduceL2",
                                                             "ReduceLogSum",
                                                             "ReduceLogSumExp",
                                                             "ReduceSumSquare",
                                                             "CumSum",
                                                             "Trilu",
                                                             "NonMaxSuppression",
                                                             "Pow"};
    if (op == "BatchNormalization") return i >= 3 ? kStats : kTensor | kWeightSlot;
    if (argumentOps.count(op)) return kArgument;
    if (op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul" || op == "LayerNormalization" ||
        op == "InstanceNormalization" || op == "GroupNormalization" || op == "PRelu" || op == "LSTM" || op == "GRU" ||
        op == "RNN")
        return kTensor | kWeightSlot;
    return kTensor;
}

int OnnxGraphBuilder::valueFor(const std::string& name, const std::string& userLabel, const std::string& userPath) {
    if (auto it = aliases_.find(name); it != aliases_.end()) return it->second;
    int idx = g_.findValue(name);
    if (idx >= 0) return idx;
    if (auto it = initializers_.find(name); it != initializers_.end())
        return export_.present ? addExportedInitializer(name, *it->second, userPath)
                               : addSourceValue(name, it->second, nullptr);
    if (auto it = inputs_.find(name); it != inputs_.end()) return addSourceValue(name, nullptr, it->second);
    throw OnnxProblem(userLabel + " uses '" + name + "' before it is produced");
}

// Initializers and weight inputs become values on first use (unused ones are ignored).
int OnnxGraphBuilder::addSourceValue(const std::string& name, const onnx::TensorProto* init,
                                     const onnx::ValueInfoProto* input) {
    Value v;
    if (init) {
        v = valueOf(name, decodeTensor(*init, "initializer '" + name + "'"));
    } else {
        v.name = name;
        const auto& tt = input->type().tensor_type();
        v.dtype = dtypeFromOnnx(tt.elem_type());
        for (const auto& d : tt.shape().dim()) v.shape.push_back(Dim(d.dim_value()));
    }
    auto it = uses_.find(name);
    v.kind = classifyWeight(name, v.dtype, v.shape, it == uses_.end() ? 0 : it->second);
    if (v.kind == ValueKind::Parameter && init && layerInputInitializers_.count(name)) v.kind = ValueKind::Buffer;
    if (v.kind != ValueKind::Constant) v.floatData.reset();  // weights' data is never kept
    return g_.addValue(std::move(v));
}

int OnnxGraphBuilder::addExportedInitializer(const std::string& name, const onnx::TensorProto& init,
                                             const std::string& userPath) {
    Value v = valueOf(name, decodeTensor(init, "initializer '" + name + "'"));
    std::optional<ValueKind> kind;
    if (auto it = export_.kinds.find(name); it != export_.kinds.end())
        kind = it->second;
    else if (auto vi = export_.valueInfoKinds.find(name); vi != export_.valueInfoKinds.end())
        kind = vi->second;
    bool floating = isFloating(v.dtype);
    if (kind == ValueKind::Parameter && floating) return parameterValue(name, v);
    if (kind == ValueKind::Buffer && floating) {
        v.kind = ValueKind::Buffer;
        v.floatData.reset();
        return g_.addValue(std::move(v));
    }
    std::vector<std::string> folded = kind ? std::vector<std::string>{} : export_.foldedParameters(name);
    if (floating && folded.size() == 1 && foldIsLayerOfBuffer(name, folded[0])) {
        // What a layer computed from its weight and a buffer (Swin V2's position-bias MLP over its
        // coordinate table): none of the weight's elements, whose size the file does not give.
        if (!parameterValues_.count(folded[0]) && !initializers_.count(folded[0]))
            g_.notes.push_back("parameter '" + folded[0] + "' is not in the file: the exporter folded the layer it " +
                               "weighs, run on a buffer, into the constant '" + name + "' " + shapeStr(v.shape) +
                               "; not counted (export with optimize=False for the whole parameter)");
        v.kind = ValueKind::Constant;
        v.floatData.reset();
        return g_.addValue(std::move(v));
    }
    if (floating && folded.size() == 1 && export_.foldGathers(name)) return gatheredParameter(folded[0], v, userPath);
    if (floating && folded.size() == 1) {
        // A class token expanded to the input's batch: the parameter holds one row.
        bool expandsBatch =
            name.rfind("expand", 0) == 0 && inputBatch_ > 1 && !v.shape.empty() && v.shape[0] == Dim(inputBatch_);
        Value like = v;
        if (expandsBatch) like.shape[0] = Dim(1);
        int parameter = parameterValue(folded[0], like);
        if (numel(g_.values[size_t(parameter)].shape) == numel(like.shape))
            return viewOfParameter(parameter, v, expandsBatch, userPath);
        return gatheredParameter(folded[0], v, userPath);
    }
    if (floating && folded.size() > 1) {
        v.kind = ValueKind::Parameter;  // several parameters folded into one tensor: counted as one
        v.floatData.reset();
        g_.notes.push_back("initializer '" + name + "' is " + std::to_string(folded.size()) +
                           " parameters folded together by the exporter ('" + folded[0] + "', ...): counted as " +
                           shapeStr(v.shape));
        return g_.addValue(std::move(v));
    }
    v.kind = ValueKind::Constant;
    // A tensor the exporter computed from the input's sizes (a causal or padding mask) has the fixed
    // batch as its leading size: one row, expanded to the batch, keeps the batch symbolic.
    if (fixedBatch_ > 1 && export_.foldedFrom.count(name) && v.shape.size() >= 2 && v.shape[0] == Dim(fixedBatch_)) {
        Value row = v;
        row.name = freshValueName(name + "/row");
        row.shape[0] = Dim(1);
        row.intData.reset();
        row.floatData.reset();
        return expandToBatch(g_.addValue(std::move(row)), name, userPath);
    }
    return g_.addValue(std::move(v));
}

// Whether the initializer `name`, folded from parameter `target`, is a layer's output on a buffer: a
// node reading it stands for a linear layer, matrix product or convolution (its FX node, which the
// folding kept) whose first argument is a buffer and which reads `target` after it, as its weight.
bool OnnxGraphBuilder::foldIsLayerOfBuffer(const std::string& name, const std::string& target) const {
    static const char* const kLayers[] = {"aten.linear.", "aten.matmul.", "aten.mm.",
                                          "aten.bmm.",    "aten.addmm.",  "aten.conv"};
    auto sources = export_.foldedFrom.find(name);  // only folds with a buffer among their sources are read on
    if (sources == export_.foldedFrom.end() ||
        std::none_of(sources->second.begin(), sources->second.end(), [&](const std::string& s) {
            auto kind = export_.kinds.find(s);
            return kind != export_.kinds.end() && kind->second == ValueKind::Buffer;
        }))
        return false;
    for (const onnx::NodeProto& n : graphProto_.node()) {
        if (std::find(n.input().begin(), n.input().end(), name) == n.input().end()) continue;
        const std::string fx = export_.fxTarget(n);
        bool layer = false;
        for (const char* l : kLayers) layer |= fx.rfind(l, 0) == 0;
        if (!layer) continue;
        std::vector<std::string> reads = export_.tensorsReadBy(n);
        auto first = reads.empty() ? export_.kinds.end() : export_.kinds.find(reads.front());
        if (first != export_.kinds.end() && first->second == ValueKind::Buffer &&
            std::find(reads.begin() + 1, reads.end(), target) != reads.end())
            return true;
    }
    return false;
}

// A name for a value the importer adds: `base`, or `base#k`, never one the file or the graph uses.
std::string OnnxGraphBuilder::freshValueName(const std::string& base) const {
    auto taken = [&](const std::string& n) {
        return g_.findValue(n) >= 0 || initializers_.count(n) || inputs_.count(n) || producers_.count(n);
    };
    std::string name = base;
    for (int k = 1; taken(name); ++k) name = base + "#" + std::to_string(k);
    return name;
}

// A shape vector for a Reshape or Expand the importer adds.
int OnnxGraphBuilder::shapeConstant(const std::string& name, const Shape& shape) {
    Value v;
    v.name = name;
    v.dtype = DType::Int64;
    v.kind = ValueKind::Constant;
    v.shape = {Dim(static_cast<int64_t>(shape.size()))};
    v.intData = std::vector<Dim>(shape.begin(), shape.end());
    return g_.addValue(std::move(v));
}

// An Expand of `value` (leading size 1) to the batch, its output named `name`.
int OnnxGraphBuilder::expandToBatch(int value, const std::string& name, const std::string& userPath) {
    Shape batched = g_.values[size_t(value)].shape;
    batched[0] = fixedBatch_ > 0 ? Dim::batch() : Dim(inputBatch_);
    Operation op;
    op.type = "Expand";
    op.name = uniqueOpName(name + "/Expand");
    op.modulePath = userPath;
    op.attrs["_opset"] = opset_;
    op.inputs = {value, shapeConstant(freshValueName(name + "/shape"), batched)};
    Value out;
    out.name = name;
    op.outputs = {g_.addValue(std::move(out))};
    int result = op.outputs[0];
    addInferredOperation(std::move(op), "the batch of '" + name + "'");
    return result;
}

// `folded` holds elements picked from `target` at positions the export fixed. A relative-position
// bias table's size follows from its gathered form; any other table counts the rows the file holds,
// with a note. Either way a Gather reads the parameter, so that it is counted once and gets its
// gradient.
int OnnxGraphBuilder::gatheredParameter(const std::string& target, const Value& folded, const std::string& userPath) {
    Value like = folded;
    bool known = parameterValues_.count(target) || initializers_.count(target);
    if (!known && leafName(target) == "relative_position_bias_table") {
        Shape table = relativePositionTableShape(folded.shape);
        if (!table.empty()) like.shape = table, known = true;
    }
    int parameter = parameterValue(target, like);
    if (!known)
        g_.notes.push_back("parameter '" + target + "' is only partly in the file: the exporter kept the " +
                           shapeStr(folded.shape) + " elements that the exported input sizes read; counted as " +
                           "those (export with dynamic shapes, or optimize=False, for the whole parameter)");
    const Value& p = g_.values[size_t(parameter)];
    if (p.shape == folded.shape) {
        aliases_[folded.name] = parameter;
        return parameter;
    }
    Dim cols = p.shape.empty() ? Dim(0) : numel(Shape(p.shape.begin() + 1, p.shape.end()));  // elements per row
    Dim count = numel(folded.shape);
    if (!cols.isConstant() || cols.constant() <= 0 || !count.isConstant() || count.constant() % cols.constant() != 0)
        throw OnnxProblem("initializer '" + folded.name + "' " + shapeStr(folded.shape) +
                          " cannot be rows of parameter '" + target + "' " + shapeStr(p.shape));
    Value indices;
    indices.name = freshValueName(folded.name + "/indices");
    indices.dtype = DType::Int64;
    indices.kind = ValueKind::Constant;
    indices.shape = {Dim(count.constant() / cols.constant())};
    Operation gather;
    gather.type = "Gather";
    gather.name = uniqueOpName(folded.name + "/Gather");
    gather.modulePath = userPath;
    gather.attrs["_opset"] = opset_;
    gather.inputs = {parameter, g_.addValue(std::move(indices))};
    Value rows;
    rows.name = freshValueName(folded.name + "/rows");
    gather.outputs = {g_.addValue(std::move(rows))};
    int current = gather.outputs[0];
    parameterOf_[current] = target;
    addInferredOperation(std::move(gather), "the rows of parameter '" + target + "' in '" + folded.name + "'");
    return viewOfParameter(current, folded, false, userPath);
}

// The value standing for parameter `target`: its initializer's shape where the file has it, else
// that of `like` (a folded view of it, the first one met).
int OnnxGraphBuilder::parameterValue(const std::string& target, const Value& like) {
    if (auto it = parameterValues_.find(target); it != parameterValues_.end()) return it->second;
    Value v = like;
    if (auto init = initializers_.find(target); init != initializers_.end())
        v = valueOf(target, decodeTensor(*init->second, "initializer '" + target + "'"));
    v.name = g_.findValue(target) >= 0 || producers_.count(target) || inputs_.count(target) ? freshValueName(target)
                                                                                            : target;
    v.kind = ValueKind::Parameter;
    v.intData.reset();
    v.floatData.reset();
    v.producer = -1;
    int idx = g_.addValue(std::move(v));
    parameterValues_[target] = idx;
    parameterOf_[idx] = target;
    return idx;
}

// The value standing for buffer `target` (a running statistic the optimizer merged or fused away).
int OnnxGraphBuilder::bufferValue(const std::string& target, const Value& like) {
    if (int idx = g_.findValue(target); idx >= 0 && g_.values[size_t(idx)].kind == ValueKind::Buffer) return idx;
    Value v = like;
    v.name = producers_.count(target) || inputs_.count(target) || initializers_.count(target) ? freshValueName(target)
                                                                                              : target;
    v.kind = ValueKind::Buffer;
    v.producer = -1;
    v.intData.reset();
    v.floatData.reset();
    return g_.addValue(std::move(v));
}

// `folded` (an initializer of the file) as a view of `parameter`: the parameter itself when the
// shapes agree, else a Reshape, and an Expand to the batch when the exporter expanded it.
int OnnxGraphBuilder::viewOfParameter(int parameter, const Value& folded, bool expandsBatch,
                                      const std::string& userPath) {
    const std::string target = parameterOf_[parameter];
    int current = parameter;
    Shape unbatched = folded.shape;
    if (expandsBatch) unbatched[0] = Dim(1);
    auto reshape = [&](const Shape& shape, const std::string& outName) {
        Operation op;
        op.type = "Reshape";
        op.name = uniqueOpName(outName + "/Reshape");
        op.modulePath = userPath;
        op.attrs["_opset"] = opset_;
        op.inputs = {current, shapeConstant(freshValueName(outName + "/shape"), shape)};
        Value out;
        out.name = outName;
        op.outputs = {g_.addValue(std::move(out))};
        current = op.outputs[0];
        parameterOf_[current] = target;
        addInferredOperation(std::move(op), "the view of parameter '" + target + "' as '" + folded.name + "'");
    };
    if (g_.values[size_t(current)].shape != unbatched)
        reshape(unbatched, expandsBatch ? freshValueName(folded.name + "/unbatched") : folded.name);
    if (expandsBatch) {
        current = expandToBatch(current, folded.name, userPath);
        parameterOf_[current] = target;
    }
    if (current == parameter) aliases_[folded.name] = parameter;
    return current;
}

// Torch deduplicates equal weights behind Identity nodes named after the original parameter: the
// Identity's output becomes a weight of its own. False for other Identity nodes.
bool OnnxGraphBuilder::keepsIdentityWeight(const onnx::NodeProto& n, const Operation& op) {
    if (op.type != "Identity" || op.inputs.size() != 1 || op.inputs[0] < 0 || n.output_size() != 1) return false;
    const Value& src = g_.values[size_t(op.inputs[0])];
    if (src.producer >= 0 || src.kind == ValueKind::Input || src.kind == ValueKind::Activation) return false;
    if (export_.present) {  // the torch.export exporter's Identity is the same tensor under a second name
        aliases_[n.output(0)] = op.inputs[0];
        return true;
    }
    Value copy = src;
    copy.name = n.output(0);
    auto it = uses_.find(copy.name);
    copy.kind = classifyWeight(copy.name, copy.dtype, copy.shape, it == uses_.end() ? 0 : it->second);
    if (copy.kind != ValueKind::Constant) copy.floatData.reset();
    g_.addValue(std::move(copy));
    return true;
}

// torch.export files: a weight slot holding a parameter other than the ones its FX node read is an
// initializer the optimizer merged with an equal one. It gets the parameter the node read of the same
// leaf name ("weight", "bias"), or, where the node read it through a folded value (Gemma's 1 + weight),
// the parameter of that leaf name of the node's own module. A convolution or Gemm whose FX node read a
// bias the optimizer dropped (all zeros) gets that bias back.
void OnnxGraphBuilder::recoverMergedParameters(const onnx::NodeProto& n, Operation& op) {
    if (!export_.present) return;
    std::vector<std::string> reads = export_.tensorsReadBy(n);
    std::unordered_set<std::string> held;
    for (int in : op.inputs)
        if (auto it = parameterOf_.find(in); in >= 0 && it != parameterOf_.end()) held.insert(it->second);
    std::vector<bool> taken(reads.size(), false);
    auto unread = [&](auto wanted) -> std::string {
        for (size_t j = 0; j < reads.size(); ++j)
            if (!taken[j] && !held.count(reads[j]) && wanted(reads[j])) {
                taken[j] = true;
                return reads[j];
            }
        return "";
    };
    for (size_t k = 0; k < op.inputs.size(); ++k) {
        int& in = op.inputs[k];
        if (in < 0) continue;
        if (useOf(op.type, k) & kStats) {  // a running statistic merged with an equal parameter
            if (g_.values[size_t(in)].kind != ValueKind::Parameter) continue;
            std::string buffer = unread([&](const std::string& t) { return !export_.isParameter(t); });
            if (!buffer.empty()) in = bufferValue(buffer, g_.values[size_t(in)]);
            continue;
        }
        if (g_.values[size_t(in)].kind != ValueKind::Parameter) continue;
        auto it = parameterOf_.find(in);
        if (it == parameterOf_.end() || std::find(reads.begin(), reads.end(), it->second) != reads.end()) continue;
        const std::string leaf = leafName(it->second);
        std::string target =
            unread([&](const std::string& t) { return export_.isParameter(t) && leafName(t) == leaf; });
        std::string own = op.modulePath.empty() ? "" : op.modulePath + "." + leaf;
        if (target.empty() && !own.empty() && own != it->second && export_.isParameter(own) &&
            modulePathFromParameterName(it->second) != op.modulePath)
            target = own;
        if (!target.empty()) in = parameterValue(target, g_.values[size_t(in)]);
    }
    if (op.inputs.size() < 2 || op.inputs[1] < 0 || (op.inputs.size() >= 3 && op.inputs[2] >= 0)) return;
    const Value& w = g_.values[size_t(op.inputs[1])];
    if (w.shape.size() < 2 || !w.shape[0].isConstant() || !w.shape[1].isConstant()) return;
    int64_t channels = 0;
    if (op.type == "Conv")
        channels = w.shape[0].constant();
    else if (op.type == "ConvTranspose")
        channels = w.shape[1].constant() * op.attrInt("group", 1);
    else if (op.type == "Gemm" && w.shape.size() == 2)
        channels = w.shape[op.attrInt("transB", 0) ? 0 : 1].constant();
    std::string bias =
        channels > 0 ? unread([&](const std::string& t) { return export_.isParameter(t) && leafName(t) == "bias"; })
                     : "";
    if (bias.empty()) return;
    Value like;
    like.dtype = w.dtype;
    like.shape = {Dim(channels)};
    op.inputs.resize(3, -1);
    op.inputs[2] = parameterValue(bias, like);
}

}  // namespace ts::onnximport

namespace ts::onnximport {

// The exporter's optimizer folds an inference-mode BatchNorm into the Conv, ConvTranspose or Gemm
// before it (FuseBatchNormIntoConv); the ONNX node keeps the batch norm's FX node, which names the
// norm's weight, bias and running statistics. Training runs the two apart, and PyTorch counts the
// norm's parameters: the layer gets its own parameters back (its bias only where its module has one,
// never the fused bias) and a BatchNormalization follows it under the norm's module path.
bool OnnxGraphBuilder::unfuseBatchNorm(const onnx::NodeProto& n, Operation& op, const std::string& label) {
    if (!export_.present || (op.type != "Conv" && op.type != "ConvTranspose" && op.type != "Gemm")) return false;
    if (export_.fxTarget(n).find("batch_norm") == std::string::npos || n.output_size() != 1) return false;
    std::vector<std::string> reads = export_.tensorsReadBy(n);  // weight, bias, running mean and variance
    if (reads.size() != 4 || op.inputs.size() < 2 || op.inputs[1] < 0) return false;
    auto weight = parameterOf_.find(op.inputs[1]);
    if (weight == parameterOf_.end()) return false;
    const Value& w = g_.values[size_t(op.inputs[1])];
    if (w.shape.size() < 2 || !w.shape[0].isConstant() || !w.shape[1].isConstant()) return false;
    int64_t channels = op.type == "Conv"            ? w.shape[0].constant()
                       : op.type == "ConvTranspose" ? w.shape[1].constant() * op.attrInt("group", 1)
                                                    : w.shape[op.attrInt("transB", 0) ? 0 : 1].constant();
    Value perChannel;
    perChannel.dtype = w.dtype;
    perChannel.shape = {Dim(channels)};

    const std::string layerPath = modulePathFromParameterName(weight->second);
    op.inputs.resize(2);
    if (export_.isParameter(layerPath + ".bias")) op.inputs.push_back(parameterValue(layerPath + ".bias", perChannel));
    op.modulePath = layerPath;
    Value layerOut;
    layerOut.name = freshValueName(n.output(0) + "/" + op.type);
    op.outputs = {g_.addValue(std::move(layerOut))};
    int layerOutput = op.outputs[0];
    addInferredOperation(std::move(op), label);

    Operation norm;
    norm.type = "BatchNormalization";
    norm.name = uniqueOpName(n.name() + "/BatchNormalization");
    norm.modulePath = modulePathFromParameterName(reads[0]);
    norm.attrs["_opset"] = opset_;
    norm.inputs = {layerOutput, parameterValue(reads[0], perChannel), parameterValue(reads[1], perChannel),
                   bufferValue(reads[2], perChannel), bufferValue(reads[3], perChannel)};
    Value out;
    out.name = n.output(0);
    norm.outputs = {g_.addValue(std::move(out))};
    addInferredOperation(std::move(norm), label);
    return true;
}

}  // namespace ts::onnximport
