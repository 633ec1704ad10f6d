#!/usr/bin/env python3
"""Compares the time TrainScope predicts for each convolution of a model with a PyTorch profiler trace of it.

    scripts/compare_trace_convs.py TRACE.json.gz MODEL --gpu ID --batch N [--precision P] [--step K]
                                   [--cli build/bin/trainscope-cli] [--layers]

The trace's kernels are attributed to the convolution that launched them (the innermost `aten::convolution`
forward, `convolution_backward` backward, through each kernel's launch correlation): every kernel cuDNN runs
for it counts, its layout transposes (nchwToNhwc, nhwcToNchw) and weight-gradient reductions included. The
k-th forward convolution of step K is paired with the model's k-th `Conv` layer of `predict --layers` in graph
order, backward ones in reverse; the counts must match. The model's side is the layer's forward and backward
time in an iteration (GPU work, host time apart), at the trace's batch, GPU and precision, which the trace does
not record: say them. Printed: every pair and the totals, for 1x1 convolutions (the layers' names ending in
conv1, conv3 or downsample.0 of a torchvision ResNet) and the others.
"""
import argparse
import bisect
import gzip
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def trace_convs(path, step_index):
    with gzip.open(path) if path.endswith(".gz") else open(path) as f:
        events = json.load(f)["traceEvents"]
    ops = sorted((e for e in events if e.get("cat") == "cpu_op" and e.get("ph") == "X"), key=lambda e: e["ts"])
    starts = [e["ts"] for e in ops]
    launches = {e["args"]["correlation"]: e for e in events
                if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    steps = sorted((e for e in events if e.get("name", "").startswith("ProfilerStep")), key=lambda e: e["ts"])
    if step_index >= len(steps):
        sys.exit(f"{path}: no ProfilerStep #{step_index} ({len(steps)} steps recorded)")
    step = steps[step_index]

    def enclosing(ts):  # the CPU operators around a launch, innermost first
        i = bisect.bisect_right(starts, ts) - 1
        return [o for o in ops[max(0, i - 5000):i + 1][::-1] if o["ts"] <= ts <= o["ts"] + o["dur"]]

    forward, backward = {}, {}
    for k in sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"]):
        launch = launches.get(k.get("args", {}).get("correlation"))
        if not launch or not step["ts"] <= launch["ts"] <= step["ts"] + step["dur"]:
            continue
        chain = enclosing(launch["ts"])
        bwd = [o for o in chain if "convolution_backward" in o["name"]]
        fwd = [o for o in chain if o["name"] == "aten::convolution"]
        if bwd:
            backward[bwd[0]["ts"]] = backward.get(bwd[0]["ts"], 0) + k["dur"]
        elif fwd and not any("backward" in o["name"].lower() for o in chain):
            forward[fwd[-1]["ts"]] = forward.get(fwd[-1]["ts"], 0) + k["dur"]
    return [forward[t] for t in sorted(forward)], [backward[t] for t in sorted(backward)]


def model_convs(cli, model, gpu, batch, precision):
    args = [cli, "predict", model, "--gpu", gpu, "--batch", str(batch), "--precision", precision, "--json", "--layers"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)}: {out.stderr.strip()}")
    layers = json.loads(out.stdout)["predictions"][0]["layers"]
    return [(l["name"], l["forward_ms"]["value"] * 1e3, l["backward_ms"]["value"] * 1e3)
            for l in layers if l["name"].endswith("/Conv")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("model")
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--step", type=int, default=1, help="the ProfilerStep to read, 0-based (default 1: past warm-up)")
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "bin", "trainscope-cli"))
    ap.add_argument("--layers", action="store_true", help="print every pair")
    a = ap.parse_args()
    fwd, bwd = trace_convs(a.trace, a.step)
    convs = model_convs(a.cli, a.model, a.gpu, a.batch, a.precision)
    if not (len(fwd) == len(bwd) == len(convs)):
        sys.exit(f"{a.trace}: {len(fwd)} forward and {len(bwd)} backward convolutions in step {a.step}, "
                 f"{len(convs)} in {a.model}: they cannot be paired")
    bwd = bwd[::-1]  # backward runs the layers in reverse
    totals = {}
    for (name, pf, pb), mf, mb in zip(convs, fwd, bwd):
        kind = "1x1" if name.split("/")[0].endswith(("conv1", "conv3", "downsample.0")) and "." in name else "other"
        t = totals.setdefault(kind, [0, 0, 0, 0])
        for i, v in enumerate((mf, pf, mb, pb)):
            t[i] += v
        if a.layers:
            print(f"{name:34} forward {mf:7.1f} us, predicted {pf:7.1f} ({100 * (pf / mf - 1):+4.0f}%)  "
                  f"backward {mb:7.1f}, predicted {pb:7.1f} ({100 * (pb / mb - 1):+4.0f}%)")
    all_ = [sum(t[i] for t in totals.values()) for i in range(4)]
    for kind, t in sorted(totals.items()) + [("all", all_)]:
        print(f"{kind:5} convolutions: forward {t[0] / 1e3:6.2f} ms measured, {t[1] / 1e3:6.2f} predicted "
              f"({100 * (t[1] / t[0] - 1):+.0f}%); backward {t[2] / 1e3:6.2f} measured, {t[3] / 1e3:6.2f} predicted "
              f"({100 * (t[3] / t[2] - 1):+.0f}%)")


if __name__ == "__main__":
    main()
