#!/usr/bin/env python3
"""Measures the host's dispatch time per operator in PyTorch profiler traces of real training jobs.

    scripts/measure_host_dispatch.py [TRACE.json.gz ...] [--profiler-us-per-event PLAIN SHAPES] [--json]
    scripts/measure_host_dispatch.py --measure-profiler-cost   (needs torch and transformers: the
                                                              test virtual environment's python)

The whole-iteration model (predictors/src/iteration/operation_times.cpp, StreamModel::shipped())
charges the host `hostForwardUs` for each operator's forward and `hostBackwardUs` for each operator's
backward; views and shape arithmetic take none. This script measures the same figures where a trace
annotates its passes (`## forward ##`) and where PyTorch's autograd engine runs the backward:

  forward   the annotated forward's wall time on its thread, less the time spent inside
            synchronising CUDA calls (cudaStreamSynchronize, cudaMemcpy, ...) and less the profiler's
            own cost per recorded event, divided by the top-level operators that are not views
            (what the model counts): Python, module calls and view operators are part of it.
  backward  each backward pass (autograd's evaluate_function nodes, split at gaps over 5 ms) the same
            way, divided by the nodes that are not views or AccumulateGrad (the model charges one
            backward per operator; its parameters' AccumulateGrad and any DDP hooks are part of it).
Each pass is printed with how busy the GPU was during it: only a pass whose GPU was idle part of the
time was bound by the host (a busy GPU can hold the host back once the launch queue is full).

The profiler's cost per recorded event is what `torch.profiler` adds to a training step of a small
Hugging Face decoder on the CPU, divided by the events it records (PyTorch 2.15 on the development
VM, four runs beside other work: 0.76-1.1 us without shapes, 1.1-1.9 us with `record_shapes`; 1.0
and 1.5 taken); traces that recorded shapes get the larger. A faster server CPU pays less, so the
figures here are, if anything, low. `--measure-profiler-cost` measures it again on this machine.
"""
import argparse
import gzip
import json
import os
import re
import statistics

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACES = os.path.join(os.path.dirname(REPO), "shared", "data", "pytorch-traces")
DEFAULT_TRACES = ["v100-32gb_ddp_train_small_rank0.json.gz", "a100-80gb_train_rank0.json.gz"]

VIEW_OPS = {
    "aten::view", "aten::reshape", "aten::_reshape_alias", "aten::_unsafe_view", "aten::transpose",
    "aten::permute", "aten::select", "aten::slice", "aten::expand", "aten::unsqueeze", "aten::squeeze",
    "aten::as_strided", "aten::t", "aten::detach", "aten::alias", "aten::split", "aten::chunk",
    "aten::unbind", "aten::narrow", "aten::flatten", "aten::view_as", "aten::expand_as",
    "aten::lift_fresh", "detach", "aten::contiguous", "aten::size", "aten::dim", "aten::stride",
}
VIEW_OR_ACCUMULATE = re.compile(r"(View|Reshape|Alias|Transpose|Permute|Select|Slice|Expand|Unsqueeze|"
                                r"Squeeze|AsStrided|TBackward|Unbind|Split|Narrow|Unsafe)\w*Backward|AccumulateGrad")
SYNCHRONISING = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy")
GPU_ACTIVITIES = ("kernel", "gpu_memcpy", "gpu_memset")
BACKWARD_GAP_US = 5000


def outermost(events):
    """The events not nested inside another of the list (one thread's call tree, top level)."""
    out, end = [], -1
    for e in sorted(events, key=lambda e: (e["ts"], -e.get("dur", 0))):
        if e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e.get("dur", 0)
    return out


def busy_fraction(gpu, start, end):
    spans = outermost([k for k in gpu if k["ts"] < end and k["ts"] + k["dur"] > start])
    return sum(min(end, k["ts"] + k["dur"]) - max(start, k["ts"]) for k in spans) / max(end - start, 1)


def on_thread(events, tid, start, end):
    return [e for e in events if e["tid"] == tid and e["ts"] >= start and e["ts"] + e.get("dur", 0) <= end
            and e.get("cat") in ("cpu_op", "cuda_runtime")]


