// The ONNX importer: reads a ModelProto (torch.onnx.export output of either exporter, opsets 11 and
// newer), keeps the architecture (shapes, parameters, module paths) and never the weights' data.
//
// - Parameters, buffers and constants: onnx_weights.cpp (the legacy exporter's initializers by their
//   use and names; the torch.export-based exporter's by its graph signature, with what its optimizer
//   folded, merged or dropped put back).
// - Symbolic sizes: the first dimension of every data input becomes the batch N, the second
//   symbolic dimension of [batch, seq] integer inputs the sequence length S. A model exported
//   with a fixed batch b0 is treated the same way; constant Reshape/Expand/ConstantOfShape targets
//   that start with b0 are then rewritten to N (a heuristic: if shape inference still fails, the
//   model is imported again with every size fixed). onnx_inputs.cpp.
// - Shape arithmetic on sizes that are known (Shape, Gather, Slice, Concat, arithmetic, Range, ...)
//   is folded by shape inference (core/src/ops), so that shapes computed at run time are known here.
// - Module paths come from the exporter's node names ("/layer1/layer1.0/conv1/Conv"), from
//   torch.export metadata (pkg.torch.onnx.name_scopes), or from the operation's parameter names.
#include <algorithm>
#include <filesystem>
#include <queue>

#include "importers/onnx_graph_builder.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/ops.h"

