#!/usr/bin/env bash
# Records the ground-truth training profiles the predictors are validated on, into
# tests/data/profiles/<device-name>/ (small JSON files: no weights).
#
#   scripts/record-profiles.sh gpu [CLI]   the issue's set on the local GPU: resnet50, bert_base (seq 128),
#                                          gpt2 (seq 512), dcgan and gnmt, 3 batch sizes, fp32 and amp-bf16
#   scripts/record-profiles.sh cpu [CLI]   a small set on the CPU (small images, short sequences, batch 1-4)
#
# Each profile records its device and software inside; the wall time of each is printed.
set -euo pipefail
mode=${1:?usage: record-profiles.sh gpu|cpu [trainscope-cli]}
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${2:-$root/build/bin/trainscope-cli}

if [ "$mode" = gpu ]; then
    device=cuda:0
    name=$("$cli" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["name"])')
    models=("zoo:resnet50|32,64,128" "zoo:bert_base?seq=128|16,32,64" "zoo:gpt2?seq=512|4,8,16"
            "zoo:dcgan|64,128,256" "zoo:gnmt?seq=50|32,64,128")
    precisions=(fp32 amp-bf16)
    extra=()
else
    device=cpu
    name=cpu
    models=("zoo:resnet18?image=32&classes=10|1,2,4" "zoo:mobilenet_v2?image=32&classes=10|1,2,4")
    precisions=(fp32 amp-bf16)
    extra=(--quick)
    # One intra-op thread: on a shared 2-core machine more threads make timings erratic.
    export OMP_NUM_THREADS=1
fi
dir=$root/tests/data/profiles/$(echo "$name" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9.-')
mkdir -p "$dir"
for entry in "${models[@]}"; do
    model=${entry%%|*}
    batches=${entry##*|}
    stem=$(echo "${model#zoo:}" | tr '?&=' '---')
    for precision in "${precisions[@]}"; do
        out=$dir/$stem-$precision.json
        start=$(date +%s.%N)
        "$cli" profile "$model" --device "$device" --batch "$batches" --precision "$precision" \
            --optimizer adam -o "$out" "${extra[@]}" >/dev/null
        printf '%s %s: %s s -> %s\n' "$model" "$precision" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')" "$out"
    done
done
