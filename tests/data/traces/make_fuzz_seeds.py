#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_kineto (tests/fuzz/corpus/kineto): small real fragments, each under
4 KB, of the traces recorded on the CPU here and of the shared GPU traces
(../shared/data/pytorch-traces, where present), named by their SHA-1 as libFuzzer names inputs.

    python3 tests/data/traces/make_fuzz_seeds.py

A fragment is a trace of its own: the header (schemaVersion, deviceProperties) and a few events in
file order around a ProfilerStep, a launched kernel with its runtime call, an NCCL kernel, a copy.
"""
import glob
import gzip
import hashlib
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.abspath(os.path.join(here, "..", "..", ".."))
out = os.path.join(repo, "tests", "fuzz", "corpus", "kineto")
shared = os.path.join(repo, "..", "shared", "data", "pytorch-traces")
os.makedirs(out, exist_ok=True)
LIMIT = 4000


def shrink(event):
    e = dict(event)
    if len(e.get("name", "")) > 120:
        e["name"] = e["name"][:120]
    args = {k: v for k, v in e.get("args", {}).items() if len(json.dumps(v)) < 200}
    if args:
        e["args"] = args
    else:
        e.pop("args", None)
    return e


def save(doc, compress=False):
    data = json.dumps(doc, separators=(",", ":")).encode()
    if compress:
        data = gzip.compress(data, mtime=0)
    if len(data) > LIMIT:
        return
    with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def fragments(path):
    doc = json.load(gzip.open(path))
    events = doc["traceEvents"]
    header = {"schemaVersion": doc.get("schemaVersion", 1), "deviceProperties": doc.get("deviceProperties", [])[:1]}
    by_corr = {}
    for e in events:
        c = e.get("args", {}).get("correlation")
        if c is not None:
            by_corr.setdefault(c, []).append(e)
    picks = []
    steps = [e for e in events if e.get("name", "").startswith("ProfilerStep#")][:1]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    for wanted in (kernels[:1], [k for k in kernels if "nccl" in k["name"].lower()][:1],
                   [e for e in events if e.get("cat") in ("gpu_memcpy", "gpu_memset")][:1]):
        for k in wanted:
            pair = by_corr.get(k["args"].get("correlation"), [k])
            launch = [e for e in pair if e.get("cat") == "cuda_runtime"]
            ops = [e for e in events if e.get("cat") == "cpu_op" and launch and
                   e["tid"] == launch[0]["tid"] and e["ts"] <= launch[0]["ts"] <= e["ts"] + e["dur"]][-2:]
            picks.append(steps + ops + pair)
    ops = [e for e in events if e.get("cat") in ("cpu_op", "python_function", "user_annotation")][:6]
    picks.append(steps + ops)
    for i, p in enumerate(picks):
        save(dict(header, traceEvents=[shrink(e) for e in p]), compress=(i == 0))


for path in sorted(glob.glob(os.path.join(here, "*.json.gz")) + glob.glob(os.path.join(shared, "*.json.gz"))):
    fragments(path)
print(len(os.listdir(out)), "seeds in", out)