namespace ts::onnximport {

void OnnxGraphBuilder::readOpset() {
    for (const auto& o : model_.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    if (opset_ <= 0) throw OnnxProblem("the model declares no opset for the default ONNX domain");
}

void OnnxGraphBuilder::checkNodesAndIndex() {
    if (graphProto_.node_size() > limits::kMaxOperations)
        throw OnnxProblem("the graph has " + std::to_string(graphProto_.node_size()) + " nodes (the limit is " +
                          std::to_string(limits::kMaxOperations) + ")");
    for (const auto& t : graphProto_.initializer()) {
        if (!initializers_.emplace(t.name(), &t).second)
            throw OnnxProblem("initializer '" + t.name() + "' is defined twice");
    }
    if (graphProto_.sparse_initializer_size() > 0) throw OnnxProblem("sparse initializers are not supported");
    for (const auto& vi : graphProto_.input()) inputs_.emplace(vi.name(), &vi);

    labels_.reserve(size_t(graphProto_.node_size()));
    for (int i = 0; i < graphProto_.node_size(); ++i) {
        const onnx::NodeProto& n = graphProto_.node(i);
        std::string label = "node '" + (n.name().empty() ? "#" + std::to_string(i) : n.name()) + "'";
        const std::string& type = n.op_type();
        if (!n.domain().empty() && n.domain() != "ai.onnx")
            throw OnnxProblem("unsupported operator '" + type + "' (" + label + ") from domain '" + n.domain() + "'");
        for (const auto& a : n.attribute())
            if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS || a.has_g())
                throw OnnxProblem("unsupported operator '" + type + "' (" + label +
                                  "): operators with subgraphs (If, Loop, Scan) are not supported");
        if (type != "Constant" && !isSupportedOperator(type))
            throw OnnxProblem("unsupported operator '" + type + "' (" + label + ")");
        for (int k = 0; k < n.input_size(); ++k)
            if (!n.input(k).empty()) uses_[n.input(k)] |= useOf(type, size_t(k));
        for (const std::string& out : n.output()) {
            if (out.empty()) continue;
            if (initializers_.count(out) || inputs_.count(out))
                throw OnnxProblem(label + " overwrites '" + out + "', which is an initializer or graph input");
            if (!producers_.emplace(out, i).second)
                throw OnnxProblem("tensor '" + out + "' is produced by two nodes (" + label + " and node #" +
                                  std::to_string(producers_[out]) + ")");
        }
        labels_.push_back(label + " (" + type + ")");
    }
    for (int i = 0; i < graphProto_.node_size(); ++i)
        for (const std::string& in : graphProto_.node(i).input())
            if (!in.empty() && !producers_.count(in) && !initializers_.count(in) && !inputs_.count(in))
                throw OnnxProblem(labels_[size_t(i)] + " uses '" + in +
                                  "', which no node, initializer or graph input provides (missing initializer?)");
    findLayerInputInitializers();
}

// Initializers read only as the input of linear layers, F.linear as the legacy exporter writes it:
// MatMul(t, Transpose(W)) or Gemm(t, W, transB = 1), W an initializer (the layer's [out, in] weight).
// A buffer that a layer runs on (Swin V2's coordinate table under its position-bias MLP, a sinusoidal
// table under a projection) is read that way; a parameter reaches a layer through the batch (an
// Expand, a Concat) or as its weight. (A product of two parameters, U @ V, has no Transpose.)
void OnnxGraphBuilder::findLayerInputInitializers() {
    std::unordered_map<std::string, int> reads, layerInputs;
    auto transposedWeight = [&](const onnx::NodeProto& n) {
        if (n.op_type() == "Gemm") {
            for (const auto& a : n.attribute())
                if (a.name() == "transB" && a.i() == 1) return initializers_.count(n.input(1)) != 0;
            return false;
        }
        auto p = producers_.find(n.input(1));
        if (p == producers_.end()) return false;
        const onnx::NodeProto& t = graphProto_.node(p->second);
        return t.op_type() == "Transpose" && t.input_size() == 1 && initializers_.count(t.input(0)) != 0;
    };
    for (const onnx::NodeProto& n : graphProto_.node()) {
        for (const std::string& in : n.input())
            if (initializers_.count(in)) ++reads[in];
        if ((n.op_type() == "MatMul" || n.op_type() == "Gemm") && n.input_size() >= 2 &&
            initializers_.count(n.input(0)) && n.input(1) != n.input(0) && transposedWeight(n))
            ++layerInputs[n.input(0)];
    }
    for (const auto& [name, count] : layerInputs)
        if (reads[name] == count) layerInputInitializers_.insert(name);
}

std::vector<int> OnnxGraphBuilder::topologicalOrder() {
    const int n = graphProto_.node_size();
    std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
    std::vector<int> pending(size_t(n), 0);
    bool sorted = true;
    for (int i = 0; i < n; ++i) {
        std::unordered_set<int> deps;
        for (const std::string& in : graphProto_.node(i).input()) {
            auto it = in.empty() ? producers_.end() : producers_.find(in);
            if (it == producers_.end()) continue;
            if (it->second == i) throw OnnxProblem("cyclic graph: " + labels_[size_t(i)] + " consumes its own output");
            if (deps.insert(it->second).second) {
                consumers[size_t(it->second)].push_back(i);
                ++pending[size_t(i)];
            }
            sorted &= it->second < i;
        }
    }
    std::vector<int> order;
    order.reserve(size_t(n));
    if (sorted) {
        for (int i = 0; i < n; ++i) order.push_back(i);
        return order;
    }
    // Kahn's algorithm, preferring the file's order among ready nodes.
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (int i = 0; i < n; ++i)
        if (pending[size_t(i)] == 0) ready.push(i);
    while (!ready.empty()) {
        int i = ready.top();
        ready.pop();
        order.push_back(i);
        for (int c : consumers[size_t(i)])
            if (--pending[size_t(c)] == 0) ready.push(c);
    }
    if (static_cast<int>(order.size()) != n) {
        for (int i = 0; i < n; ++i)
            if (pending[size_t(i)] > 0)
                throw OnnxProblem("cyclic graph: " + labels_[size_t(i)] + " depends on its own output");
    }
    return order;
}

void OnnxGraphBuilder::foldConstant(const onnx::NodeProto& n, const std::string& label) {
    if (n.output_size() < 1 || n.output(0).empty()) return;
    Value v;
    v.name = n.output(0);
    v.kind = ValueKind::Constant;
    std::string found;  // the value attribute seen, "" before the first
    for (const auto& a : n.attribute()) {
        const std::string& key = a.name();
        static const std::unordered_set<std::string> valueKeys{"value",        "sparse_value", "value_int",
                                                               "value_ints",   "value_float",  "value_floats",
                                                               "value_string", "value_strings"};
        if (!valueKeys.count(key)) continue;
        // Exactly one (ONNX's rule): a second would leave contents that do not match the shape.
        if (!found.empty()) throw OnnxProblem(label + " has two value attributes ('" + found + "' and '" + key + "')");
        found = key;
        if (key == "value") {
            TensorInfo info = decodeTensor(a.t(), "the value of " + label);
            v.dtype = info.dtype;
            v.shape = std::move(info.shape);
            v.intData = std::move(info.ints);
            v.floatData = std::move(info.floats);
        } else if (key == "sparse_value") {
            v.dtype = dtypeFromOnnx(a.sparse_tensor().values().data_type());
            if (a.sparse_tensor().dims_size() > limits::kMaxRank)
                throw OnnxProblem(label + " has a sparse value of " + std::to_string(a.sparse_tensor().dims_size()) +
                                  " dimensions (the limit is " + std::to_string(limits::kMaxRank) + ")");
            for (int64_t d : a.sparse_tensor().dims()) {
                if (d < 0 || d > limits::kMaxDimValue) throw OnnxProblem(label + " has an absurd sparse shape");
                v.shape.push_back(Dim(d));
            }
        } else if (key == "value_int") {
            v.dtype = DType::Int64;
            v.intData = std::vector<Dim>{Dim(a.i())};
        } else if (key == "value_ints") {
            v.dtype = DType::Int64;
            v.shape = {Dim(a.ints_size())};
            if (a.ints_size() <= limits::kMaxKnownValueElements)
                v.intData = std::vector<Dim>(a.ints().begin(), a.ints().end());
        } else if (key == "value_float") {
            v.floatData = std::vector<double>{a.f()};
        } else if (key == "value_floats") {
            v.shape = {Dim(a.floats_size())};
            if (a.floats_size() <= limits::kMaxKnownValueElements)
                v.floatData = std::vector<double>(a.floats().begin(), a.floats().end());
        } else if (key == "value_string" || key == "value_strings") {
            v.dtype = DType::String;
            if (key == "value_strings") v.shape = {Dim(a.strings_size())};
        }
    }
    if (found.empty()) throw OnnxProblem(label + " has no value");
    g_.addValue(std::move(v));
}

std::string OnnxGraphBuilder::uniqueOpName(const onnx::NodeProto& n, size_t index) {
    return uniqueOpName(n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name());
}

std::string OnnxGraphBuilder::uniqueOpName(const std::string& base) {
    std::string name = base;
    for (int k = 1; !opNames_.insert(name).second; ++k) name = base + "_" + std::to_string(k);
    return name;
}

void OnnxGraphBuilder::addOperation(const onnx::NodeProto& n, const std::string& label) {
    Operation op;
    op.type = n.op_type();
    op.name = uniqueOpName(n, g_.ops.size());
    op.attrs = convertAttributes(n, label);
    op.attrs["_opset"] = opset_;
    op.modulePath = modulePathFromNodeName(n.name());
    if (op.modulePath.empty()) op.modulePath = modulePathFromMetadata(n);
    for (const std::string& in : n.input()) op.inputs.push_back(in.empty() ? -1 : valueFor(in, label, op.modulePath));
    if (keepsIdentityWeight(n, op) || unfuseBatchNorm(n, op, label) || bypassesInactiveDropout(n, op) ||
        bypassesNoOpCast(n, op))
        return;
    recoverMergedParameters(n, op);

    int lastOutput = n.output_size() - 1;
    while (lastOutput >= 0 && n.output(lastOutput).empty()) --lastOutput;
    for (int k = 0; k <= lastOutput; ++k) {
        Value v;
        v.name = n.output(k);  // empty: an omitted optional output between used ones
        op.outputs.push_back(g_.addValue(std::move(v)));
    }

    if (op.modulePath.empty())
        for (int in : op.inputs)
            if (in >= 0 && g_.values[size_t(in)].kind == ValueKind::Parameter) {
                op.modulePath = modulePathFromParameterName(g_.values[size_t(in)].name);
                if (!op.modulePath.empty()) break;
            }

    applyFixedBatchHeuristic(op);
    addInferredOperation(std::move(op), label);
}

// `.to(dtype)` of a tensor already of that dtype returns the tensor itself (transformers' RMSNorm and
// eager attention cast to fp32 and back, which in an fp32 model changes nothing): the exporters' Cast to
// the input's own dtype is the input under a second name.
bool OnnxGraphBuilder::bypassesNoOpCast(const onnx::NodeProto& n, const Operation& op) {
    if (op.type != "Cast" || op.inputs.size() != 1 || op.inputs[0] < 0 || n.output_size() != 1 || !op.hasAttr("to"))
        return false;
    const DType from = g_.values[size_t(op.inputs[0])].dtype;
    if (from == DType::Unknown || dtypeFromOnnx(int(op.attrInt("to", 0))) != from) return false;
    aliases_[n.output(0)] = op.inputs[0];
    return true;
}

// F.dropout with p = 0 returns its input itself (the legacy exporter in training mode still writes a
// Dropout of ratio 0): the output is the input under a second name, so that a tensor saved on both
// sides (a Softmax's output and the MatMul after it) stays one tensor.
bool OnnxGraphBuilder::bypassesInactiveDropout(const onnx::NodeProto& n, const Operation& op) {
    if (op.type != "Dropout" || op.inputs.empty() || op.inputs[0] < 0 || n.output_size() < 1) return false;
    if (n.output_size() > 1 && !n.output(1).empty()) {  // the mask is read: the node stays
        if (uses_.count(n.output(1))) return false;
        for (const auto& out : graphProto_.output())
            if (out.name() == n.output(1)) return false;
    }
    std::optional<double> ratio;
    if (op.inputs.size() > 1 && op.inputs[1] >= 0) {
        const Value& r = g_.values[size_t(op.inputs[1])];
        if (r.floatData && r.floatData->size() == 1) ratio = r.floatData->front();
    } else if (op.inputs.size() == 1) {
        ratio = op.hasAttr("ratio") ? op.attrFloat("ratio", 0.5) : 0.5;  // opsets before 12: an attribute
    }
    if (!ratio || *ratio != 0) return false;
    aliases_[n.output(0)] = op.inputs[0];
    return true;
}

// The pattern's last node, as the one operator: its name's scope and its metadata give the module path.
// An attention whose tensors turn out not to be [batch, heads, seq, dim] (a pattern of the same nodes
// around other shapes) keeps its nodes: they are imported here, in the file's order, before the last.
void OnnxGraphBuilder::addFusedOperator(int last, const FusedOperator& f, const std::vector<int>& order,
                                        const std::string& label) {
    const onnx::NodeProto& n = graphProto_.node(last);
    FusedOperator fitted = f;
    if (f.type == "ScaledDotProductAttention" && !attentionShapesFit(fitted, n, label)) {
        std::vector<int> nodes = f.nodes;
        std::vector<size_t> position(size_t(graphProto_.node_size()));
        for (size_t k = 0; k < order.size(); ++k) position[size_t(order[k])] = k;
        std::sort(nodes.begin(), nodes.end(), [&](int a, int b) { return position[size_t(a)] < position[size_t(b)]; });
        for (int k : nodes) addOperation(graphProto_.node(k), labels_[size_t(k)]);
        addOperation(n, label);
        return;
    }
    onnx::NodeProto fused = n;
    fused.set_op_type(f.type);
    const std::string& name = n.name();
    const size_t slash = name.rfind('/');
    if (!name.empty())
        fused.set_name(slash == std::string::npos ? name + "_" + f.type : name.substr(0, slash + 1) + f.type);
    fused.clear_input();
    for (const std::string& in : fitted.inputs) fused.add_input(in);
    fused.clear_attribute();
    for (const auto& [key, value] : fitted.attrs) {
        onnx::AttributeProto* a = fused.add_attribute();
        a->set_name(key);
        if (const auto* text = std::get_if<std::string>(&value)) {
            a->set_type(onnx::AttributeProto::STRING);
            a->set_s(*text);
        } else if (const auto* number = std::get_if<double>(&value)) {
            a->set_type(onnx::AttributeProto::FLOAT);
            a->set_f(float(*number));
        }
    }
    addOperation(fused, label);
}

// q, k and v of rank 4 whose sizes pair as an attention's (the shape inference of the fused operator
// would refuse them otherwise), and a mask of at most rank 4. A key the exporter left in another shape
// of the same elements (a grouped-query key as repeat_kv expanded it, [N, Hkv, rep, S, D], or
// [N * H, S, D]: untransposedKey) is viewed as [N, H, S, D], its heads and length the value's, its
// width the query's: the tensor PyTorch's attention read, whose bytes it saves.
bool OnnxGraphBuilder::attentionShapesFit(FusedOperator& f, const onnx::NodeProto& last, const std::string& label) {
    std::vector<Shape> shapes;  // (valueFor may add an initializer's value: copies, not references)
    for (const std::string& in : f.inputs) shapes.push_back(g_.values[size_t(valueFor(in, label, ""))].shape);
    Shape &q = shapes[0], &k = shapes[1], &v = shapes[2];
    if (q.size() != 4 || v.size() != 4 || (shapes.size() > 3 && shapes[3].size() > 4)) return false;
    const bool viewKey = k.size() != 4;
    if (viewKey) {
        Shape heads{v[0], v[1], v[2], q[3]};
        if (k.size() < 3 || k.size() > 5 || numel(k) != numel(heads)) return false;
        k = heads;
    }
    if (k[3] != q[3] || k[1] != v[1] || k[2] != v[2]) return false;
    if (!(q[1].isConstant() && k[1].isConstant() && k[1].constant() > 0 && q[1].constant() % k[1].constant() == 0))
        return false;
    if (viewKey) {
        Operation op;
        op.type = "Reshape";
        op.name = uniqueOpName(f.inputs[1] + "/heads/Reshape");
        op.modulePath = modulePathFromNodeName(last.name());
        if (op.modulePath.empty()) op.modulePath = modulePathFromMetadata(last);
        op.attrs["_opset"] = opset_;
        op.inputs = {valueFor(f.inputs[1], label, op.modulePath),
                     shapeConstant(freshValueName(f.inputs[1] + "/heads/shape"), k)};
        Value out;
        out.name = freshValueName(f.inputs[1] + "/heads");
        f.inputs[1] = out.name;
        op.outputs = {g_.addValue(std::move(out))};
        addInferredOperation(std::move(op), label);
    }
    return true;
}

int OnnxGraphBuilder::addInferredOperation(Operation op, const std::string& label) {
    int index = g_.addOperation(std::move(op));
    try {
        inferShapes(g_, index);
    } catch (const ShapeError& e) {
        throw InferenceFailure(label + ": " + e.what());
    } catch (const std::logic_error& e) {
        throw InferenceFailure(label + ": " + e.what());
    }
    return index;
}

Graph OnnxGraphBuilder::build() {
    checkNodesAndIndex();  // first: nodes of other domains are reported as unsupported operators
    readOpset();
    std::vector<int> order = topologicalOrder();
    g_.name = std::filesystem::path(path_).stem().string();
    g_.source = path_;
    g_.format = "onnx";
    export_ = readTorchExportInfo(graphProto_);
    addDataInputs();
    fusions_ = findFusedOperators(graphProto_, producers_, initializers_);
    for (int i : order) {
        const onnx::NodeProto& n = graphProto_.node(i);
        const std::string& label = labels_[size_t(i)];
        if (fusions_.absorbed.count(i)) continue;
        if (auto f = fusions_.at.find(i); f != fusions_.at.end())
            addFusedOperator(i, f->second, order, label);
        else if (n.op_type() == "Constant")
            foldConstant(n, label);
        else
            addOperation(n, label);
    }
    for (const auto& out : graphProto_.output()) {
        int idx = g_.findValue(out.name());
        if (auto a = aliases_.find(out.name()); idx < 0 && a != aliases_.end()) idx = a->second;
        if (idx < 0) {
            if (initializers_.count(out.name()) || inputs_.count(out.name()))
                idx = valueFor(out.name(), "graph output", "");
            else
                throw OnnxProblem("graph output '" + out.name() + "' is not produced by any node");
        }
        g_.outputs.push_back(idx);
    }
    if (g_.outputs.empty()) throw OnnxProblem("the graph has no outputs");
    g_.defaults.batch = options_.batch.value_or(fixedBatch_ > 0 ? fixedBatch_ : 1);
    g_.defaults.seq = usesSeq_ ? options_.seq.value_or(128) : 0;
    try {
        g_.validate();
    } catch (const std::logic_error& e) {
        throw OnnxProblem(std::string("inconsistent graph: ") + e.what());
    }
    return std::move(g_);
}

}  // namespace ts::onnximport

