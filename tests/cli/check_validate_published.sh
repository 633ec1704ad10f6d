#!/usr/bin/env bash
# check_validate_published.sh CLI DATA WORK: `validate-published` on NVIDIA's published training
# throughput (../shared/data/training-throughput; exit 77, skipped, where it is not there). Checks
# the JSON's structure, that rows it cannot map say why, that --predictions writes one CSV row per
# compared row, and bounds the errors so that a change which makes whole-iteration predictions
# worse fails here: absolute mean <= 30%, ratio mean <= 20%, intervals holding >= 80% of the rows
# (today: 17.5%, 11.0%, 87%; the issue's targets are 10% and 7%, not met yet).
set -euo pipefail
cli=$1 data=$2 work=$3
[ -d "$data" ] || { echo "skipped: $data is not there"; exit 77; }
mkdir -p "$work"
"$cli" validate-published "$data" --json --predictions "$work/published.csv" >"$work/published.json"
python3 - "$work/published.json" "$work/published.csv" <<'PY'
import csv, json, sys
report = json.load(open(sys.argv[1]))
rows = [r for r in report["rows"] if "predicted" in r]
failed = [r for r in report["rows"] if "failure" in r]
assert not failed, f"rows not predicted: {failed[:3]}"
assert len(rows) >= 250, f"only {len(rows)} rows compared"
assert sum(r["file"] == "resnet50v1.5.csv" for r in rows) == 12
assert report["unmapped"] and all(u["why"] for u in report["unmapped"]), "unmapped rows must say why"
for key in ("overall", "by_model", "by_gpu", "by_precision", "by_gpu_count", "ratios", "ratios_by_kind"):
    assert key in report, key
for r in rows:
    assert r["predicted_low"] <= r["predicted"] <= r["predicted_high"], r
    assert abs(r["error_pct"] - 100 * (r["predicted"] / r["measured"] - 1)) < 1e-6 * max(1, abs(r["error_pct"])), r
overall, ratios = report["overall"], report["ratios"]
print(f"absolute: mean {overall['mean_abs_pct']:.1f}% median {overall['median_abs_pct']:.1f}%; "
      f"ratios: mean {ratios['mean_abs_pct']:.1f}%; interval coverage {report['interval_coverage']:.0%}")
assert overall["mean_abs_pct"] <= 30, "absolute mean error above 30%"
assert ratios["mean_abs_pct"] <= 20, "ratio mean error above 20%"
assert report["interval_coverage"] >= 0.80, "intervals hold fewer than 80% of the published rows"
with open(sys.argv[2]) as f:
    table = list(csv.DictReader(f))
assert len(table) == len(report["rows"]), (len(table), len(report["rows"]))
assert {"file", "line", "gpu", "published", "predicted", "error_pct"} <= set(table[0])
PY
