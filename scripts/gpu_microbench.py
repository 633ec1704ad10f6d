#!/usr/bin/env python3
"""Times, on the local GPU, what the whole-iteration model charges without a measurement of its own
(docs/gpu-checkup.md, the `microbench` stage of scripts/gpu-checkup.sh; docs/prediction.md says where
each is used):

  gemm   an LM head's three GEMMs (logits, input gradient, weight gradient) at widths aligned to 64, to 8,
         even but not a multiple of 8, and odd, in bf16, fp16 and TF32: the time per FLOP against the
         64-aligned width is what kOddWidthGemmSlowdown (3, Netflix's published figure) stands for in
         16 bits, and what is not charged for the others;
  norm   instance and batch normalisation, forward and backward, on an nnU-Net 3D activation, in passes
         over the tensor (a copy reads and writes it once: two passes): the statistics pass charged to
         both, and instance norm on a channels-last fp16 tensor (the copies charged to it);
  conv3d nnU-Net's 3x3x3 convolution of 32 channels on 128^3 voxels, forward and backward, in TF32
         (channels-first, as its TF32 runs) and fp16 both ways (channels-last as its AMP runs): the rate
         against the one fitted on 2D networks, and what channels-first costs at 16 bits.

Writes one JSON file and prints a line per finding; the last line sums them up for the checkup's summary.
--quick runs tiny shapes (the checkup's dry run on the CPU). No figure here is used by the predictions:
they are the measurements those constants wait for.
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def timed_ms(fn, device, warmup, reps):
    """Median milliseconds of fn() over reps calls after warmup calls (CUDA events on a GPU)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def dtype_of(name):
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}[name]


def with_tf32(enabled):
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled


def gemm_alignment(device, quick, warmup, reps):
    tokens, hidden = (64, 64) if quick else (8192, 1024)
    # Widths: a multiple of 64, of 8, even but not of 8, odd (GPT-2's 50,257 and its padded 50,304).
    widths = [64, 56, 60, 61] if quick else [50304, 50264, 50260, 50257]
    rows = []
    for precision in ("bf16", "fp16", "tf32"):
        with_tf32(precision == "tf32")
        dt = dtype_of(precision)
        for n in widths:
            x = torch.randn(tokens, hidden, device=device, dtype=dt)
            w = torch.randn(n, hidden, device=device, dtype=dt)
            dy = torch.randn(tokens, n, device=device, dtype=dt)
            flops = 2.0 * tokens * hidden * n
            row = {"precision": precision, "tokens": tokens, "hidden": hidden, "width": n}
            for name, fn in (("logits", lambda: x @ w.t()), ("input_gradient", lambda: dy @ w),
                             ("weight_gradient", lambda: dy.t() @ x)):
                ms = timed_ms(fn, device, warmup, reps)
                row[name + "_ms"] = ms
                row[name + "_tflops"] = flops / ms / 1e9
            row["total_ms"] = row["logits_ms"] + row["input_gradient_ms"] + row["weight_gradient_ms"]
            rows.append(row)
            del x, w, dy
    with_tf32(False)
    findings = []
    for precision in ("bf16", "fp16", "tf32"):
        mine = [r for r in rows if r["precision"] == precision]
        base = mine[0]["total_ms"] / mine[0]["width"]  # per output column: FLOPs scale with the width
        for r in mine:
            r["time_per_flop_vs_aligned"] = (r["total_ms"] / r["width"]) / base
        findings.append("%s: %s" % (precision, ", ".join(
            "%d %.2fx" % (r["width"], r["time_per_flop_vs_aligned"]) for r in mine[1:])))
    return rows, "gemm time per FLOP against width %d: %s" % (widths[0], "; ".join(findings))


