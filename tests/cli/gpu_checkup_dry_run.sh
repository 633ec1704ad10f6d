#!/usr/bin/env bash
# gpu_checkup_dry_run.sh SOURCE-DIR BUILD-DIR: scripts/gpu-checkup.sh --dry-run runs every device
# stage on the CPU against this build (build, test, time, microbench, profiles 1/2 and 2/2), and must leave the
# $OUT a GPU call leaves: summary.txt and gpu-checkup.tar.gz holding each stage's logs and results,
# the summary with one passing line per step; a second call resumes the set instead of recording it
# again.
set -euo pipefail
src=${1:?usage: gpu_checkup_dry_run.sh SOURCE-DIR BUILD-DIR} build=${2:?usage: gpu_checkup_dry_run.sh SOURCE-DIR BUILD-DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

rc=0
"$src/scripts/gpu-checkup.sh" --dry-run --build-dir "$build" --out "$work/out" --state "$work/state/gpu-checkup" \
    build test time microbench profiles 1/2 profiles 2/2 || rc=$?
[ "$rc" = 0 ] || fail "the dry run exited with status $rc"

# What comes back: the two files, nothing else (the device tool brings back at most 8).
[ "$(cd "$work/out" && ls | tr '\n' ' ')" = "gpu-checkup.tar.gz summary.txt " ] ||
    fail "\$OUT holds $(cd "$work/out" && ls | tr '\n' ' ')instead of gpu-checkup.tar.gz summary.txt"
mkdir "$work/unpacked"
tar -C "$work/unpacked" -xzf "$work/out/gpu-checkup.tar.gz"
r=$work/unpacked/gpu-checkup
for f in summary.txt devices.json build/build.log build/environment.txt test/ctest-gpu.log test/ctest-gpu.xml \
         test/calibrate.err time/times.txt microbench/results.json microbench/log.txt profiles/times.txt profiles/record.log \
         profiles/cpu/resnet50-image-32-classes-10-fp32.json profiles/cpu/resnet18-image-32-classes-10-fp32.json \
         profiles/cpu/resnet18-image-32-classes-10-tf32.json profiles/cpu/resnet18-image-32-classes-10-amp-bf16.json \
         profiles/cpu/resnet18-image-32-classes-10-amp-fp16.json profiles/logs/resnet18-image-32-classes-10-fp32.log; do
    [ -s "$r/$f" ] || fail "the tarball lacks gpu-checkup/$f"
done
cmp -s "$r/summary.txt" "$work/out/summary.txt" || fail "summary.txt differs from the tarball's"
# No partial profile is left behind, and each one is complete, of the precision its name says.
[ -z "$(find "$r/profiles" -name '.*partial*')" ] || fail "a partial profile was left in profiles/"
python3 - "$r/profiles/cpu" <<'EOF' || fail "a profile is not what its name says"
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    d = json.loads(p.read_text())
    assert d["complete"] and d["environment"]["device"] == "cpu", p
    assert p.stem.endswith("-" + d["scenario"]["precision"]), p
EOF

# The microbenchmarks' file: every GEMM width of each precision, both normalisations, a convolution.
python3 - "$r/microbench/results.json" <<'EOF' || fail "microbench/results.json is not what the stage writes"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "trainscope-microbench" and d["quick"] and d["device"] == "cpu", d
assert sorted((r["precision"], r["width"]) for r in d["gemm"]) == sorted(
    (p, w) for p in ("bf16", "fp16", "tf32") for w in (64, 56, 60, 61)), d["gemm"]
assert all(r["total_ms"] > 0 and r["time_per_flop_vs_aligned"] > 0 for r in d["gemm"])
assert sorted((r["op"], r["precision"], r["channels_last"]) for r in d["norm"]) == [
    ("batch_norm", "fp16", False), ("batch_norm", "fp32", False), ("instance_norm", "fp16", False),
    ("instance_norm", "fp16", True), ("instance_norm", "fp32", False)], d["norm"]
assert all(r["forward_passes"] > 0 and r["backward_passes"] > 0 for r in d["norm"])
assert [(r["precision"], r["channels_last"]) for r in d["conv3d"]] == [("tf32", False), ("fp16", False), ("fp16", True)]
assert all(r["forward_ms"] > 0 and r["backward_ms"] > 0 for r in d["conv3d"])
EOF

summary=$(cat "$work/out/summary.txt")
echo "$summary"
expect() {  # expect REGEX: one line of the summary matches it (extended regular expression)
    grep -qE -- "$1" <<<"$summary" || fail "no summary line matches: $1"
}
num='[0-9]+(\.[0-9])?'
expect "^== call: build test time microbench profiles 1/2 profiles 2/2 \(dry run on the CPU\), started "
expect "^build: ok, "
expect "^device: cpu \(no GPU: .+\)$"
expect "^ctest -L gpu: ok in $num s: [1-9][0-9]* tests, 0 failed, [1-9][0-9]* skipped \(no GPU, accepted in the dry run\)$"
expect "^calibrate: no GPU \(status 4, accepted in the dry run\): trainscope-cli: cannot calibrate: .+"
expect "^time: zoo:resnet50\?image=32&classes=10 fp32 batch 1 \(adam\) per-layer profile: ok, $num s wall; longest step: batch 1: .+ $num s -> profiles/cpu/resnet50-image-32-classes-10-fp32.json$"
expect "^microbench: ok in $num s: 12 GEMM widths, 5 normalisations, 3 convolutions timed on cpu -> microbench/results.json$"
expect "^profiles 1/2: ok in $num s: 2 recorded, 0 failed, 0 left \(3 profiles in all\)$"
expect "^profiles 2/2: ok in $num s: 2 recorded, 0 failed, 0 left \(5 profiles in all\)$"
expect "^call: ok in [0-9]+ s$"
! grep -q FAILED <<<"$summary" || fail "a step failed"

# A second call on the same state finds the build current and the set recorded: nothing is redone.
rc=0
"$src/scripts/gpu-checkup.sh" --dry-run --build-dir "$build" --out "$work/out2" --state "$work/state/gpu-checkup" \
    profiles 1/2 >"$work/second.log" 2>&1 || rc=$?
cat "$work/second.log"
[ "$rc" = 0 ] || fail "the second call exited with status $rc"
grep -qE "^build: ok, " "$work/second.log" || fail "the second call did not find the build usable"
grep -qE "^profiles 1/2: ok in $num s: 0 recorded, 0 failed, 0 left \(5 profiles in all\)$" "$work/second.log" ||
    fail "the second call recorded again what was there"
[ "$(grep -c '^== call: ' "$work/out2/summary.txt")" = 2 ] || fail "the second summary does not hold both calls"
echo ok
