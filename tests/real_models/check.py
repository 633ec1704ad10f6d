#!/usr/bin/env python3
"""Checks `trainscope-cli inspect FILE --json` on one generated model against PyTorch's own figures.

    check.py --cli CLI --dir GENERATED_DIR --model NAME --format onnx|torchscript|torchscript_scripted

- totals.parameters must equal PyTorch's sum(p.numel() for p in model.parameters()) exactly.
- The forward FLOPs of all Conv/ConvTranspose/Gemm/MatMul/Einsum layers (and the two products of each attention
  the importer reads as one ScaledDotProductAttention) must equal torch.utils.flop_counter's count of
  the convolutions and matrix products of the same forward (which generate.py also cross-checks against forward
  hooks on nn.Conv*/nn.Linear/Conv1D: hooks + attention products), plus the bias adds TrainScope counts inside
  those operators (docs/costs.md): Conv adds N*Cout*outSpatial when it has a bias, Gemm adds its C (rank-2
  linear layers with a bias, HF Conv1D). Rank>2 linear layers become MatMul + Add, whose Add is not counted here.
- Every nn.Conv*/nn.Linear module path whose forward runs appears as a layer path.
- With --batch-scaling, the batch stays a free size: the FLOPs at twice the batch grow by what PyTorch's do
  (the manifest's "flops_doubled"; twice as many where it has none): a file exported at a fixed batch is
  not frozen at it, and work done once a step (Swin V2's position-bias MLP) does not grow.
- Where the manifest has PyTorch's saved-for-backward bytes for this format (generate_exports.py: autograd's
  saved tensors in the training forward the file holds), totals.activation_bytes must be within
  --saved-tolerance percent of them (default 3): activations the exporters write as several nodes (SiLU,
  GELU) and no-op nodes (dropout at p = 0, a cast to the same dtype) must save what PyTorch saves. What is
  left is views that keep a larger storage alive (ViT's classifier reads the class token as a view of the
  whole sequence's output).
- The importer's notes (what the file cannot give exactly) are none, or the one the manifest expects for that
  format, with the parameter count the file can give ("expected", generate_exports.py) and the FLOPs of a
  layer the exporter ran at export time ("folded_flops").
Exits 77 (ctest: skipped) when the generated models, or this format of the model, are absent.
"""
import argparse
import json
import os
import subprocess
import sys

SKIP = 77
COUNTED = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Einsum"}  # torch.einsum: MaxViT's attention


def attention_products(layer):
    """The two matrix products of an attention the importer read as one operator (q k^T and P v), whose
    forward FLOPs also hold the softmax's. Every attention of the generated models is a self-attention
    whose value heads are as wide as its query heads: output [N, H, T, D], keys of length T."""
    n, h, t, d = layer["output_shape"]
    return 4 * n * h * t * t * d


def counted_flops(layers):
    return sum(l["forward_flops"] for l in layers if l["op"] in COUNTED) + sum(
        attention_products(l) for l in layers if l["op"] == "ScaledDotProductAttention")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--format", required=True)
    ap.add_argument("--batch-scaling", action="store_true")
    ap.add_argument("--saved-tolerance", type=float, default=3.0)
    args = ap.parse_args()
    manifest_path = os.path.join(args.dir, "manifest.json")
    if not os.path.exists(manifest_path):
        print(f"SKIP: {manifest_path} is absent (the generator was skipped)")
        return SKIP
    with open(manifest_path) as f:
        model = json.load(f)["models"][args.model]
    if args.format not in model["files"]:
        print(f"SKIP: {args.model} has no {args.format} file: {model.get('export_failures', {}).get(args.format)}")
        return SKIP
    path = os.path.join(args.dir, model["files"][args.format])
    spec = path + (model["torchscript_options"] if args.format.startswith("torchscript") else "")
    expected = model.get("expected", {}).get(args.format, {})
    cmd = [args.cli, "inspect", spec, "--json"] + model["cli_args"]
    print(" ".join(cmd))
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if run.returncode != 0:
        print(f"FAIL: exit status {run.returncode}: {run.stderr.strip()}")
        return 1
    report = json.loads(run.stdout)
    failures = []

    params = report["totals"]["parameters"]
    want = expected.get("parameters", model["parameters"])
    if params != want:
        failures.append(f"parameters {params} != PyTorch's {model['parameters']}" +
                        (f" less what the file cannot hold, {want}" if want != model["parameters"] else ""))
    notes = report["model"].get("notes", [])
    if expected.get("note") and not any(expected["note"] in n for n in notes):
        failures.append(f"no note says \"{expected['note']}\" (notes: {notes})")
    elif not expected.get("note") and notes:
        failures.append(f"unexpected notes: {notes}")

    layers = report["layers"]
    measured = counted_flops(layers)
    full = model["conv_matmul_flops_counter"] + model["conv_bias_flops"] + model["gemm_bias_flops"]
    folded = expected.get("folded_flops", 0)  # a layer the exporter ran at export time (on a buffer)
    if measured != full - folded:
        failures.append(f"conv/gemm/matmul forward FLOPs {measured:.0f} != {full - folded} (flop counter "
                        f"{model['conv_matmul_flops_counter']} + conv bias {model['conv_bias_flops']} + gemm bias "
                        f"{model['gemm_bias_flops']} - folded {folded}); ratio {measured / (full - folded):.6f}")

    if args.batch_scaling:
        doubled = [a if a != str(model["batch"]) else str(2 * model["batch"]) for a in model["cli_args"]]
        run2 = subprocess.run([args.cli, "inspect", spec, "--json"] + doubled, capture_output=True, text=True,
                              timeout=240)
        if run2.returncode != 0:
            failures.append(f"at twice the batch: exit status {run2.returncode}: {run2.stderr.strip()}")
        else:
            at2 = counted_flops(json.loads(run2.stdout)["layers"])
            # PyTorch's own growth where the generator measured it (work done once a step does not grow).
            grown = model["flops_doubled"] - full if "flops_doubled" in model else measured
            if at2 != measured + grown:
                failures.append(f"conv/gemm/matmul forward FLOPs at batch {2 * model['batch']}: {at2:.0f}, not "
                                f"{measured:.0f} + {grown:.0f} (is the batch fixed?)")

    saved_want = model.get("saved_bytes", {}).get(args.format)
    if saved_want:
        saved = report["totals"]["activation_bytes"]
        error = 100 * (saved / saved_want - 1)
        print(f"saved for backward: {saved:.0f} bytes, PyTorch's autograd {saved_want} ({error:+.2f}%)")
        if abs(error) > args.saved_tolerance:
            failures.append(f"activation_bytes {saved:.0f} is {error:+.2f}% from the {saved_want} bytes PyTorch's "
                            f"autograd saves (tolerance {args.saved_tolerance}%)")

    paths = {l["path"] for l in layers}
    missing = [p for p in model["conv_linear_paths"] if p not in paths]
    if missing:
        failures.append(f"{len(missing)} conv/linear module paths have no layer, e.g. {missing[:3]}")

    for l in layers:
        if any(d is None or (isinstance(d, (int, float)) and d < 0) for d in l["output_shape"]):
            failures.append(f"layer {l.get('name', l['path'])} has output shape {l['output_shape']}")
            break

    print(f"{args.model} ({args.format}): {len(layers)} layers, {params} parameters, conv/matmul forward "
          f"{measured:.4g} FLOP (expected {full - folded:.4g})")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