namespace ts {
namespace {

// Names inside a broken file can hold anything: keep messages on one readable line.
std::string oneLine(const std::string& text) {
    constexpr size_t kMaxLength = 400;
    std::string r;
    for (char ch : text) r += (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ? '?' : ch;
    if (r.size() > kMaxLength) r = r.substr(0, kMaxLength) + "...";
    return r;
}

}  // namespace

Graph importOnnx(const std::string& path, const std::map<std::string, std::string>& params) {
    using namespace onnximport;
    try {
        Options options = parseOptions(params);
        onnx::ModelProto model;
        readModelFile(path, model);
        OnnxGraphBuilder builder(path, model, options);
        try {
            return builder.build();
        } catch (const InferenceFailure& e) {
            if (!builder.usedFixedBatchHeuristic()) throw ModelError(path, oneLine(e.what()));
        }
        // The batch heuristic misread this fixed-size export: import it with every size fixed.
        options.concrete = true;
        OnnxGraphBuilder fixed(path, model, options);
        try {
            return fixed.build();
        } catch (const InferenceFailure& e) {
            throw ModelError(path, oneLine(e.what()));
        }
    } catch (const ModelError&) {
        throw;
    } catch (const OnnxProblem& e) {
        throw ModelError(path, oneLine(e.what()));
    } catch (const ShapeError& e) {
        throw ModelError(path, oneLine(e.what()));
    } catch (const std::bad_alloc&) {
        throw ModelError(path, "out of memory while reading the model");
    } catch (const std::exception& e) {
        throw ModelError(path, oneLine(std::string("cannot import: ") + e.what()));
    }
}

}  // namespace ts
