#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan in a build directory of their
# own and runs each for SECONDS_PER_TARGET seconds (default 60). See docs/fuzzing.md.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   scripts/fuzz.sh --merge [TARGET...]
#   TRAINSCOPE_FUZZ_BUILD_DIR  build directory (default: build-fuzz in the repository root)
#   TRAINSCOPE_FUZZ_JOBS       parallel compile jobs (default: 2)
#   TRAINSCOPE_FUZZ_TORCH=1    the TorchScript target instead, in a build with LibTorch (build-fuzz-torch)
#   TRAINSCOPE_FUZZ_NO_BUILD=1 run the fuzzers as last built (for long runs beside work on the sources,
#                              which would otherwise rebuild them from half-edited files)
#   TRAINSCOPE_FUZZ_TIMEOUT    seconds one input may take before it counts as a hang (default 10); raise it
#                              for a niced run beside builds, where a starved fuzzer reports slow inputs that
#                              take a second alone
#
# The corpus each target grows is kept in BUILD/fuzz/corpus/TARGET and reused by the next run;
# crashing, leaking and slow inputs land in BUILD/fuzz/findings/TARGET. Exit status 1 when any
# target found something.
#
# --merge minimises the repository's seeds (tests/fuzz/corpus/TARGET) together with the grown
# corpus into a new tests/fuzz/corpus/TARGET (libFuzzer's -merge=1: the smallest inputs that keep
# every feature) of at most TRAINSCOPE_FUZZ_SEED_MAX_BYTES bytes each (default 4096), which ctest
# replays on every run (fuzz.replay.TARGET). Commit the result.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
merge=0
if [[ ${1:-} = --merge ]]; then
    merge=1
    shift
    seconds=0
else
    seconds=${1:-60}
    shift $(( $# > 0 ? 1 : 0 ))
fi
all_targets=(onnx json_model gpu_database gpu_overrides kernel_csv profile published hf_config kineto)
[[ ${TRAINSCOPE_FUZZ_TORCH:-0} = 1 ]] && all_targets=(torchscript)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")
build=${TRAINSCOPE_FUZZ_BUILD_DIR:-$repo/build-fuzz}
torch_args=(-DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON)
if [[ ${TRAINSCOPE_FUZZ_TORCH:-0} = 1 ]]; then
    build=${TRAINSCOPE_FUZZ_BUILD_DIR:-$repo/build-fuzz-torch}
    torch_args=()   # LibTorch from the virtual environment scripts/setup.sh creates
fi
jobs=${TRAINSCOPE_FUZZ_JOBS:-2}

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (libFuzzer needs clang)" >&2; exit 2; }

if [[ ${TRAINSCOPE_FUZZ_NO_BUILD:-0} = 1 ]]; then
    for t in "${targets[@]}"; do
        [[ -x $build/bin/fuzz_$t ]] || { echo "fuzz.sh: $build/bin/fuzz_$t is not built (run without TRAINSCOPE_FUZZ_NO_BUILD once)" >&2; exit 2; }
    done
else
    cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DTRAINSCOPE_FUZZ=ON "${torch_args[@]}" -DTRAINSCOPE_BUILD_GUI=OFF >/dev/null
    ninja -C "$build" -j "$jobs" $(printf 'fuzz_%s ' "${targets[@]}")
fi

# Seeds are referenced where they live (libFuzzer's -seed_inputs=@LIST), not copied; the examples
# of the JSON formats come from the first ```json block of their documentation.
doc_example() {
    mkdir -p "$build/fuzz/doc-examples"
    local out="$build/fuzz/doc-examples/$(basename "$1" .md).json"
    awk '/^```json/ {on = 1; next} /^```/ {if (on) exit} on' "$repo/docs/$1" > "$out"
    echo "$out"
}
seeds_of() {
    case $1 in
        onnx)
            find "$repo/tests/data" -name '*.onnx'
            [[ -d /usr/share/libonnx-testdata ]] && find /usr/share/libonnx-testdata -name '*.onnx' ;;
        json_model)
            doc_example model-format.md
            find "$repo/tests/data/bad" -name '*.json' ;;
        gpu_database)
            echo "$repo/resources/gpus.json"
            find "$repo/tests/data/bad-gpudb" -name '*.json' ;;
        gpu_overrides)
            doc_example gpu-database.md
            find "$repo/tests/data/bad-gpudb" -name '*.json' ;;
        kernel_csv)
            find "$repo/tests/data/kernel-measurements" -name '*.csv' ;;
        profile)
            doc_example profile-format.md
            find "$repo/tests/data/bad-profiles" -name '*.json' ;;
        hf_config)
            find "$repo/tests/data/hf-configs" -name '*.json'
            find "$repo/tests/data/bad" -name 'hf-*.json' ;;
        torchscript)
            find "$repo/tests/data" "$repo/build/generated-models" -name '*.pt' -size -1024k 2>/dev/null ;;
        kineto)
            find "$repo/tests/data/bad-traces" -name '*.json*' -size -64k ;;
        published)
            # Lambda's table and mapping, and interval tables (--write-out-of-sample-errors reads one).
            find "$repo/tests/data/published" -name '*.csv' -o -name '*.json'
            echo "$repo/resources/iteration-errors.json"
            find "$repo/tests/data/bad-iteration-errors" -name '*.json' ;;
    esac
    # The minimised seeds kept in the repository (ctest replays them) and earlier findings, once
    # fixed, are good starting points too.
    [[ -d "$repo/tests/fuzz/corpus/$1" ]] && find "$repo/tests/fuzz/corpus/$1" -type f
    [[ -d "$repo/tests/data/fuzz-regressions/$1" ]] && find "$repo/tests/data/fuzz-regressions/$1" -type f
    return 0
}

