#!/usr/bin/env python3
"""Writes the corpus of bad model files (run once; the files are committed).

Each file is paired in expected.tsv with the exit status and a fragment of the one-line
error TrainScope must print. Needs the `onnx` Python package."""
import json
import os

import onnx
from onnx import TensorProto, helper

here = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    with open(os.path.join(here, name), "wb") as f:
        f.write(model.SerializeToString())


def graph_model(nodes, inputs, outputs, initializers=(), opset=17):
    g = helper.make_graph(nodes, "bad", inputs, outputs, list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="trainscope-corpus")
    m.ir_version = 8
    return m


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])

# A valid model first, to truncate.
w = helper.make_tensor("fc.weight", TensorProto.FLOAT, [4, 4], [0.0] * 16)
good = graph_model([helper.make_node("Gemm", ["x", "fc.weight"], ["y"], name="/fc/Gemm", transB=1)], [x], [y], [w])
data = good.SerializeToString()
with open(os.path.join(here, "truncated.onnx"), "wb") as f:
    f.write(data[: len(data) // 2])

with open(os.path.join(here, "wrong_magic.onnx"), "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)

# Cycle: a -> b -> a.
save(graph_model([helper.make_node("Relu", ["b"], ["a"], name="/r1/Relu"),
                  helper.make_node("Relu", ["a"], ["b"], name="/r2/Relu"),
                  helper.make_node("Add", ["x", "a"], ["y"], name="/add/Add")], [x], [y]), "cyclic.onnx")

save(graph_model([helper.make_node("FancyOp", ["x"], ["y"], name="/block/FancyOp")], [x], [y]), "unknown_operator.onnx")

neg = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", -7])
save(graph_model([helper.make_node("Relu", ["x"], ["y"], name="/Relu")], [neg], [y]), "negative_dim.onnx")

# An initializer claiming 2^20 x 2^20 x 2^10 floats (4 PB) with no data: must not be allocated.
huge = TensorProto()
huge.name = "fc.weight"
huge.data_type = TensorProto.FLOAT
huge.dims.extend([1 << 20, 1 << 20, 1 << 10])
save(graph_model([helper.make_node("MatMul", ["x", "fc.weight"], ["y"], name="/fc/MatMul")], [x], [y], [huge]),
     "terabyte_tensor.onnx")

# Weight named by the node but neither an initializer nor a graph input.
save(graph_model([helper.make_node("Gemm", ["x", "fc.weight"], ["y"], name="/fc/Gemm", transB=1)], [x], [y]),
     "missing_initializer.onnx")

# Shape mismatch: Gemm 4 -> weight expecting 8 inputs.
w8 = helper.make_tensor("fc.weight", TensorProto.FLOAT, [4, 8], [0.0] * 32)
save(graph_model([helper.make_node("Gemm", ["x", "fc.weight"], ["y"], name="/fc/Gemm", transB=1)], [x], [y], [w8]),
     "shape_mismatch.onnx")

with open(os.path.join(here, "empty.onnx"), "wb") as f:
    pass

# A float Constant of shape [4] whose values are all in int64_data, float_data empty (issue 23: the
# count was checked against all typed fields together, the values read from float_data alone,
# here through a null pointer: the CLI ended with a segmentation fault).
short = TensorProto()
short.data_type = TensorProto.FLOAT
short.dims.append(4)
short.int64_data.extend([0, 0, 0, 0])
save(graph_model([helper.make_node("Constant", [], ["c"], name="/Constant", value=short),
                  helper.make_node("Add", ["x", "c"], ["y"], name="/add/Add")], [x], [y]), "short_float_data.onnx")

# A torch.export-based export whose folded initializer claims to be rows of a parameter it cannot be
# rows of: 15 elements of a table of rows of 4.
fold = graph_model([helper.make_node("Identity", ["table.weight"], ["t"], name="node_identity"),
                    helper.make_node("Add", ["x", "index_3"], ["y"], name="node_add")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 3])],
                   [y, helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
                   [helper.make_tensor("table.weight", TensorProto.FLOAT, [4, 4], [0.0] * 16),
                    helper.make_tensor("index_3", TensorProto.FLOAT, [5, 3], [0.0] * 15)], opset=20)
signature = fold.graph.metadata_props.add()
signature.key = "pkg.torch.export.ExportedProgram.graph_signature"
signature.value = "p_table_weight: PARAMETER target='table.weight'\nx: USER_INPUT\n"
folded = fold.graph.value_info.add()
folded.name = "index_3"
record = folded.metadata_props.add()
record.key, record.value = "pkg.onnxscript.optimizer.folded_from", "['index', 'table.weight']"
save(fold, "torch_export_fold_mismatch.onnx")

# ---- JSON model format ----
def write_json(name, obj_or_text):
    with open(os.path.join(here, name), "w") as f:
        f.write(obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text, indent=1))

write_json("not_json.json", "{ this is not json")
write_json("deep_nesting.json", "[" * 100000 + "]" * 100000)
write_json("wrong_version.json", {"trainscope_model": 7, "inputs": [], "layers": []})
write_json("unknown_layer.json", {"trainscope_model": 1, "name": "m",
                                   "inputs": [{"name": "x", "shape": ["N", 8]}],
                                   "layers": [{"name": "fancy", "type": "Transmogrify"}]})
write_json("absurd_dim.json", {"trainscope_model": 1, "name": "m",
                                "inputs": [{"name": "x", "shape": ["N", 99999999999999]}],
                                "layers": [{"name": "fc", "type": "Linear", "out_features": 4}]})
write_json("dangling_reference.json", {"trainscope_model": 1, "name": "m",
                                        "inputs": [{"name": "x", "shape": ["N", 8]}],
                                        "layers": [{"name": "add", "type": "Add", "inputs": ["x", "nowhere"]}]})
write_json("channel_mismatch.json", {"trainscope_model": 1, "name": "m",
                                      "inputs": [{"name": "x", "shape": ["N", 3, 8, 8]}],
                                      "layers": [{"name": "c1", "type": "Conv2d", "out_channels": 4, "kernel_size": 3},
                                                 {"name": "m", "type": "MatMul", "inputs": ["c1", "x"]}]})

# ---- TorchScript ----
with open(os.path.join(here, "not_torchscript.pt"), "wb") as f:
    f.write(b"PK\x03\x04" + b"\x00" * 64)
with open(os.path.join(here, "text_file.pt"), "w") as f:
    f.write("hello, this is not a model\n")
