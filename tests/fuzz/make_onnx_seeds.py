#!/usr/bin/env python3
"""Writes small ONNX seeds for fuzz_onnx into tests/fuzz/corpus/onnx (names are content hashes, as
scripts/fuzz.sh --merge names them): the constructs of the torch.export-based exporter that the importer
reads (graph signature, folded and merged initializers, fused BatchNorm, dropped biases, a class token
expanded to the batch, gathered tables, masks of the fixed batch, batch-and-heads reshapes) and the shape
arithmetic of torchvision's Swin (pads computed from the input's sizes). Each is the size of a unit test's
model (tests/unit/test_onnx_torch_export.cpp), far under the 4 KB seed limit.

    make_onnx_seeds.py [CORPUS_DIR]

Needs the onnx package (the test virtual environment has it).
"""
import hashlib
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def meta(proto, key, value):
    entry = proto.metadata_props.add()
    entry.key, entry.value = key, value


def fx(node, aten, args):
    meta(node, "pkg.torch.onnx.fx_node",
         f"%out : [num_users=1] = call_function[target=torch.ops.aten.{aten}](args = ({args}), kwargs = {{}})")


def weight(name, shape):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def folded(graph, name, sources):
    vi = graph.value_info.add()
    vi.name = name
    meta(vi, "pkg.onnxscript.optimizer.folded_from", repr(sources))


