#!/usr/bin/env python3
"""Checks `trainscope-cli inspect FILE --json` on one generated model against PyTorch's own figures.

    check.py --cli CLI --dir GENERATED_DIR --model NAME --format onnx|torchscript|torchscript_scripted

- totals.parameters must equal PyTorch's sum(p.numel() for p in model.parameters()) exactly.
- The forward FLOPs of all Conv/ConvTranspose/Gemm/MatMul layers must equal torch.utils.flop_counter's count of
  the convolutions and matrix products of the same forward (which generate.py also cross-checks against forward
  hooks on nn.Conv*/nn.Linear/Conv1D: hooks + attention products), plus the bias adds TrainScope counts inside
  those operators (docs/costs.md): Conv adds N*Cout*outSpatial when it has a bias, Gemm adds its C (rank-2
  linear layers with a bias, HF Conv1D). Rank>2 linear layers become MatMul + Add, whose Add is not counted here.
- Every nn.Conv*/nn.Linear module path appears as a layer path.
Exits 77 (ctest: skipped) when the generated models are absent.
"""
import argparse
import json
import os
import subprocess
import sys

SKIP = 77
COUNTED = {"Conv", "ConvTranspose", "Gemm", "MatMul"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--format", required=True)
    args = ap.parse_args()
    manifest_path = os.path.join(args.dir, "manifest.json")
    if not os.path.exists(manifest_path):
        print(f"SKIP: {manifest_path} is absent (the generator was skipped)")
        return SKIP
    with open(manifest_path) as f:
        model = json.load(f)["models"][args.model]
    path = os.path.join(args.dir, model["files"][args.format])
    spec = path + (model["torchscript_options"] if args.format.startswith("torchscript") else "")
    cmd = [args.cli, "inspect", spec, "--json"] + model["cli_args"]
    print(" ".join(cmd))
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if run.returncode != 0:
        print(f"FAIL: exit status {run.returncode}: {run.stderr.strip()}")
        return 1
    report = json.loads(run.stdout)
    failures = []

    params = report["totals"]["parameters"]
    if params != model["parameters"]:
        failures.append(f"parameters {params} != PyTorch's {model['parameters']}")

    layers = report["layers"]
    measured = sum(l["forward_flops"] for l in layers if l["op"] in COUNTED)
    expected = model["conv_matmul_flops_counter"] + model["conv_bias_flops"] + model["gemm_bias_flops"]
    if measured != expected:
        failures.append(f"conv/gemm/matmul forward FLOPs {measured:.0f} != {expected} (flop counter "
                        f"{model['conv_matmul_flops_counter']} + conv bias {model['conv_bias_flops']} + gemm bias "
                        f"{model['gemm_bias_flops']}); ratio {measured / expected:.6f}")

    paths = {l["path"] for l in layers}
    missing = [p for p in model["conv_linear_paths"] if p not in paths]
    if missing:
        failures.append(f"{len(missing)} conv/linear module paths have no layer, e.g. {missing[:3]}")

    for l in layers:
        if any(d is None or (isinstance(d, (int, float)) and d < 0) for d in l["output_shape"]):
            failures.append(f"layer {l.get('name', l['path'])} has output shape {l['output_shape']}")
            break

    print(f"{args.model} ({args.format}): {len(layers)} layers, {params} parameters, conv/matmul forward "
          f"{measured:.4g} FLOP (expected {expected:.4g})")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
