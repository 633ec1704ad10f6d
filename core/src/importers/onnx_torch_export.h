#pragma once
// What the torch.export-based ONNX exporter (torch.onnx.export(..., dynamo=True), the default since
// PyTorch 2.9) records about the model beside the graph, read from metadata_props that the ONNX 1.12
// protos we compile against do not know (they arrive as unknown fields):
//
// - GraphProto.metadata_props "pkg.torch.export.ExportedProgram.graph_signature": every input of the
//   exported program, one per line, "p_layer1_0_conv1_weight: PARAMETER target='layer1.0.conv1.weight'"
//   (kinds PARAMETER, BUFFER, CONSTANT_TENSOR, USER_INPUT).
// - ValueInfoProto.metadata_props "pkg.onnxscript.optimizer.folded_from": the values that the
//   exporter's optimizer folded into a constant initializer ("['model.layers.0.mlp.up_proj.weight']"
//   for a transposed weight), and "pkg.torch.export.graph_signature.InputSpec.kind" on the initializers
//   that stayed.
// - NodeProto.metadata_props "pkg.torch.onnx.fx_node": the FX node an ONNX node came from, whose
//   arguments name the parameters it read ("%p_model_norm_weight") even where the optimizer merged equal
//   initializers or dropped an all-zero bias; "pkg.torch.onnx.name_scopes" its module path.
#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts::onnximport {

// key -> value of a proto's metadata_props, read from its unknown fields (`fieldNumber`: 4 for
// ValueInfoProto, 9 for NodeProto, 16 for GraphProto in onnx.proto of ONNX 1.16+).
std::vector<std::pair<std::string, std::string>> metadataProps(const google::protobuf::Message& message,
                                                               int fieldNumber);

// The quoted strings of a Python list repr: "['', 'layer1', 'layer1.0']" -> {"", "layer1", "layer1.0"}.
std::vector<std::string> pythonStringList(const std::string& repr);

struct TorchExportInfo {
    bool present = false;  // the file carries a torch.export graph signature
    // Parameter, Buffer or Constant (CONSTANT_TENSOR), by target ("model.norm.weight").
    std::unordered_map<std::string, ValueKind> kinds;
    std::unordered_map<std::string, std::string> targetOfFxName;  // "p_model_norm_weight" -> target
    std::vector<std::string> parameters;                          // targets, in signature order
    // Initializer name -> the names it was folded from (exporter optimizer), or its InputSpec kind.
    std::unordered_map<std::string, std::vector<std::string>> foldedFrom;
    std::unordered_map<std::string, ValueKind> valueInfoKinds;

    bool isParameter(const std::string& target) const;
    // Parameter targets among the names `initializer` was folded from.
    std::vector<std::string> foldedParameters(const std::string& initializer) const;
    // Whether a fold from a parameter picked elements of it (an embedding or index into a table at
    // positions fixed by the export: rows of a position table, a relative-position bias gathered by
    // its index buffer), so that it does not hold the parameter's elements one for one.
    bool foldGathers(const std::string& initializer) const;
    // Targets of the parameters and buffers an FX node reads, in argument order ("%p_...", "%b_..."
    // tokens of its pkg.torch.onnx.fx_node metadata); empty without metadata.
    std::vector<std::string> tensorsReadBy(const onnx::NodeProto& node) const;
    std::vector<std::string> parametersReadBy(const onnx::NodeProto& node) const;
    // The ATen operator of that FX node ("aten.linear.default"), "" without metadata.
    std::string fxTarget(const onnx::NodeProto& node) const;
};

// Reads the signature and the value_info metadata of `graph`; `present` is false (and the maps
// empty) for files of other exporters.
TorchExportInfo readTorchExportInfo(const onnx::GraphProto& graph);

// The last dotted component: "encoder.ln.weight" -> "weight".
std::string leafName(const std::string& target);

// The shape [(2W-1)^2, heads] of a Swin/MaxViT relative-position bias table from its gathered form
// (heads x W^2 x W^2 elements: [1, heads, W^2, W^2] or [W^4, heads]); empty when the shape is not one.
Shape relativePositionTableShape(const Shape& gathered);

}  // namespace ts::onnximport
