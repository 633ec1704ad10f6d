// The ONNX importer's inputs: options, data inputs with their symbolic sizes (batch N, sequence S,
// named dimensions), and the heuristic that keeps the batch symbolic in fixed-batch exports.
#include <cctype>

#include "importers/onnx_graph_builder.h"
#include "trainscope/core/errors.h"

namespace ts::onnximport {
namespace {

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

}  // namespace

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

bool OnnxGraphBuilder::isWeightInput(const onnx::ValueInfoProto& vi) const {
    const auto& tt = vi.type().tensor_type();
    if (!isFloating(dtypeFromOnnx(tt.elem_type())) || !tt.has_shape()) return false;
    for (const auto& d : tt.shape().dim())
        if (!d.has_dim_value() || d.dim_value() <= 0) return false;
    auto it = uses_.find(vi.name());
    bool weightSlot = it != uses_.end() && (it->second & (kWeightSlot | kStats));
    return weightSlot || looksLikeStateDictName(vi.name()) || vi.name().rfind("onnx::", 0) == 0;
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
    throw OnnxProblem(
        "graph input '" + vi.name() + "' has a symbolic dimension " + what + " at position " +
        std::to_string(position) +
        (param.empty() ? "; re-export it with a fixed size" : "; give its size as an option, e.g. ?" + param + "=224"));
}

void OnnxGraphBuilder::addDataInputs() {
    std::vector<const onnx::ValueInfoProto*> data;
    for (const auto& vi : graphProto_.input()) {
        if (initializers_.count(vi.name())) continue;  // IR < 4 lists initializers as inputs too
        if (!vi.type().has_tensor_type())
            throw OnnxProblem("graph input '" + vi.name() +
                              "' is not a tensor (sequence, map and optional inputs are not supported)");
        const auto& tt = vi.type().tensor_type();
        if (!tt.has_shape())
            throw OnnxProblem("graph input '" + vi.name() + "' has no shape; re-export the model with input shapes");
        if (tt.shape().dim_size() > limits::kMaxRank)
            throw OnnxProblem("graph input '" + vi.name() + "' has too many dimensions");
        for (const auto& d : tt.shape().dim())
            if (d.has_dim_value() && d.dim_value() > limits::kMaxDimValue)
                throw OnnxProblem("graph input '" + vi.name() + "' has an absurd dimension " +
                                  std::to_string(d.dim_value()));
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
        if (!d0.has_dim_value() || d0.dim_value() <= 0)
            anySymbolicBatch = true;
        else if (firstBatch == 0)
            firstBatch = d0.dim_value();
    }
    if (!options_.concrete && !anySymbolicBatch && firstBatch > 0) fixedBatch_ = firstBatch;
    if (!anySymbolicBatch) inputBatch_ = firstBatch;

    for (const auto* vi : data) {
        const auto& tt = vi->type().tensor_type();
        DType dtype = dtypeFromOnnx(tt.elem_type());
        int rank = tt.shape().dim_size();
        Shape shape;
        for (int i = 0; i < rank; ++i) {
            const auto& d = tt.shape().dim(i);
            bool known = d.has_dim_value() && (d.dim_value() > 0 || (options_.concrete && d.dim_value() == 0));
            if (known && i == 0 && fixedBatch_ > 0 && d.dim_value() == fixedBatch_)
                shape.push_back(Dim::batch());
            else if (known)
                shape.push_back(Dim(d.dim_value()));
            else
                shape.push_back(symbolicDim(*vi, i, d, dtype, rank));
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
            throw OnnxProblem("unknown option '" + key +
                              "' (ONNX files take batch, seq, concrete, or the name of a "
                              "symbolic input dimension)");
}

// Fixed-batch exports bake b0 into shape constants: a Reshape target [b0, -1] (or [b0 * k, ...]) must follow the
// symbolic batch of its data. Only the first entry is considered; see the file comment.
void OnnxGraphBuilder::applyFixedBatchHeuristic(Operation& op) {
    if (fixedBatch_ <= 0) return;
    // Constant indices of the fixed batch into batched data (the torch.export exporter's as_strided:
    // Gather of the flattened tensor) pick rows of every batch.
    if (op.type == "Gather" && op.inputs.size() == 2 && op.inputs[0] >= 0 && op.inputs[1] >= 0) {
        const Value& data = g_.values[size_t(op.inputs[0])];
        const Value& indices = g_.values[size_t(op.inputs[1])];
        if (indices.kind == ValueKind::Constant && indices.producer < 0 && indices.shape.size() >= 2 &&
            indices.shape[0] == Dim(fixedBatch_) && numel(data.shape).dependsOnBatch()) {
            Value patched = indices;
            patched.name = freshValueName(indices.name + "/batch");
            patched.shape[0] = Dim::batch();
            patched.intData.reset();
            op.inputs[1] = g_.addValue(std::move(patched));
        }
        return;
    }
    bool isReshape = op.type == "Reshape", isExpand = op.type == "Expand";
    if (!isReshape && !isExpand && op.type != "ConstantOfShape") return;
    size_t shapeInput = op.type == "ConstantOfShape" ? 0 : 1;
    if (op.inputs.size() <= shapeInput || op.inputs[shapeInput] < 0) return;
    const Value& target = g_.values[size_t(op.inputs[shapeInput])];
    if (!target.intData || target.intData->empty()) return;
    const Shape* data =
        op.inputs[0] >= 0 && op.type != "ConstantOfShape" ? &g_.values[size_t(op.inputs[0])].shape : nullptr;
    // The entry that takes the batch. Expand and ConstantOfShape: the first, b0. Reshape: the one whose
    // leading entries hold exactly the data's dimensions before its batch axis, and that holds the batch
    // whole, possibly merged with its neighbours (b0 x heads; seq x b0 in nn.MultiheadAttention's
    // [seq, batch, features]).
    size_t position = 0;
    int64_t merged = 1;
    if (!isReshape) {
        const Dim& first = target.intData->front();
        if (!first.isConstant()) return;
        // An Expand of data whose leading size is the batch merged with another (k x N: Swin's windows,
        // F.normalize's expand_as) to k x b0.
        if (isExpand && data && !data->empty() && data->size() == target.intData->size()) {
            auto factor = (*data)[0].divExact(Dim::batch());
            int64_t batchOfK = 0;
            if (factor && factor->isConstant() && factor->constant() > 1 &&
                !__builtin_mul_overflow(factor->constant(), fixedBatch_, &batchOfK) && first.constant() == batchOfK)
                merged = factor->constant();
        }
        if (merged == 1 && first.constant() != fixedBatch_) return;
    } else {
        if (!data) return;
        size_t axis = 0;
        while (axis < data->size() && !(*data)[axis].dependsOnBatch()) ++axis;
        if (axis == data->size()) return;
        auto outer = numel(Shape(data->begin(), data->begin() + long(axis)));
        auto factor = (*data)[axis].divExact(Dim::batch());  // k of a batch axis k x N ([seq x batch, ...])
        if (!outer.isConstant() || !factor || !factor->isConstant() || factor->constant() <= 0) return;
        // The products are of sizes a file states: one beyond int64 is no batch entry (and no UB).
        int64_t span = 0, outerBatch = 0;
        if (__builtin_mul_overflow(outer.constant(), factor->constant(), &span) ||
            __builtin_mul_overflow(outer.constant(), fixedBatch_, &outerBatch) || span <= 0 || outerBatch <= 0)
            return;
        int64_t before = 1;
        for (position = 0; position < target.intData->size(); ++position) {
            const Dim& t = (*target.intData)[position];
            if (!t.isConstant() || t.constant() <= 0 || span % before != 0) return;
            int64_t upTo = 0;
            if (__builtin_mul_overflow(before, t.constant(), &upTo)) return;
            if (upTo % outerBatch == 0) break;
            before = upTo;
        }
        if (position == target.intData->size() || (*target.intData)[position].constant() % fixedBatch_ != 0) return;
        merged = (*target.intData)[position].constant() / fixedBatch_;
    }
    bool dataBatched =
        data && !data->empty() && (isReshape ? numel(*data).dependsOnBatch() : (*data)[0].dependsOnBatch());
    // A one-entry target [b0] is as likely a rank (ConstantOfShape of a shape vector) as a batch.
    bool batchLike = dataBatched || (fixedBatch_ > 1 && target.intData->size() >= 2);
    if (isReshape ? !dataBatched : !batchLike) return;
    Value patched = target;
    patched.name = freshValueName(target.name + "/batch");
    patched.kind = ValueKind::Constant;
    patched.producer = -1;
    (*patched.intData)[position] = merged == 1 ? Dim::batch() : Dim::batch() * Dim(merged);
    op.inputs[shapeInput] = g_.addValue(std::move(patched));
}

}  // namespace ts::onnximport
