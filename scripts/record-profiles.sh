#!/usr/bin/env bash
# Records the ground-truth training profiles the predictors are validated on, into
# tests/data/profiles/<device-name>/ (small JSON files: no weights).
#
#   scripts/record-profiles.sh gpu [CLI]   the issue's set on the local GPU: resnet50, bert_base (seq 128),
#                                          gpt2 (seq 512), dcgan and gnmt, 3 batch sizes each, in fp32, tf32,
#                                          amp-bf16 and amp-fp16
#   scripts/record-profiles.sh cpu [CLI]   a small set on the CPU (small images, short sequences, batch 1-4)
#
# Each profile records its device and software inside; the wall time of each is printed.
#
# Options (before the mode), for running the set in pieces inside a time limit (scripts/gpu-checkup.sh):
#   --out DIR            write into DIR/<device-name>/ instead of tests/data/profiles/<device-name>/
#   --model 'MODEL|N,M'  record this model at these batch sizes instead of the mode's set (repeatable)
#   --precisions LIST    comma-separated precisions instead of the mode's
#   --part K/N           only the K-th of every N (model, precision) pairs, counted model by model,
#                        so that N calls together record the whole set
#   --resume             skip the pairs whose profile file already exists
#   --deadline EPOCH     start no profile after this time (seconds since 1970)
#   --stop EPOCH         interrupt a profile still running at this time (it is not kept)
#   --times FILE         append one line per pair: MODEL PRECISION STATUS SECONDS FILE
#   --logs DIR           each profile's progress (stderr), every line stamped with the seconds since
#                        its start, into DIR/<file stem>.log instead of the terminal
# A failed profile is reported and the others still recorded; the exit status is then 1, or 75
# when the deadline left pairs unrecorded (run again with --resume to record them).
set -euo pipefail
usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 64
}
root=$(cd "$(dirname "$0")/.." && pwd)
out_root=$root/tests/data/profiles
only_models=() only_precisions="" part=1/1 resume=0 deadline="" stop="" times="" logs=""
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out_root=${2:?--out needs a directory}; shift 2 ;;
        --model) only_models+=("${2:?--model needs MODEL|BATCHES}"); shift 2 ;;
        --precisions) only_precisions=${2:?--precisions needs a list}; shift 2 ;;
        --part) part=${2:?--part needs K/N}; shift 2 ;;
        --resume) resume=1; shift ;;
        --deadline) deadline=${2:?--deadline needs seconds since 1970}; shift 2 ;;
        --stop) stop=${2:?--stop needs seconds since 1970}; shift 2 ;;
        --times) times=${2:?--times needs a file}; shift 2 ;;
        --logs) logs=${2:?--logs needs a directory}; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "record-profiles.sh: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
mode=${1:-}
[ "$mode" = gpu ] || [ "$mode" = cpu ] || usage
cli=${2:-$root/build/bin/trainscope-cli}
[[ "$part" =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] ||
    { echo "record-profiles.sh: --part $part: expected K/N with 1 <= K <= N" >&2; exit 64; }
part_k=${BASH_REMATCH[1]} part_n=${BASH_REMATCH[2]}

if [ "$mode" = gpu ]; then
    device=cuda:0
    name=$("$cli" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["name"])' 2>/dev/null) ||
        { echo "record-profiles.sh: $cli devices finds no GPU" >&2; exit 1; }
    models=("zoo:resnet50|32,64,128" "zoo:bert_base?seq=128|16,32,64" "zoo:gpt2?seq=512|4,8,16"
            "zoo:dcgan|64,128,256" "zoo:gnmt?seq=50|32,64,128")
    precisions=(fp32 tf32 amp-bf16 amp-fp16)
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
[ ${#only_models[@]} -eq 0 ] || models=("${only_models[@]}")
[ -z "$only_precisions" ] || IFS=, read -r -a precisions <<<"$only_precisions"
dir=$out_root/$(echo "$name" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9.-')
mkdir -p "$dir"
[ -z "$logs" ] || mkdir -p "$logs"

# Copies the profile's stderr, each line stamped with the seconds since $1 (bash's microsecond clock),
# so that a log shows where the time of a profile went.
stamp() {
    local t0=$1 line now
    while IFS= read -r line; do
        now=${EPOCHREALTIME/./}
        printf '%8.1f %s\n' "$(((now - t0) / 100000))e-1" "$line"
    done
}

index=0 failed=0 left=0
for entry in "${models[@]}"; do
    model=${entry%%|*}
    batches=${entry##*|}
    stem=$(echo "${model#zoo:}" | tr '?&=' '---')
    for precision in "${precisions[@]}"; do
        index=$((index + 1))
        [ $(((index - 1) % part_n + 1)) = "$part_k" ] || continue
        out=$dir/$stem-$precision.json
        if [ "$resume" = 1 ] && [ -s "$out" ]; then
            printf '%s %s: already recorded -> %s\n' "$model" "$precision" "$out"
            continue
        fi
        now=$(date +%s)
        if { [ -n "$deadline" ] && [ "$now" -ge "$deadline" ]; } || { [ -n "$stop" ] && [ "$now" -ge "$stop" ]; }; then
            printf '%s %s: not started (deadline)\n' "$model" "$precision"
            [ -z "$times" ] || printf '%s %s left 0 %s\n' "$model" "$precision" "$out" >>"$times"
            left=$((left + 1))
            continue
        fi
        # Written under a temporary name and renamed when complete, so that an interrupted or failed
        # run leaves no profile behind for --resume to take as recorded.
        tmp=$dir/.$stem-$precision.partial.json
        limit=()
        if [ -n "$stop" ]; then
            # SIGINT makes the profiler stop at the next measurement; KILL 20 s later if it does not.
            limit=(timeout -s INT -k 20 $((stop > $(date +%s) ? stop - $(date +%s) : 1)))
        fi
        start=${EPOCHREALTIME/./}
        status=ok rc=0
        if [ -n "$logs" ]; then
            "${limit[@]}" "$cli" profile "$model" --device "$device" --batch "$batches" --precision "$precision" \
                --optimizer adam -o "$tmp" "${extra[@]}" 2>&1 >/dev/null | stamp "$start" >"$logs/$stem-$precision.log" ||
                rc=$?
        else
            "${limit[@]}" "$cli" profile "$model" --device "$device" --batch "$batches" --precision "$precision" \
                --optimizer adam -o "$tmp" "${extra[@]}" >/dev/null || rc=$?
        fi
        seconds=$(awk -v a="$start" -v b="${EPOCHREALTIME/./}" 'BEGIN{printf "%.1f", (b-a)/1e6}')
        if [ "$rc" = 0 ]; then
            mv "$tmp" "$out"
        else
            rm -f "$tmp"
            out=-
            if [ -n "$stop" ] && [ "$(date +%s)" -ge "$stop" ]; then status=interrupted left=$((left + 1))
            else status=failed-$rc failed=$((failed + 1)); fi
        fi
        note=""
        [ "$status" = ok ] || note=" ($status)"
        printf '%s %s: %s s -> %s%s\n' "$model" "$precision" "$seconds" "$out" "$note"
        [ -z "$times" ] || printf '%s %s %s %s %s\n' "$model" "$precision" "$status" "$seconds" "$out" >>"$times"
    done
done
[ "$failed" = 0 ] || exit 1
[ "$left" = 0 ] || exit 75
