#pragma once
// Internal: the ONNX importer's graph builder, split by job over
//   onnx_importer.cpp      importOnnx, the node walk, Constant nodes, operations;
//   onnx_inputs.cpp        options, data inputs and their symbolic sizes, the fixed-batch heuristic;
//   onnx_weights.cpp       initializers and weight inputs as parameters, buffers and constants,
//                          including what the torch.export-based exporter folded, merged or dropped;
//   onnx_fused_operators.cpp  SiLU, GELU and sdpa, which the exporters write as several nodes, found as one.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "importers/onnx_proto_utils.h"
#include "importers/onnx_torch_export.h"
#include "trainscope/core/graph.h"

namespace ts::onnximport {

// Shape inference failed for a node (the message names it); may trigger a fixed-size retry.
class InferenceFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Options {
    bool concrete = false;                    // keep fixed input sizes fixed (no batch heuristic)
    std::optional<int64_t> batch, seq;        // display defaults
    std::map<std::string, int64_t> dimSizes;  // sizes for other symbolic input dimensions
};
Options parseOptions(const std::map<std::string, std::string>& params);

// How an operator uses its i-th input: as a tensor, as a weight (slots that hold weights in
// PyTorch layers), as BatchNorm running statistics, or as a small argument (shapes, scales).
enum Use : uint8_t { kTensor = 1, kWeightSlot = 2, kStats = 4, kArgument = 8 };
uint8_t useOf(const std::string& op, size_t i);

// An operator the exporters write as several nodes (onnx_fused_operators.cpp), read back as one.
struct FusedOperator {
    std::string type;                        // "Silu", "Gelu", "ScaledDotProductAttention"
    std::vector<std::string> inputs;         // the tensors it reads
    std::map<std::string, Attribute> attrs;  // Gelu's approximate; the attention's backend, dropout
    std::vector<int> nodes;                  // the pattern's other nodes, which it stands for
};
struct Fusions {
    std::unordered_map<int, FusedOperator> at;  // node index of each pattern's last node -> the operator
    std::unordered_set<int> absorbed;           // the patterns' other nodes, not imported on their own
};
Fusions findFusedOperators(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& producers,
                           const std::unordered_map<std::string, const onnx::TensorProto*>& initializers);

class OnnxGraphBuilder {
public:
    OnnxGraphBuilder(const std::string& path, const onnx::ModelProto& model, const Options& options)
        : path_(path), model_(model), graphProto_(model.graph()), options_(options) {}

    Graph build();
    bool usedFixedBatchHeuristic() const { return fixedBatch_ > 0; }

private:
    // onnx_importer.cpp
    void readOpset();
    void checkNodesAndIndex();
    void findLayerInputInitializers();
    std::vector<int> topologicalOrder();
    void foldConstant(const onnx::NodeProto& n, const std::string& label);
    void addOperation(const onnx::NodeProto& n, const std::string& label);
    void addFusedOperator(int last, const FusedOperator& f, const std::vector<int>& order, const std::string& label);
    bool attentionShapesFit(FusedOperator& f, const onnx::NodeProto& last, const std::string& label);
    int addInferredOperation(Operation op, const std::string& label);
    std::string uniqueOpName(const onnx::NodeProto& n, size_t index);
    std::string uniqueOpName(const std::string& base);

    // onnx_inputs.cpp
    void addDataInputs();
    Dim symbolicDim(const onnx::ValueInfoProto& vi, int position, const onnx::TensorShapeProto::Dimension& d,
                    DType dtype, int rank);
    bool isWeightInput(const onnx::ValueInfoProto& vi) const;
    void applyFixedBatchHeuristic(Operation& op);

    // onnx_weights.cpp
    int valueFor(const std::string& name, const std::string& userLabel, const std::string& userPath);
    int addSourceValue(const std::string& name, const onnx::TensorProto* init, const onnx::ValueInfoProto* input);
    int addExportedInitializer(const std::string& name, const onnx::TensorProto& init, const std::string& userPath);
    int parameterValue(const std::string& target, const Value& like);
    int bufferValue(const std::string& target, const Value& like);
    int viewOfParameter(int parameter, const Value& folded, bool expandsBatch, const std::string& userPath);
    std::string freshValueName(const std::string& base) const;
    int shapeConstant(const std::string& name, const Shape& shape);
    int expandToBatch(int value, const std::string& name, const std::string& userPath);
    int gatheredParameter(const std::string& target, const Value& folded, const std::string& userPath);
    bool foldIsLayerOfBuffer(const std::string& name, const std::string& target) const;
    bool unfuseBatchNorm(const onnx::NodeProto& n, Operation& op, const std::string& label);
    bool keepsIdentityWeight(const onnx::NodeProto& n, const Operation& op);
    bool bypassesInactiveDropout(const onnx::NodeProto& n, const Operation& op);
    bool bypassesNoOpCast(const onnx::NodeProto& n, const Operation& op);
    void recoverMergedParameters(const onnx::NodeProto& n, Operation& op);

    const std::string& path_;
    const onnx::ModelProto& model_;
    const onnx::GraphProto& graphProto_;
    Options options_;
    Graph g_;
    int64_t opset_ = 0;
    int64_t fixedBatch_ = 0;  // b0 when the file fixes the batch size and the heuristic is on
    int64_t inputBatch_ = 0;  // the first data input's fixed leading size, 0 when symbolic
    bool usesSeq_ = false;
    std::vector<std::string> labels_;
    std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
    std::unordered_map<std::string, const onnx::ValueInfoProto*> inputs_;
    std::unordered_map<std::string, int> producers_;
    std::unordered_map<std::string, uint8_t> uses_;
    std::unordered_set<std::string> layerInputInitializers_;  // findLayerInputInitializers
    std::unordered_map<std::string, Dim> namedDims_;
    std::unordered_set<std::string> opNames_;
    Fusions fusions_;

    // torch.export-based files: the signature and folding records, the graph value standing for
    // each parameter target, ONNX names that are another value under a second name, and the
    // parameter target each weight value holds (or is a view of).
    TorchExportInfo export_;
    std::unordered_map<std::string, int> parameterValues_;
    std::unordered_map<std::string, int> aliases_;
    std::unordered_map<int, std::string> parameterOf_;
};

}  // namespace ts::onnximport
