#!/usr/bin/env python3
"""Predicts torchtitan's published Qwen3-30B-A3B expert-parallel training runs with trainscope-cli and prints each row's error.

    scripts/validate_moe_runs.py [--cli build/bin/trainscope-cli] [--json OUT] [--check PERCENT]

The rows are torchtitan's torchtitan/distributed/deepep/README.md (pytorch/torchtitan at commit 022f885):
Qwen3-30B-A3B (128 experts, top 8) on 8 to 128 B200s, 8 GPUs a node, expert parallelism of 8 inside each
node, FSDP over all GPUs for the rest, with train_configs/qwen3_30b_a3b_with_deepep.toml's set-up: local
batch 8 (10 in one row), 4,096 tokens, AdamW, bf16 (FSDP2's mixed precision), full activation checkpointing,
torch.compile of the model and the loss, routing forced to balance (debug.moe_force_load_balance).
Tokens/s per GPU and torchtitan's logged memory (reserved GiB) as published.

The published runs use DeepEP's dispatcher, which overlaps the all-to-alls with compute; TrainScope models
torchtitan's default dispatcher (all-to-alls on the compute stream, not overlapped), for which the README
gives one figure: 9,930 tokens/s per GPU at 8 GPUs ("33% faster than TorchTitan's default expert
parallelism"). Nor does TrainScope model torch.compile or PyTorch's expandable segments
(PYTORCH_ALLOC_CONF, set for these runs). So the rows say how far the eager model is from these runs; the
check (--check) holds only the throughput of the DeepEP rows, and the default dispatcher's row and the memory
are printed.

Not stated by the README, so assumed: 400 Gb/s InfiniBand per GPU (TrainScope's default) across nodes.
"""
import json
import os
import sys

from llm_run_figures import predict_figures, validation_parser

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(REPO, "tests", "data", "hf-configs", "qwen3-30b-a3b.json")
SOURCE = "pytorch/torchtitan torchtitan/distributed/deepep/README.md at 022f885 (Qwen3-30B-A3B, B200, EP 8, FSDP)"
SEQ, GPU, EXPERT_PARALLEL = 4096, "b200", 8

# (GPUs, local batch, dispatcher, published tokens/s per GPU, published memory GiB or None)
ROWS = [
    (8, 8, "DeepEP", 14796, 167.93),
    (16, 8, "DeepEP", 14380, 138.75),
    (32, 8, "DeepEP", 14276, 124.58),
    (64, 8, "DeepEP", 14107, 117.50),
    (128, 8, "DeepEP", 13856, 114.78),
    (128, 10, "DeepEP", 14123, 142.21),
    (8, 8, "default", 9930, None),
]


def predict(cli, gpus, batch):
    args = [cli, "predict", f"{CONFIG}?seq={SEQ}", "--gpu", GPU, "--batch", str(batch), "--precision",
            "bf16-params", "--optimizer", "adamw", "--fsdp", "--gpus", str(gpus), "--expert-parallel",
            str(EXPERT_PARALLEL), "--checkpointing", "--json"]
    if gpus > 8:
        args += ["--interconnect", "infiniband", "--gpus-per-node", "8"]
    return predict_figures(args, gpus)


def main():
    ap = validation_parser(__doc__,
                           "exit 1 when a DeepEP row's throughput is off by more than PERCENT")
    a = ap.parse_args()
    print(f"{SOURCE}; predicted eager, at bf16-params with every block checkpointed, "
          f"expert parallelism {EXPERT_PARALLEL} inside each node of 8")
    print(f"{'GPUs':>4} {'batch':>5} {'dispatcher':10} {'published':>9} {'predicted':>17} "
          f"{'published GiB':>13} {'predicted GiB':>17}")
    results, errors, failed = [], [], []
    for gpus, batch, dispatcher, published, memory in ROWS:
        p = predict(a.cli, gpus, batch)
        error = 100 * (p["tokens_per_s_per_gpu"] / published - 1)
        memory_error = 100 * (p["peak_reserved_gib"] / memory - 1) if memory else None
        if dispatcher == "DeepEP":
            errors.append(abs(error))
            if a.check is not None and abs(error) > a.check:
                failed.append(f"{gpus} GPUs batch {batch}")
        mem_cell = f"{p['peak_reserved_gib']:6.1f} ({memory_error:+5.1f}%)" if memory else f"{p['peak_reserved_gib']:6.1f}"
        print(f"{gpus:4} {batch:5} {dispatcher:10} {published:9} {p['tokens_per_s_per_gpu']:8.0f} ({error:+5.1f}%) "
              f"{memory or '-':>13} {mem_cell:>17}")
        results.append({"gpus": gpus, "batch": batch, "dispatcher": dispatcher,
                        "published_tokens_per_s_per_gpu": published, "published_memory_gib": memory,
                        "prediction": p, "row_error_percent": error, "memory_error_percent": memory_error})
    print(f"DeepEP rows: {len(errors)}, mean |error| {sum(errors) / len(errors):.1f}%, largest {max(errors):.1f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"source": SOURCE, "gpu": GPU, "seq": SEQ, "expert_parallel": EXPERT_PARALLEL,
                       "precision": "bf16-params", "rows": results}, f, indent=1)
    if failed:
        sys.exit(f"off by more than {a.check}%: {', '.join(failed)}")


if __name__ == "__main__":
    main()