def model(nodes, inputs, outputs, inits, signature=None, folds=(), opset=20):
    graph = helper.make_graph(nodes, "seed", inputs, outputs, inits)
    if signature is not None:
        meta(graph, "pkg.torch.export.ExportedProgram.graph_signature", signature)
    for name, sources in folds:
        folded(graph, name, sources)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def out(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def seeds():
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    # Parameters, a folded transposed weight, a rotary table from a buffer, a buffer scale, a causal mask of
    # the fixed batch, a batch-and-heads reshape.
    mm = helper.make_node("MatMul", ["s", "val_5"], ["h"], "node_linear")
    meta(mm, "pkg.torch.onnx.name_scopes", "['', 'proj', 'linear']")
    fx(mm, "linear.default", "%mul, %p_proj_weight")
    yield model(
        [helper.make_node("Gather", ["embed.weight", "ids"], ["e"], "node_embedding"),
         helper.make_node("Mul", ["e", "embed_scale"], ["s"], "node_mul"), mm,
         helper.make_node("Mul", ["h", "unsqueeze_3"], ["r"], "node_mul_1"),
         helper.make_node("Reshape", ["r", "val_9"], ["heads"], "node_view"),
         helper.make_node("Add", ["heads", "val_12"], ["y"], "node_add")],
        [helper.make_tensor_value_info("ids", i64, [2, 4])], [out("y")],
        [weight("embed.weight", [6, 4]), weight("val_5", [4, 4]), weight("unsqueeze_3", [1, 4, 4]),
         weight("embed_scale", []), ints("val_9", [4, 4, 2]), weight("val_12", [2, 1, 1, 2])],
        "\n# inputs\np_embed_weight: PARAMETER target='embed.weight'\np_proj_weight: PARAMETER target='proj.weight'\n"
        "b_rope_inv_freq: BUFFER target='rope.inv_freq' persistent=False\n"
        "b_embed_scale: BUFFER target='embed_scale' persistent=False\nids: USER_INPUT\n",
        [("val_5", ["proj.weight"]), ("unsqueeze_3", ["arange", "cos", "rope.inv_freq", "val_1"]),
         ("val_12", ["arange_1", "expand_2", "val_3"])])

    # Merged norms (FX names the parameters) and a folded 1 + weight read by two modules.
    ln1 = helper.make_node("LayerNormalization", ["x", "ln1.weight", "ln1.bias"], ["a"], "node_layer_norm")
    fx(ln1, "layer_norm.default", "%x, [4], %p_ln1_weight, %p_ln1_bias, 1e-05")
    ln2 = helper.make_node("LayerNormalization", ["a", "ln1.weight", "ln1.bias"], ["b"], "node_layer_norm_1")
    fx(ln2, "layer_norm.default", "%a, [4], %p_ln2_weight, %p_ln2_bias, 1e-05")
    m1 = helper.make_node("Mul", ["b", "add_4"], ["c"], "node_mul")
    meta(m1, "pkg.torch.onnx.name_scopes", "['', 'norm1', 'mul']")
    m2 = helper.make_node("Mul", ["c", "add_4"], ["d"], "node_mul_1")
    meta(m2, "pkg.torch.onnx.name_scopes", "['', 'norm2', 'mul_1']")
    yield model([ln1, ln2, m1, m2], [helper.make_tensor_value_info("x", f32, [2, 4])], [out("d")],
                [weight("ln1.weight", [4]), weight("ln1.bias", [4]), weight("add_4", [4])],
                "p_ln1_weight: PARAMETER target='ln1.weight'\np_ln1_bias: PARAMETER target='ln1.bias'\n"
                "p_ln2_weight: PARAMETER target='ln2.weight'\np_ln2_bias: PARAMETER target='ln2.bias'\n"
                "p_norm1_weight: PARAMETER target='norm1.weight'\np_norm2_weight: PARAMETER target='norm2.weight'\n",
                [("add_4", ["norm1.weight", "val_3"])])

    # A BatchNorm fused into its Conv, a BatchNorm whose statistics were merged with its parameters, and a
    # Gemm whose zero bias was dropped.
    conv = helper.make_node("Conv", ["x", "conv.weight", "conv.weight_bias"], ["y"], "node_Conv_5", pads=[1, 1, 1, 1])
    fx(conv, "_native_batch_norm_legit_no_training.default",
       "%conv2d, %p_bn_weight, %p_bn_bias, %b_bn_running_mean, %b_bn_running_var, 0.1, 1e-05")
    bn = helper.make_node("BatchNormalization", ["y", "bn2.weight", "bn2.bias", "bn2.bias", "bn2.weight"], ["z"],
                          "node_bn_2")
    fx(bn, "_native_batch_norm_legit_no_training.default",
       "%getitem, %p_bn2_weight, %p_bn2_bias, %b_bn2_running_mean, %b_bn2_running_var, 0.1, 1e-05")
    gemm = helper.make_node("Gemm", ["f", "fc.weight"], ["o"], "node_Gemm_7", transB=1)
    fx(gemm, "linear.default", "%flatten, %p_fc_weight, %p_fc_bias")
    yield model([conv, bn, helper.make_node("Flatten", ["z"], ["f"], "node_flatten"), gemm],
                [helper.make_tensor_value_info("x", f32, [2, 2, 2, 2])], [out("o")],
                [weight("conv.weight", [2, 2, 3, 3]), weight("conv.weight_bias", [2]), weight("bn2.weight", [2]),
                 weight("bn2.bias", [2]), weight("fc.weight", [3, 8])],
                "p_conv_weight: PARAMETER target='conv.weight'\np_bn_weight: PARAMETER target='bn.weight'\n"
                "p_bn_bias: PARAMETER target='bn.bias'\nb_bn_running_mean: BUFFER target='bn.running_mean'\n"
                "b_bn_running_var: BUFFER target='bn.running_var'\np_bn2_weight: PARAMETER target='bn2.weight'\n"
                "p_bn2_bias: PARAMETER target='bn2.bias'\nb_bn2_running_mean: BUFFER target='bn2.running_mean'\n"
                "b_bn2_running_var: BUFFER target='bn2.running_var'\np_fc_weight: PARAMETER target='fc.weight'\n"
                "p_fc_bias: PARAMETER target='fc.bias'\n")

    # A class token expanded to the batch, a relative-position table gathered for a 2x2 window, position rows.
    yield model(
        [helper.make_node("Concat", ["expand", "x"], ["c"], "node_cat", axis=1),
         helper.make_node("Add", ["scores", "unsqueeze"], ["s"], "node_add"),
         helper.make_node("Add", ["c", "embedding_1"], ["p"], "node_add_1")],
        [helper.make_tensor_value_info("x", f32, [2, 2, 4]), helper.make_tensor_value_info("scores", f32, [2, 2, 4, 4])],
        [out("s"), out("p")],
        [weight("expand", [2, 1, 4]), weight("unsqueeze", [1, 2, 4, 4]), weight("embedding_1", [1, 3, 4])],
        "p_class_token: PARAMETER target='class_token'\n"
        "p_attn_relative_position_bias_table: PARAMETER target='attn.relative_position_bias_table'\n"
        "b_attn_relative_position_index: BUFFER target='attn.relative_position_index'\n"
        "p_wpe_weight: PARAMETER target='wpe.weight'\n",
        [("expand", ["class_token", "val_6"]),
         ("unsqueeze", ["attn.relative_position_bias_table", "attn.relative_position_index", "index"]),
         ("embedding_1", ["arange", "wpe.weight"])])

    # Swin's window padding as the legacy exporter writes it (opset 17): pads from the input's sizes.
    k = [ints("one", 1), ints("seven", 7), ints("zero", 0), ints("axis0", [0]), ints("pairs", [-1, 2]),
         ints("flat", [-1]), ints("eight", [8]), ints("m1", [-1]), ints("start", [-9223372036854775807]),
         ints("axes", [0]), ints("steps", [-1])]
    yield model(
        [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "one"], ["h"], axis=0),
         helper.make_node("Mod", ["h", "seven"], ["hm"]), helper.make_node("Sub", ["seven", "hm"], ["hs"]),
         helper.make_node("Mod", ["hs", "seven"], ["pad"]), helper.make_node("Unsqueeze", ["zero", "axis0"], ["z"]),
         helper.make_node("Unsqueeze", ["pad", "axis0"], ["p"]),
         helper.make_node("Concat", ["z", "z", "z", "p", "z", "p"], ["six"], axis=0),
         helper.make_node("Shape", ["six"], ["n6"]), helper.make_node("Sub", ["eight", "n6"], ["rest"]),
         helper.make_node("ConstantOfShape", ["rest"], ["tail"], value=numpy_helper.from_array(np.zeros(1, np.int64))),
         helper.make_node("Concat", ["six", "tail"], ["all"], axis=0),
         helper.make_node("Reshape", ["all", "pairs"], ["by_dim"]),
         helper.make_node("Slice", ["by_dim", "m1", "start", "axes", "steps"], ["rev"]),
         helper.make_node("Transpose", ["rev"], ["be"], perm=[1, 0]),
         helper.make_node("Reshape", ["be", "flat"], ["pads_i"]),
         helper.make_node("Cast", ["pads_i"], ["pads"], to=TensorProto.INT64),
         helper.make_node("Pad", ["x", "pads"], ["y"])],
        [helper.make_tensor_value_info("x", f32, ["batch", 5, 5, 2])], [out("y")], k, opset=17)


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "onnx")
    os.makedirs(corpus, exist_ok=True)
    for m in seeds():
        data = m.SerializeToString()
        assert len(data) <= 4096, len(data)
        with open(os.path.join(corpus, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
        print(len(data), "bytes")


if __name__ == "__main__":
    main()
