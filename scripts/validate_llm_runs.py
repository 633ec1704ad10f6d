#!/usr/bin/env python3
"""Predicts torchtitan's published Llama training runs with trainscope-cli and prints each row's error.

    scripts/validate_llm_runs.py [--cli build/bin/trainscope-cli] [--json OUT]

The rows are torchtitan's docs/performance.md (pytorch/torchtitan at commit 0413364, "Llama 3
performance numbers" and "Llama 2 performance numbers"): FSDP2 over 64 A100 80GB GPUs, local batch
1 or 2, sequence 8192 (Llama 3) or 4096 (Llama 2) as the repository's train_configs/llama3_8b.toml
and llama2_13b.toml set them, AdamW, bf16 mixed precision, no torch.compile, WPS = tokens per second
per GPU. The models are the published config.json files in tests/data/hf-configs (parameter counts
checked against transformers by tests/unit/test_hf_config.cpp).

What TrainScope cannot set as torchtitan did, stated per row rather than tuned away:
- torchtitan's selective activation checkpointing ("op": a policy that saves some matmul outputs and
  recomputes the rest; "layer": every other block) has no TrainScope equivalent: such rows are
  predicted both without checkpointing and with TrainScope's (sqrt(L) segments, which recomputes the
  whole forward as torchtitan's "full" does), and the published figure should lie between the two;
- the cluster's network between nodes is not stated: 200 Gb/s InfiniBand per GPU (HDR, as a DGX
  A100 has) and 8 GPUs per node are assumed.
"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(REPO, "tests", "data", "hf-configs")
SOURCE = "pytorch/torchtitan docs/performance.md at 0413364 (64 A100 80GB, FSDP2, bf16)"

# (model config, sequence, local batch, torchtitan's activation checkpointing, published WPS per GPU)
ROWS = [
    ("llama-3-8b.json", 8192, 1, "selective layer", 2904),
    ("llama-3-8b.json", 8192, 1, "selective op", 2973),
    ("llama-3-70b.json", 8192, 1, "full", 331),
    ("llama-2-13b.json", 4096, 2, "no", 2162),
    ("llama-2-13b.json", 4096, 2, "selective layer", 1914),
    ("llama-2-13b.json", 4096, 2, "selective op", 1904),
    ("llama-2-70b.json", 4096, 1, "selective op", 355),
    ("llama-2-70b.json", 4096, 2, "full", 353),
]
GPUS, GPUS_PER_NODE, IB_GBPS, GPU = 64, 8, 200, "a100-sxm4-80gb"


def predict(cli, config, seq, batch, checkpointing):
    args = [cli, "predict", f"{os.path.join(CONFIGS, config)}?seq={seq}", "--gpu", GPU, "--batch", str(batch),
            "--precision", "amp-bf16", "--optimizer", "adamw", "--fsdp", "--gpus", str(GPUS),
            "--gpus-per-node", str(GPUS_PER_NODE), "--interconnect", "infiniband",
            "--infiniband-gbps", str(IB_GBPS), "--json"]
    if checkpointing:
        args.append("--checkpointing")
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)}: {out.stderr.strip()}")
    j = json.loads(out.stdout)
    p = j["predictions"][0] if "predictions" in j else j
    return {
        "tokens_per_s_per_gpu": p["tokens_per_s"]["value"] / GPUS,
        "low": p["tokens_per_s"]["low"] / GPUS,
        "high": p["tokens_per_s"]["high"] / GPUS,
        "mfu": p["mfu"]["value"],
        "peak_reserved_gib": p["memory_bytes"]["peak_reserved"] / 2**30,
        "fits": p["fits"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "bin", "trainscope-cli"))
    ap.add_argument("--json", help="write the rows and predictions here")
    ap.add_argument("--check", type=float, metavar="PERCENT",
                    help="exit 1 when a row with a set-up of its own is off by more than PERCENT, or a "
                         "selective row's published figure lies outside its two predictions")
    a = ap.parse_args()
    print(f"{SOURCE}; {GPUS_PER_NODE} GPUs per node and {IB_GBPS} Gb/s InfiniBand per GPU assumed")
    print(f"{'model':18} {'seq':>5} {'batch':>5} {'AC':16} {'published':>9} {'no AC':>16} {'sqrt(L) AC':>16}  GiB")
    results, errors, failed = [], [], []
    for config, seq, batch, ac, published in ROWS:
        plain = predict(a.cli, config, seq, batch, False)
        recomputed = predict(a.cli, config, seq, batch, True)
        err = lambda p: 100 * (p["tokens_per_s_per_gpu"] / published - 1)
        cell = lambda p: f"{p['tokens_per_s_per_gpu']:6.0f} ({err(p):+5.1f}%)"
        # No AC and full AC have a TrainScope set-up each (full AC and sqrt(L) segments both
        # recompute the whole forward once); a selective policy has none, so its row says only
        # whether the published figure lies between the two predictions.
        error = err(plain) if ac == "no" else err(recomputed) if ac == "full" else None
        lo, hi = sorted([err(plain), err(recomputed)])
        verdict = f"row error {error:+.1f}%" if error is not None else \
            f"{'between' if lo <= 0 <= hi else 'outside'} the two"
        if error is not None:
            errors.append(abs(error))
        if (error is not None and a.check is not None and abs(error) > a.check) or \
                (error is None and not lo <= 0 <= hi):
            failed.append(f"{config} {ac} AC")
        print(f"{config[:-5]:18} {seq:5} {batch:5} {ac:16} {published:9} {cell(plain):>16} {cell(recomputed):>16}"
              f"  {plain['peak_reserved_gib']:5.1f} / {recomputed['peak_reserved_gib']:4.1f}"
              f"{'' if plain['fits'] else ' (no AC: does not fit)'}   {verdict}")
        results.append({"config": config, "seq": seq, "batch": batch, "activation_checkpointing": ac,
                        "published_tokens_per_s_per_gpu": published, "no_checkpointing": plain,
                        "sqrt_l_checkpointing": recomputed, "row_error_percent": error})
    errors.sort()
    print(f"rows with a set-up of their own (no or full AC): {len(errors)}, mean |error| "
          f"{sum(errors) / len(errors):.1f}%, largest {errors[-1]:.1f}%")
    if a.check is not None and failed:
        sys.exit(f"off by more than {a.check}% or outside the bracket: {', '.join(failed)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"source": SOURCE, "gpus": GPUS, "gpus_per_node": GPUS_PER_NODE,
                       "infiniband_gbps": IB_GBPS, "gpu": GPU, "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
