// The ONNX importer: reads a ModelProto (torch.onnx.export output, opsets 11-17 and newer),
// keeps the architecture (shapes, parameters, module paths) and never the weights' data.
//
// - Parameters: float initializers used as tensors ("layer1.0.conv1.weight"), BatchNorm running
//   statistics become Buffers, integer and scalar initializers Constants (small ones keep their
//   contents for shape math). Files exported with export_params=False carry the weights as graph
//   inputs with concrete shapes; those are recognised by name or by the slot they feed.
//   torch deduplicates equal initializers behind Identity nodes whose output keeps the original
//   parameter name; such Identity nodes are folded back into separate Parameters so that the
//   parameter count equals PyTorch's.
// - Symbolic sizes: the first dimension of every data input becomes the batch N, the second
//   symbolic dimension of [batch, seq] integer inputs the sequence length S. A model exported
//   with a fixed batch b0 is treated the same way; constant Reshape/Expand/ConstantOfShape targets
//   that start with b0 are then rewritten to N (a heuristic: if shape inference still fails, the
//   model is imported again with every size fixed).
// - Module paths come from the exporter's node names ("/layer1/layer1.0/conv1/Conv"), from
//   torch.export metadata, or from the operation's parameter names.
#include <algorithm>
#include <filesystem>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "importers/onnx_proto_utils.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/ops.h"