def measure(path, per_event_us):
    with gzip.open(path) as f:
        doc = json.load(f)
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X" and "ts" in e]
    gpu = [e for e in events if e.get("cat") in GPU_ACTIVITIES]
    shapes = bool(doc.get("record_shapes"))
    cost = per_event_us[1] if shapes else per_event_us[0]
    rows = []
    for r in (e for e in events if e.get("cat") == "user_annotation" and e["name"] == "## forward ##"):
        start, end = r["ts"], r["ts"] + r["dur"]
        inside = on_thread(events, r["tid"], start, end)
        work = [e for e in outermost([e for e in inside if e.get("cat") == "cpu_op"]) if e["name"] not in VIEW_OPS]
        waited = sum(e["dur"] for e in inside if e.get("cat") == "cuda_runtime" and e["name"].startswith(SYNCHRONISING))
        if work:
            rows.append(("forward", r["dur"], busy_fraction(gpu, start, end), len(work),
                         (r["dur"] - waited - cost * len(inside)) / len(work)))
    nodes = sorted((e for e in events if e["name"].startswith("autograd::engine::evaluate_function")),
                   key=lambda e: e["ts"])
    passes = []
    for e in nodes:
        if passes and e["ts"] - (passes[-1][-1]["ts"] + passes[-1][-1]["dur"]) <= BACKWARD_GAP_US:
            passes[-1].append(e)
        else:
            passes.append([e])
    for p in passes:
        start, end = p[0]["ts"], p[-1]["ts"] + p[-1]["dur"]
        work = [e for e in p if not VIEW_OR_ACCUMULATE.search(e["name"])]
        if work:
            inside = on_thread(events, p[0]["tid"], start, end)
            rows.append(("backward", end - start, busy_fraction(gpu, start, end), len(work),
                         (end - start - cost * len(inside)) / len(work)))
    return shapes, cost, rows


def measure_profiler_cost():
    """The profiler's cost per recorded event: a 24-layer Hugging Face decoder of width 64 (the
    layer count of a 1.8B model, tensors too small to cost anything but dispatch) trained a step at a
    time on one CPU thread, with and without torch.profiler, divided by the events it records."""
    import time
    import torch
    from torch.profiler import ProfilerActivity, profile
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(hidden_size=64, intermediate_size=176, num_attention_heads=4,
                                         num_key_value_heads=4, num_hidden_layers=24, vocab_size=256,
                                         max_position_embeddings=512))
    model.train()
    ids = torch.randint(0, 256, (1, 16))

    def step():
        model(input_ids=ids, labels=ids).loss.backward()

    def step_ms(n=5):
        times = []
        for _ in range(n):
            t = time.perf_counter()
            step()
            times.append(time.perf_counter() - t)
        return min(times) * 1e3

    for _ in range(3):
        step()
    for shapes in (False, True):
        with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes) as p:
            step()
        events = len(p.events())
        # Plain and profiled steps alternate so that a busy machine's drift falls on both alike.
        differences, plain = [], []
        for _ in range(8):
            plain.append(step_ms())
            with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes):
                profiled = step_ms()
            differences.append(profiled - plain[-1])
        print(f"record_shapes={shapes}: a step {statistics.median(plain):.1f} ms, profiled "
              f"+{statistics.median(differences):.1f} ms, {events} events: "
              f"{statistics.median(differences) * 1e3 / events:.2f} us an event")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="*", help=f"trace files (default: {', '.join(DEFAULT_TRACES)} in {TRACES})")
    ap.add_argument("--profiler-us-per-event", nargs=2, type=float, default=[1.0, 1.5], metavar=("PLAIN", "SHAPES"),
                    help="the profiler's cost per recorded event without and with record_shapes (default 1.0 1.5)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--measure-profiler-cost", action="store_true",
                    help="measure the profiler's cost per event on this machine instead (torch, transformers)")
    a = ap.parse_args()
    if a.measure_profiler_cost:
        measure_profiler_cost()
        return
    traces = a.traces or [os.path.join(TRACES, t) for t in DEFAULT_TRACES]
    result = {}
    for t in traces:
        shapes, cost, rows = measure(t, a.profiler_us_per_event)
        name = os.path.basename(t)
        result[name] = {
            "record_shapes": shapes, "profiler_us_per_event": cost,
            "passes": [{"pass": p, "ms": d / 1e3, "gpu_busy": b, "operators": n, "host_us_per_operator": u}
                       for p, d, b, n, u in rows],
        }
        if a.json:
            continue
        print(f"{name} ({'shapes recorded' if shapes else 'no shapes'}; profiler {cost} us an event removed)")
        for p, d, b, n, u in rows:
            print(f"  {p:8} {d / 1e3:7.2f} ms  GPU busy {b * 100:3.0f}%  {n:4} operators  {u:6.1f} us an operator")
        for p in ("forward", "backward"):
            us = [u for q, _, b, _, u in rows if q == p and b < 0.95]
            if us:
                print(f"  {p} passes with an idle GPU: median {statistics.median(us):.1f} us an operator ({len(us)} passes)")
    if a.json:
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
