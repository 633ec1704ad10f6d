"""What the scripts validating against published runs share (validate_llm_runs.py, validate_foundry_runs.py,
validate_lora_runs.py, validate_moe_runs.py, validate_timm_runs.py): their common options, and the figures they read from
`trainscope-cli predict --json` (one run of the CLI, its first prediction per GPU of the job)."""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def validation_parser(doc, check_help):
    """The options every validation script takes: --cli, --json and --check (whose meaning is the script's)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "bin", "trainscope-cli"))
    ap.add_argument("--json", help="write the rows and predictions here")
    ap.add_argument("--check", type=float, metavar="PERCENT", help=check_help)
    return ap


def predict_figures(args, gpus):
    """Runs the command line `args` (a `predict ... --json`); exits naming it if the CLI fails."""
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)}: {out.stderr.strip()}")
    j = json.loads(out.stdout)
    p = j["predictions"][0] if "predictions" in j else j
    return {
        "parameters": j.get("model", {}).get("parameters"),
        "tokens_per_s_per_gpu": p["tokens_per_s"]["value"] / gpus,
        "low": p["tokens_per_s"]["low"] / gpus,
        "high": p["tokens_per_s"]["high"] / gpus,
        "mfu": p["mfu"]["value"],
        "peak_reserved_gib": p["memory_bytes"]["peak_reserved"] / 2**30,
        "fits": p["fits"],
    }