def normalisation_passes(device, quick, warmup, reps):
    shape = (1, 4, 8, 8, 8) if quick else (2, 32, 128, 128, 128)
    rows = []
    # (precision, channels-last): PyTorch's instance norm copies a channels-last input to channels-first.
    cases = [("fp32", False), ("fp16", False), ("fp16", True)]
    for precision, channels_last in cases:
        dt = dtype_of(precision)
        fmt = torch.channels_last_3d if channels_last else torch.contiguous_format
        x = torch.randn(shape, device=device, dtype=dt).to(memory_format=fmt).requires_grad_()
        weight = torch.ones(shape[1], device=device, dtype=dt, requires_grad=True)
        bias = torch.zeros(shape[1], device=device, dtype=dt, requires_grad=True)
        grad = torch.randn(shape, device=device, dtype=dt).to(memory_format=fmt)
        copy_ms = timed_ms(lambda: x.detach().clone(), device, warmup, reps)  # one read, one write
        per_pass = copy_ms / 2
        ops = {"instance_norm": lambda: F.instance_norm(x, weight=weight, bias=bias, use_input_stats=True)}
        if not channels_last:
            ops["batch_norm"] = lambda: F.batch_norm(x, None, None, weight, bias, training=True)
        for name, op in ops.items():
            forward_ms = timed_ms(op, device, warmup, reps)
            y = op()  # backward alone: the graph kept between calls
            backward_ms = timed_ms(lambda: torch.autograd.grad(y, (x, weight, bias), grad, retain_graph=True),
                                   device, warmup, reps)
            rows.append({"op": name, "precision": precision, "channels_last": channels_last, "shape": list(shape),
                         "copy_ms": copy_ms,
                         "forward_ms": forward_ms, "backward_ms": backward_ms,
                         "forward_passes": forward_ms / per_pass, "backward_passes": backward_ms / per_pass})
            del y
        del x, grad
    summary = ", ".join("%s %s%s %.1f+%.1f" % (r["op"], r["precision"], " channels-last" if r["channels_last"] else "",
                                                r["forward_passes"], r["backward_passes"]) for r in rows)
    return rows, "passes over the tensor forward+backward (charged 3+5; 7+9 channels-last): " + summary


def conv3d_rates(device, quick, warmup, reps):
    n, c, side = (1, 4, 8) if quick else (2, 32, 128)
    torch.backends.cudnn.benchmark = True
    # TF32 channels-first as nnU-Net's TF32 runs; fp16 both ways (its AMP runs are channels-last; the
    # model charges cuDNN's transposes channels-first).
    cases = [("tf32", False), ("fp16", False), ("fp16", True)]
    rows = []
    for precision, channels_last in cases:
        with_tf32(precision == "tf32")
        dt = dtype_of(precision)
        fmt = torch.channels_last_3d if channels_last else torch.contiguous_format
        x = torch.randn(n, c, side, side, side, device=device, dtype=dt).to(memory_format=fmt).requires_grad_()
        w = torch.randn(c, c, 3, 3, 3, device=device, dtype=dt).to(memory_format=fmt).requires_grad_()
        grad = torch.randn(n, c, side, side, side, device=device, dtype=dt).to(memory_format=fmt)
        flops = 2.0 * n * c * c * 27 * side ** 3
        forward_ms = timed_ms(lambda: F.conv3d(x, w, padding=1), device, warmup, reps)
        y = F.conv3d(x, w, padding=1)  # backward alone (data and weight gradients): the graph kept
        backward_ms = timed_ms(lambda: torch.autograd.grad(y, (x, w), grad, retain_graph=True), device, warmup, reps)
        rows.append({"precision": precision, "channels_last": channels_last, "shape": [n, c, side, side, side],
                     "forward_ms": forward_ms, "backward_ms": backward_ms,
                     "forward_tflops": flops / forward_ms / 1e9, "backward_tflops": 2 * flops / backward_ms / 1e9})
        del x, w, grad, y
    with_tf32(False)
    return rows, "conv3d %dx%d^3 TFLOP/s forward/backward: %s" % (c, side, ", ".join(
        "%s%s %.1f/%.1f" % (r["precision"], " channels-last" if r["channels_last"] else "", r["forward_tflops"],
                            r["backward_tflops"]) for r in rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    ap.add_argument("--quick", action="store_true", help="tiny shapes, few repetitions (the dry run)")
    a = ap.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        print("gpu_microbench.py: no CUDA device (use --device cpu for a dry run)", file=sys.stderr)
        return 4
    device = torch.device(a.device)
    warmup, reps = (1, 3) if a.quick else (5, 20)
    result = {"format": "trainscope-microbench", "version": 1, "torch": torch.__version__,
              "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
              "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu", "quick": a.quick}
    lines = []
    for key, bench in (("gemm", gemm_alignment), ("norm", normalisation_passes), ("conv3d", conv3d_rates)):
        rows, line = bench(device, a.quick, warmup, reps)
        result[key] = rows
        lines.append(line)
        print(line, flush=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print("%d GEMM widths, %d normalisations, %d convolutions timed on %s" % (
        len(result["gemm"]), len(result["norm"]), len(result["conv3d"]), result["device"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
