"""What the real-model checks share: skipping where torch and transformers are missing (ctest's
SKIP_RETURN_CODE 77), the memory checks' command line, and `trainscope-cli predict`'s memory figures for a
model."""
import argparse
import json
import os
import subprocess
import sys
import warnings

SKIP = 77


def torch_and_transformers():
    """(torch, transformers), quiet; exits 77 (skipped) when either cannot be imported."""
    try:
        import torch
        import transformers
    except Exception as e:  # noqa: BLE001: any import problem means "cannot check here"
        print(f"SKIP: torch and transformers are needed ({e})")
        sys.exit(SKIP)
    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    return torch, transformers


def predicted_memory(cli, spec, options):
    """memory_bytes of `trainscope-cli predict SPEC --gpu a100-sxm4-80gb OPTIONS --json` (its one prediction)."""
    out = subprocess.run([cli, "predict", spec, "--gpu", "a100-sxm4-80gb", "--json"] + options,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"trainscope-cli predict {spec}: {out.stderr.strip()}")
    j = json.loads(out.stdout)
    return (j["predictions"][0] if "predictions" in j else j)["memory_bytes"]


def memory_check_args(doc, tolerance=5.0):
    """--cli, --out (created) and --tolerance (percent, default `tolerance`) of a memory check whose docstring is
    `doc`."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True, help="where the generated config.json files are written")
    ap.add_argument("--tolerance", type=float, default=tolerance, help="percent")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    return a
