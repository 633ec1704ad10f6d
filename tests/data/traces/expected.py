#!/usr/bin/env python3
"""Writes expected.json: figures of the recorded CPU traces computed with Python's json module,
independently of TrainScope's reader, for tests/unit/test_kineto_trace.cpp.

    python3 tests/data/traces/expected.py

Per trace: the ProfilerStep#N spans (number, duration), the cpu_op events (all, and per step: an
operator belongs to the step whose span holds its start), and whether shapes and the Python stack
were recorded.
"""
import glob
import gzip
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
out = {}
for path in sorted(glob.glob(os.path.join(here, "*.json.gz"))):
    events = json.load(gzip.open(path))["traceEvents"]
    complete = [e for e in events if e.get("ph") == "X"]
    steps = {}
    for e in complete:
        if e.get("cat") in ("user_annotation", "cpu_op") and e["name"].startswith("ProfilerStep#"):
            steps.setdefault(int(e["name"][len("ProfilerStep#"):]), (e["ts"], e["dur"]))
    ordered = sorted(steps.items(), key=lambda kv: kv[1][0])
    ops = [e for e in complete if e.get("cat") == "cpu_op"]
    per_step = []
    for number, (ts, dur) in ordered:
        count = sum(1 for o in ops if ts <= o["ts"] < ts + dur)
        per_step.append({"number": number, "dur_us": dur, "cpu_ops": count})
    out[os.path.basename(path)] = {
        "steps": per_step,
        "cpu_ops": len(ops),
        "record_shapes": any("Input Dims" in o.get("args", {}) for o in ops),
        "with_stack": any(e.get("cat") == "python_function" for e in events),
    }
with open(os.path.join(here, "expected.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
