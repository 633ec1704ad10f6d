"""The figures scripts/validate_llm_runs.py and scripts/validate_foundry_runs.py read from `trainscope-cli predict
--json`: one run of the CLI, its first prediction per GPU of the job."""
import json
import subprocess
import sys


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
