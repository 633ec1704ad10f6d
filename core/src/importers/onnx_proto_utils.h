#pragma once
// Internal helpers of the ONNX importer: reading the protobuf file safely, decoding tensors
// (shape always, contents only when small), converting attributes, and recovering PyTorch
// module paths from exporter node names.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "trainscope/core/graph.h"

namespace ts::onnximport {

// A problem with the file; importOnnx turns it into ModelError(path, what()).
class OnnxProblem : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Reads and parses `path` into `model`; refuses files over 2 GB, non-protobuf and truncated files.
void readModelFile(const std::string& path, onnx::ModelProto& model);

struct TensorInfo {
    DType dtype = DType::Unknown;
    Shape shape;
    int64_t elements = 0;
    // Contents when the tensor is small and stored inline (never for external data).
    std::optional<std::vector<Dim>> ints;
    std::optional<std::vector<double>> floats;
};

// Validates dims (negative, absurd, too many elements) before anything else, checks that inline
// data matches the shape, and decodes contents of at most limits::kMaxKnownValueElements.
// `what` names the tensor in messages ("initializer 'fc.weight'").
TensorInfo decodeTensor(const onnx::TensorProto& t, const std::string& what);

// Converts a node's attributes. Tensor attributes become a number (one element) or a list,
// plus "<name>_dtype" (ONNX type code). Subgraph attributes throw OnnxProblem.
std::map<std::string, Attribute> convertAttributes(const onnx::NodeProto& node, const std::string& nodeLabel);

// "/layer1/layer1.0/conv1/Conv" -> "layer1.0.conv1"; "" when the name carries no scope.
std::string modulePathFromNodeName(const std::string& nodeName);
// "layer1.0.conv1.weight" -> "layer1.0.conv1"; "" for names that are not state_dict keys.
std::string modulePathFromParameterName(const std::string& name);
// Scope recorded by the torch.export-based exporter in node metadata_props
// ("pkg.torch.onnx.name_scopes"); "" when absent. Works with ONNX protos that predate
// NodeProto.metadata_props by reading the field from the unknown-field set.
std::string modulePathFromMetadata(const onnx::NodeProto& node);

// Whether a name looks like a PyTorch state_dict key ("encoder.layer.0.weight", not "input.1").
bool looksLikeStateDictName(const std::string& name);

}  // namespace ts::onnximport