namespace ts {
namespace {

using onnximport::OnnxProblem;

// Shape inference failed for a node (the message names it); may trigger a fixed-size retry.
class InferenceFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Options {
    bool concrete = false;               // keep fixed input sizes fixed (no batch heuristic)
    std::optional<int64_t> batch, seq;   // display defaults
    std::map<std::string, int64_t> dimSizes;  // sizes for other symbolic input dimensions
};

int64_t parsePositive(const std::string& key, const std::string& text) {
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || v < 1 || v > limits::kMaxDimValue)
        throw OnnxProblem("option '" + key + "=" + text + "' needs a positive integer");
    return v;
}

Options parseOptions(const std::map<std::string, std::string>& params) {
    Options o;
    for (const auto& [key, value] : params) {
        if (key == "concrete") {
            if (value != "0" && value != "1") throw OnnxProblem("option 'concrete' must be 0 or 1");
            o.concrete = value == "1";
        } else if (key == "batch") {
            o.batch = parsePositive(key, value);
        } else if (key == "seq") {
            o.seq = parsePositive(key, value);
        } else {
            o.dimSizes[key] = parsePositive(key, value);  // checked against the inputs' names later
        }
    }
    return o;
}

// How an operator uses its i-th input: as a tensor, as a weight (slots that hold weights in
// PyTorch layers), as BatchNorm running statistics, or as a small argument (shapes, scales).
enum Use : uint8_t { kTensor = 1, kWeightSlot = 2, kStats = 4, kArgument = 8 };

uint8_t useOf(const std::string& op, size_t i) {
    if (i == 0) return kTensor;
    static const std::unordered_set<std::string> argumentOps{
        "Reshape", "Expand", "Tile", "Slice", "Squeeze", "Unsqueeze", "Split", "TopK", "OneHot", "Range",
        "ConstantOfShape", "Resize", "Upsample", "Pad", "Clip", "Dropout", "ReduceSum", "ReduceMean", "ReduceMax",
        "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
        "CumSum", "Trilu", "NonMaxSuppression", "Pow"};
    if (op == "BatchNormalization") return i >= 3 ? kStats : kTensor | kWeightSlot;
    if (argumentOps.count(op)) return kArgument;
    if (op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul" || op == "LayerNormalization" ||
        op == "InstanceNormalization" || op == "GroupNormalization" || op == "PRelu" || op == "LSTM" ||
        op == "GRU" || op == "RNN")
        return kTensor | kWeightSlot;
    return kTensor;
}

ValueKind classifyWeight(const std::string& name, DType dtype, const Shape& shape, uint8_t uses) {
    if (!isFloating(dtype)) return ValueKind::Constant;
    if (uses & kStats) return ValueKind::Buffer;
    if (!(uses & kTensor)) return ValueKind::Constant;
    // Scalars that are not state_dict entries are folded constants (attention scales, epsilons).
    if (numel(shape) == Dim(1) && !onnximport::looksLikeStateDictName(name) && !(uses & kWeightSlot))
        return ValueKind::Constant;
    return ValueKind::Parameter;
}

bool seqLikeName(const std::string& name) {
    std::string n;
    for (char ch : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return n.find("seq") != std::string::npos || n.find("len") != std::string::npos ||
           n.find("token") != std::string::npos || n.find("time") != std::string::npos;
}

bool isIntegral(DType t) {
    return t == DType::Int64 || t == DType::Int32 || t == DType::Int16 || t == DType::Int8 || t == DType::UInt8 ||
           t == DType::Bool;
}

class OnnxGraphBuilder {
public:
    OnnxGraphBuilder(const std::string& path, const onnx::ModelProto& model, const Options& options)
        : path_(path), model_(model), graphProto_(model.graph()), options_(options) {}

    Graph build();
    bool usedFixedBatchHeuristic() const { return fixedBatch_ > 0; }

private:
    void readOpset();
    void checkNodesAndIndex();
    std::vector<int> topologicalOrder();
    void addDataInputs();
    Dim symbolicDim(const onnx::ValueInfoProto& vi, int position, const onnx::TensorShapeProto::Dimension& d,
                    DType dtype, int rank);
    int valueFor(const std::string& name, const std::string& userLabel);
    int addSourceValue(const std::string& name, const onnx::TensorProto* init, const onnx::ValueInfoProto* input);
    void foldConstant(const onnx::NodeProto& n, const std::string& label);
    void addOperation(const onnx::NodeProto& n, const std::string& label);
    void applyFixedBatchHeuristic(Operation& op);
    std::string uniqueOpName(const onnx::NodeProto& n, size_t index);
    bool isWeightInput(const onnx::ValueInfoProto& vi) const;

    const std::string& path_;
    const onnx::ModelProto& model_;
    const onnx::GraphProto& graphProto_;
    Options options_;
    Graph g_;
    int64_t opset_ = 0;
    int64_t fixedBatch_ = 0;  // b0 when the file fixes the batch size and the heuristic is on
    bool usesSeq_ = false;
    std::vector<std::string> labels_;
    std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
    std::unordered_map<std::string, const onnx::ValueInfoProto*> inputs_;
    std::unordered_map<std::string, int> producers_;
    std::unordered_map<std::string, uint8_t> uses_;
    std::unordered_map<std::string, Dim> namedDims_;
    std::unordered_set<std::string> opNames_;
    int patchedCount_ = 0;
};

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

bool OnnxGraphBuilder::isWeightInput(const onnx::ValueInfoProto& vi) const {
    const auto& tt = vi.type().tensor_type();
    if (!isFloating(dtypeFromOnnx(tt.elem_type())) || !tt.has_shape()) return false;
    for (const auto& d : tt.shape().dim())
        if (!d.has_dim_value() || d.dim_value() <= 0) return false;
    auto it = uses_.find(vi.name());
    bool weightSlot = it != uses_.end() && (it->second & (kWeightSlot | kStats));
    return weightSlot || onnximport::looksLikeStateDictName(vi.name()) || vi.name().rfind("onnx::", 0) == 0;
}

Dim OnnxGraphBuilder::symbolicDim(const onnx::ValueInfoProto& vi, int position,
                                  const onnx::TensorShapeProto::Dimension& d, DType dtype, int rank) {
    const std::string& param = d.dim_param();
    if (position == 0) {
        if (!param.empty()) namedDims_.emplace(param, Dim::batch());
        return Dim::batch();
    }
    if (!param.empty()) {
        if (auto it = namedDims_.find(param); it != namedDims_.end()) return it->second;
        if (auto it = options_.dimSizes.find(param); it != options_.dimSizes.end()) {
            namedDims_.emplace(param, Dim(it->second));
            return Dim(it->second);
        }
    }
    if ((position == 1 && rank == 2 && isIntegral(dtype)) || (!param.empty() && seqLikeName(param))) {
        usesSeq_ = true;
        if (!param.empty()) namedDims_.emplace(param, Dim::seq());
        return Dim::seq();
    }
    std::string what = param.empty() ? "of unknown size" : "named '" + param + "'";
    throw OnnxProblem("graph input '" + vi.name() + "' has a symbolic dimension " + what + " at position " +
                      std::to_string(position) +
                      (param.empty() ? "; re-export it with a fixed size" : "; give its size as an option, e.g. ?" + param + "=224"));
}

void OnnxGraphBuilder::addDataInputs() {
    std::vector<const onnx::ValueInfoProto*> data;
    for (const auto& vi : graphProto_.input()) {
        if (initializers_.count(vi.name())) continue;  // IR < 4 lists initializers as inputs too
        if (!vi.type().has_tensor_type())
            throw OnnxProblem("graph input '" + vi.name() + "' is not a tensor (sequence, map and optional inputs are not supported)");
        const auto& tt = vi.type().tensor_type();
        if (!tt.has_shape())
            throw OnnxProblem("graph input '" + vi.name() + "' has no shape; re-export the model with input shapes");
        if (tt.shape().dim_size() > limits::kMaxRank)
            throw OnnxProblem("graph input '" + vi.name() + "' has too many dimensions");
        for (const auto& d : tt.shape().dim())
            if (d.has_dim_value() && d.dim_value() > limits::kMaxDimValue)
                throw OnnxProblem("graph input '" + vi.name() + "' has an absurd dimension " + std::to_string(d.dim_value()));
        if (dtypeFromOnnx(tt.elem_type()) == DType::Unknown)
            throw OnnxProblem("graph input '" + vi.name() + "' has an unsupported data type (code " +
                              std::to_string(tt.elem_type()) + ")");
        if (!isWeightInput(vi)) data.push_back(&vi);
    }
    // A fixed batch: every data input has a concrete first dimension.
    bool anySymbolicBatch = false;
    int64_t firstBatch = 0;
    for (const auto* vi : data) {
        const auto& shape = vi->type().tensor_type().shape();
        if (shape.dim_size() == 0) continue;
        const auto& d0 = shape.dim(0);
        if (!d0.has_dim_value() || d0.dim_value() <= 0) anySymbolicBatch = true;
        else if (firstBatch == 0) firstBatch = d0.dim_value();
    }
    if (!options_.concrete && !anySymbolicBatch && firstBatch > 0) fixedBatch_ = firstBatch;

    for (const auto* vi : data) {
        const auto& tt = vi->type().tensor_type();
        DType dtype = dtypeFromOnnx(tt.elem_type());
        int rank = tt.shape().dim_size();
        Shape shape;
        for (int i = 0; i < rank; ++i) {
            const auto& d = tt.shape().dim(i);
            bool known = d.has_dim_value() && (d.dim_value() > 0 || (options_.concrete && d.dim_value() == 0));
            if (known && i == 0 && fixedBatch_ > 0 && d.dim_value() == fixedBatch_) shape.push_back(Dim::batch());
            else if (known) shape.push_back(Dim(d.dim_value()));
            else shape.push_back(symbolicDim(*vi, i, d, dtype, rank));
        }
        Value v;
        v.name = vi->name();
        v.dtype = dtype;
        v.shape = std::move(shape);
        v.kind = ValueKind::Input;
        g_.inputs.push_back(g_.addValue(std::move(v)));
    }
    for (const auto& [key, size] : options_.dimSizes)
        if (!namedDims_.count(key))
            throw OnnxProblem("unknown option '" + key + "' (ONNX files take batch, seq, concrete, or the name of a "
                              "symbolic input dimension)");
}

// Initializers and weight inputs become values on first use (unused ones are ignored).
int OnnxGraphBuilder::addSourceValue(const std::string& name, const onnx::TensorProto* init,
                                     const onnx::ValueInfoProto* input) {
    Value v;
    v.name = name;
    if (init) {
        onnximport::TensorInfo info = onnximport::decodeTensor(*init, "initializer '" + name + "'");
        v.dtype = info.dtype;
        v.shape = std::move(info.shape);
        v.intData = std::move(info.ints);
        v.floatData = std::move(info.floats);
    } else {
        const auto& tt = input->type().tensor_type();
        v.dtype = dtypeFromOnnx(tt.elem_type());
        for (const auto& d : tt.shape().dim()) v.shape.push_back(Dim(d.dim_value()));
    }
    auto it = uses_.find(name);
    v.kind = classifyWeight(name, v.dtype, v.shape, it == uses_.end() ? 0 : it->second);
    if (v.kind != ValueKind::Constant) v.floatData.reset();  // weights' data is never kept
    return g_.addValue(std::move(v));
}

int OnnxGraphBuilder::valueFor(const std::string& name, const std::string& userLabel) {
    int idx = g_.findValue(name);
    if (idx >= 0) return idx;
    if (auto it = initializers_.find(name); it != initializers_.end()) return addSourceValue(name, it->second, nullptr);
    if (auto it = inputs_.find(name); it != inputs_.end()) return addSourceValue(name, nullptr, it->second);
    throw OnnxProblem(userLabel + " uses '" + name + "' before it is produced");
}

void OnnxGraphBuilder::foldConstant(const onnx::NodeProto& n, const std::string& label) {
    if (n.output_size() < 1 || n.output(0).empty()) return;
    Value v;
    v.name = n.output(0);
    v.kind = ValueKind::Constant;
    std::string found;  // the value attribute seen, "" before the first
    for (const auto& a : n.attribute()) {
        const std::string& key = a.name();
        static const std::unordered_set<std::string> valueKeys{"value", "sparse_value", "value_int", "value_ints",
                                                                "value_float", "value_floats", "value_string",
                                                                "value_strings"};
        if (!valueKeys.count(key)) continue;
        // Exactly one (ONNX's rule): a second would leave contents that do not match the shape.
        if (!found.empty())
            throw OnnxProblem(label + " has two value attributes ('" + found + "' and '" + key + "')");
        found = key;
        if (key == "value") {
            onnximport::TensorInfo info = onnximport::decodeTensor(a.t(), "the value of " + label);
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
            if (a.ints_size() <= limits::kMaxKnownValueElements) v.intData = std::vector<Dim>(a.ints().begin(), a.ints().end());
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
    std::string base = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    std::string name = base;
    for (int k = 1; !opNames_.insert(name).second; ++k) name = base + "_" + std::to_string(k);
    return name;
}

// Fixed-batch exports bake b0 into shape constants: a Reshape target [b0, -1] must follow the
// symbolic batch of its data. Only the first entry is considered; see the file comment.
void OnnxGraphBuilder::applyFixedBatchHeuristic(Operation& op) {
    if (fixedBatch_ <= 0) return;
    bool isReshape = op.type == "Reshape", isExpand = op.type == "Expand";
    if (!isReshape && !isExpand && op.type != "ConstantOfShape") return;
    size_t shapeInput = op.type == "ConstantOfShape" ? 0 : 1;
    if (op.inputs.size() <= shapeInput || op.inputs[shapeInput] < 0) return;
    const Value& target = g_.values[size_t(op.inputs[shapeInput])];
    if (!target.intData || target.intData->empty()) return;
    const Dim& first = target.intData->front();
    if (!first.isConstant() || first.constant() != fixedBatch_) return;
    bool dataBatched = op.inputs[0] >= 0 && op.type != "ConstantOfShape" && !g_.values[size_t(op.inputs[0])].shape.empty() &&
                       g_.values[size_t(op.inputs[0])].shape[0].dependsOnBatch();
    // A one-entry target [b0] is as likely a rank (ConstantOfShape of a shape vector) as a batch.
    bool batchLike = dataBatched || (fixedBatch_ > 1 && target.intData->size() >= 2);
    if (isReshape ? !dataBatched : !batchLike) return;
    Value patched = target;
    patched.name = target.name + "/batch_" + std::to_string(++patchedCount_);
    patched.kind = ValueKind::Constant;
    patched.producer = -1;
    patched.intData->front() = Dim::batch();
    op.inputs[shapeInput] = g_.addValue(std::move(patched));
}

void OnnxGraphBuilder::addOperation(const onnx::NodeProto& n, const std::string& label) {
    Operation op;
    op.type = n.op_type();
    op.name = uniqueOpName(n, g_.ops.size());
    op.attrs = onnximport::convertAttributes(n, label);
    op.attrs["_opset"] = opset_;
    for (const std::string& in : n.input()) op.inputs.push_back(in.empty() ? -1 : valueFor(in, label));

    // Torch deduplicates equal weights behind Identity nodes named after the original parameter.
    if (op.type == "Identity" && op.inputs.size() == 1 && op.inputs[0] >= 0 && n.output_size() == 1) {
        const Value& src = g_.values[size_t(op.inputs[0])];
        if (src.producer < 0 && src.kind != ValueKind::Input && src.kind != ValueKind::Activation) {
            Value copy = src;
            copy.name = n.output(0);
            auto it = uses_.find(copy.name);
            copy.kind = classifyWeight(copy.name, copy.dtype, copy.shape, it == uses_.end() ? 0 : it->second);
            if (copy.kind != ValueKind::Constant) copy.floatData.reset();
            g_.addValue(std::move(copy));
            return;
        }
    }

    int lastOutput = n.output_size() - 1;
    while (lastOutput >= 0 && n.output(lastOutput).empty()) --lastOutput;
    for (int k = 0; k <= lastOutput; ++k) {
        Value v;
        v.name = n.output(k);  // empty: an omitted optional output between used ones
        op.outputs.push_back(g_.addValue(std::move(v)));
    }

    op.modulePath = onnximport::modulePathFromNodeName(n.name());
    if (op.modulePath.empty()) op.modulePath = onnximport::modulePathFromMetadata(n);
    if (op.modulePath.empty())
        for (int in : op.inputs)
            if (in >= 0 && g_.values[size_t(in)].kind == ValueKind::Parameter) {
                op.modulePath = onnximport::modulePathFromParameterName(g_.values[size_t(in)].name);
                if (!op.modulePath.empty()) break;
            }

    applyFixedBatchHeuristic(op);
    int index = g_.addOperation(std::move(op));
    try {
        inferShapes(g_, index);
    } catch (const ShapeError& e) {
        throw InferenceFailure(label + ": " + e.what());
    } catch (const std::logic_error& e) {
        throw InferenceFailure(label + ": " + e.what());
    }
}

Graph OnnxGraphBuilder::build() {
    checkNodesAndIndex();  // first: nodes of other domains are reported as unsupported operators
    readOpset();
    std::vector<int> order = topologicalOrder();
    g_.name = std::filesystem::path(path_).stem().string();
    g_.source = path_;
    g_.format = "onnx";
    addDataInputs();
    for (int i : order) {
        const onnx::NodeProto& n = graphProto_.node(i);
        const std::string& label = labels_[size_t(i)];
        if (n.op_type() == "Constant") foldConstant(n, label);
        else addOperation(n, label);
    }
    for (const auto& out : graphProto_.output()) {
        int idx = g_.findValue(out.name());
        if (idx < 0) {
            if (initializers_.count(out.name()) || inputs_.count(out.name())) idx = valueFor(out.name(), "graph output");
            else throw OnnxProblem("graph output '" + out.name() + "' is not produced by any node");
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
    try {
        Options options = parseOptions(params);
        onnx::ModelProto model;
        onnximport::readModelFile(path, model);
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
