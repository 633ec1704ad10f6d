#!/usr/bin/env python3
"""Predicts timm's published training-step benchmarks of ImageNet ConvNets on an RTX 3090 and prints each row's error.

    scripts/validate_timm_runs.py [--cli build/bin/trainscope-cli] [--json OUT] [--check PERCENT]

The rows are pytorch-image-models' results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv and
results/benchmark-train-amp-nhwc-pt112-cu113-rtx3090.csv (huggingface/pytorch-image-models at commit
5e7d47ca): `benchmark.py --bench train --amp` with and without `--channels-last`, PyTorch 1.12, CUDA 11.3,
one RTX 3090, each model at the batch the table names (train_batch_size) and its default training size.
The benchmark trains on one synthetic batch already on the GPU (no data loader) with timm's default
optimizer for it, SGD with Nesterov momentum (PyTorch 1.12's for-loop implementation), under autocast
without a grad scaler: what TrainScope predicts as `--precision amp-fp16 --optimizer sgd-momentum
--optimizer-impl for-loop`, with `--channels-last` for the NHWC table. Only models whose timm definition is
a zoo model's (same layers, same parameter count) are taken.

No constant was fitted on these rows: they are an out-of-sample check on a GPU outside NVIDIA's tables,
a framework other than NVIDIA's scripts and depthwise networks at both layouts. The GeForce card runs above
its rated boost clock (docs/prediction.md, Lambda's rows), which moves every compute-bound row the same
way, so what the check holds (--check) is each model's throughput relative to ResNet-50's in the same
table, where the clock cancels; the absolute errors and each model's NHWC / NCHW gain are printed.
"""
import json
import subprocess
import sys

from llm_run_figures import validation_parser

SOURCE = ("huggingface/pytorch-image-models results/benchmark-train-amp-{nchw,nhwc}-pt112-cu113-rtx3090.csv "
          "at 5e7d47ca (RTX 3090, AMP, PyTorch 1.12, synthetic data)")
GPU = "rtx-3090"
REFERENCE = "resnet50"

# timm model: (zoo model, {layout: (published train samples/s, train batch size)})
ROWS = {
    "resnet18": ("zoo:resnet18", {"nchw": (2764.22, 512), "nhwc": (3481.78, 512)}),
    "resnet50": ("zoo:resnet50", {"nchw": (826.06, 512), "nhwc": (1218.01, 512)}),
    "resnet101": ("zoo:resnet101", {"nchw": (568.98, 256), "nhwc": (747.89, 256)}),
    "resnext101_32x4d": ("zoo:resnext101_32x4d", {"nchw": (427.18, 192), "nhwc": (609.01, 256)}),
    "inception_v3": ("zoo:inception_v3?aux=0", {"nchw": (602.27, 384), "nhwc": (782.35, 384)}),
    "vgg16": ("zoo:vgg16", {"nchw": (465.36, 384), "nhwc": (546.06, 384)}),
    "mobilenetv2_100": ("zoo:mobilenet_v2", {"nchw": (1832.14, 512), "nhwc": (2313.1, 512)}),
    "efficientnet_b0": ("zoo:efficientnet_b0", {"nchw": (1459.11, 384), "nhwc": (1751.72, 512)}),
    "efficientnet_b4": ("zoo:efficientnet_b4?image=320", {"nchw": (293.1, 96), "nhwc": (354.99, 96)}),
}


def predict(cli, model, layout, batch):
    """Samples per second `trainscope-cli predict` gives the row; exits naming the command if it fails."""
    args = [cli, "predict", model, "--gpu", GPU, "--batch", str(batch), "--precision", "amp-fp16",
            "--optimizer", "sgd-momentum", "--optimizer-impl", "for-loop", "--json"]
    if layout == "nhwc":
        args.append("--channels-last")
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)["predictions"][0]["samples_per_s"]["value"]


def main():
    ap = validation_parser(__doc__, "exit 1 when a model's throughput relative to ResNet-50's in the same table "
                                    "is off by more than PERCENT")
    a = ap.parse_args()
    print(f"{SOURCE}; predicted at amp-fp16, SGD with momentum (for-loop), NHWC with --channels-last")
    predicted = {}
    for name, (model, tables) in ROWS.items():
        for layout, (published, batch) in tables.items():
            predicted[(name, layout)] = predict(a.cli, model, layout, batch)
    print(f"{'model':18} {'layout':6} {'batch':>5} {'published':>9} {'predicted':>17} {'vs ResNet-50':>27}")
    results, ratio_errors, failed = [], [], []
    for name, (model, tables) in ROWS.items():
        for layout, (published, batch) in tables.items():
            p = predicted[(name, layout)]
            error = 100 * (p / published - 1)
            ref_published = ROWS[REFERENCE][1][layout][0]
            ref_predicted = predicted[(REFERENCE, layout)]
            ratio_published, ratio_predicted = published / ref_published, p / ref_predicted
            ratio_error = 100 * (ratio_predicted / ratio_published - 1)
            cell = ""
            if name != REFERENCE:
                ratio_errors.append(abs(ratio_error))
                cell = f"{ratio_published:5.2f} -> {ratio_predicted:5.2f} ({ratio_error:+5.1f}%)"
                if a.check is not None and abs(ratio_error) > a.check:
                    failed.append(f"{name} {layout}")
            print(f"{name:18} {layout:6} {batch:5} {published:9.1f} {p:8.1f} ({error:+5.1f}%) {cell:>27}")
            results.append({"model": name, "zoo": model, "layout": layout, "batch": batch,
                            "published_samples_per_s": published, "predicted_samples_per_s": p,
                            "error_percent": error, "ratio_to_resnet50_error_percent": ratio_error})
    gains = []
    for name, (model, tables) in ROWS.items():
        published = tables["nhwc"][0] / tables["nchw"][0]
        gain = predicted[(name, "nhwc")] / predicted[(name, "nchw")]
        gains.append(f"{name} {published:.2f} -> {gain:.2f}")
    print("NHWC / NCHW, published -> predicted: " + "; ".join(gains))
    absolute = [abs(r["error_percent"]) for r in results]
    print(f"rows: {len(results)}, mean |error| {sum(absolute) / len(absolute):.1f}%; relative to ResNet-50: "
          f"{len(ratio_errors)}, mean |error| {sum(ratio_errors) / len(ratio_errors):.1f}%, "
          f"largest {max(ratio_errors):.1f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"source": SOURCE, "gpu": GPU, "precision": "amp-fp16", "rows": results}, f, indent=1)
    if failed:
        sys.exit(f"relative to ResNet-50, off by more than {a.check}%: {', '.join(failed)}")


if __name__ == "__main__":
    main()