# Stack traces for UBSan reports too (ASan prints them already).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

if (( merge )); then
    max_bytes=${TRAINSCOPE_FUZZ_SEED_MAX_BYTES:-4096}
    for t in "${targets[@]}"; do
        seeds="$repo/tests/fuzz/corpus/$t"
        fresh="$build/fuzz/merge/$t"
        staged="$build/fuzz/merge/$t.candidates"
        rm -rf "$fresh" "$staged"
        mkdir -p "$fresh" "$staged" "$seeds" "$build/fuzz/corpus/$t"
        # Only inputs of at most max_bytes are kept in the repository (the large documents, such
        # as resources/gpus.json and its mutations, stay seeds of the fuzzer, referenced in place).
        find "$seeds" "$build/fuzz/corpus/$t" -type f -size -$(( max_bytes + 1 ))c -exec cp -n {} "$staged"/ \;  # names are content hashes
        lsan="" asan="${ASAN_OPTIONS:-}"
        [[ $t = torchscript ]] && lsan="suppressions=$repo/tests/fuzz/lsan-libtorch.supp" asan="allocator_may_return_null=1"
        # Regression inputs are replayed from tests/data/fuzz-regressions already: not merged.
        ASAN_OPTIONS="$asan" LSAN_OPTIONS="$lsan" "$build/bin/fuzz_$t" -merge=1 -timeout=10 -rss_limit_mb=6144 \
            "$fresh" "$staged" > "$build/fuzz/$t.merge.log" 2>&1 \
            || { echo "fuzz.sh: merging $t failed, see $build/fuzz/$t.merge.log" >&2; exit 1; }
        rm -rf "$seeds"
        mkdir -p "$seeds"
        cp "$fresh"/* "$seeds"/ 2>/dev/null || true
        printf '%-19s %5s seeds, %s\n' "fuzz_$t" "$(find "$seeds" -type f | wc -l)" "$(du -sh --apparent-size "$seeds" | cut -f1)"
    done
    exit 0
fi

summary=()
found_any=0
for t in "${targets[@]}"; do
    corpus="$build/fuzz/corpus/$t"
    findings="$build/fuzz/findings/$t"
    mkdir -p "$corpus" "$findings"
    seeds_of "$t" | sort | paste -sd, > "$build/fuzz/$t.seeds"
    dict=()
    case $t in
        json_model|gpu_database|gpu_overrides|hf_config|published) dict=(-dict="$repo/tests/fuzz/json.dict") ;;
        profile) dict=(-dict="$repo/tests/fuzz/profile.dict") ;;
        kineto) dict=(-dict="$repo/tests/fuzz/kineto.dict") ;;
    esac
    log="$build/fuzz/$t.log"
    # Leaks inside LibTorch itself (upstream) are suppressed for the TorchScript target only.
    # LibTorch also allocates up to a 4-byte pickle length (~2-4 GB) before it finds a corrupted
    # archive truncated: its memory limit is raised for that target (docs/fuzzing.md).
    # Larger requests than memory can hold must fail as std::bad_alloc, which the importer turns
    # into a one-line error, as they do outside the sanitizer.
    lsan="" rss=2048 malloc=2048 asan="${ASAN_OPTIONS:-}"
    [[ $t = torchscript ]] && lsan="suppressions=$repo/tests/fuzz/lsan-libtorch.supp" rss=6144 malloc=1048576 \
        asan="allocator_may_return_null=1"
    echo "== fuzz_$t: ${seconds}s (log: $log)"
    # A crash stops the run; libFuzzer's status says so, the findings directory what it was.
    set +e
    (cd "$findings" && ASAN_OPTIONS="$asan" LSAN_OPTIONS="$lsan" "$build/bin/fuzz_$t" "$corpus" -seed_inputs=@"$build/fuzz/$t.seeds" "${dict[@]}" \
        -max_total_time="$seconds" -timeout="${TRAINSCOPE_FUZZ_TIMEOUT:-10}" -rss_limit_mb=$rss -malloc_limit_mb=$malloc -artifact_prefix="$findings/" \
        -print_final_stats=1) > "$log" 2>&1
    status=$?
    set -e
    execs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
    [[ -n $execs ]] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
    # Units in the final corpus (seeds included) as libFuzzer reports it; else the files kept.
    corpus_files=$(grep -oE 'corp: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
    [[ -n $corpus_files ]] || corpus_files=$(find "$corpus" -type f | wc -l)
    crashes=$(find "$findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
                                          -o -name 'oom-*' -o -name 'slow-unit-*' \) | wc -l)
    (( status == 0 && crashes == 0 )) || found_any=1
    summary+=("$(printf '%-19s executions %-9s corpus %-6s crashes %s%s' "fuzz_$t" "${execs:-?}" \
                 "$corpus_files" "$crashes" "$( (( status != 0 )) && echo " (libFuzzer exit $status, see $log)")")")
done

echo
echo "== summary (${seconds}s per target; findings under $build/fuzz/findings)"
printf '%s\n' "${summary[@]}"
exit $found_any
