"""What the real-model checks share: skipping where torch and transformers are missing (ctest's
SKIP_RETURN_CODE 77), and `trainscope-cli predict`'s memory figures for a model."""
import json
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
