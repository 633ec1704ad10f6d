#!/usr/bin/env bash
# GPU checkup, for the moment a GPU is lent through the `device` tool (/work/.library/device/README.md):
# builds the headless parts against the GPU machine's CUDA LibTorch, runs `ctest -L gpu` and
# `calibrate`, times the ResNet-50 per-layer profile and records the profile set (the zoo models x
# fp32, tf32, amp-bf16, amp-fp16 x 3 batch sizes, scripts/record-profiles.sh gpu), and brings it all
# back under $OUT. docs/gpu-checkup.md says what each step checks and how to read the results.
#
# usage: scripts/gpu-checkup.sh [OPTIONS] STAGE...
#
# Stages, run in the order given; each is idempotent and picks up where an earlier call stopped:
#   deps          HERE, before the first device call (no device time): downloads the Debian development
#                 packages the build needs (JSON, CLI11, protobuf, ONNX, GoogleTest; ~6 MB) into
#                 build-checkup/debs/, since nothing can be fetched on the GPU machine; git ignores
#                 build-checkup/, so every `run` call names it in `carry`
#   build         configures (once) and builds trainscope-cli and trainscope_tests in build-gpu/ against
#                 the LibTorch of the machine's python3 (Release, no GUI); skipped when the sources
#                 are the ones already built
#   test          ctest -L gpu (every GPU test must run: a skip fails), then calibrate
#   time          the ResNet-50 per-layer profile (fp32, batch 32,64,128, adam), its wall time and the
#                 time of each of its steps; the file is the set's resnet50 fp32 profile
#   profiles K/N  part K of N of the profile set (record-profiles.sh gpu --part K/N --resume); profiles
#                 not started before the call's budget runs out are left for a later call
#   microbench    scripts/gpu_microbench.py (under a minute, no build): an LM head's GEMMs at odd, even
#                 and aligned widths, instance and batch normalisation in passes, nnU-Net's 3D
#                 convolution: what the time model charges without a measurement (docs/gpu-checkup.md)
# test, time and profiles run build first when this machine has no build of these sources (a fresh
# machine: the last one went back after 30 s idle).
#
# Options:
#   --dry-run        every stage on the CPU here, with tiny settings (the cpu device, a 32-pixel ResNet-18
#                    at batch 1,2 for the set, a 32-pixel ResNet-50 at batch 1 for `time`, --quick), into
#                    a temporary $OUT unless --out is given; a skipped GPU test and calibrate's
#                    "no GPU" (status 4) are accepted and reported. tests/cli/gpu_checkup_dry_run.sh runs it.
#   --build-dir DIR  the build folder (default build-gpu, or build with --dry-run)
#   --state DIR      where results gather across calls (default DIR/gpu-checkup of the build folder:
#                    kept while the machine stays warm; a temporary folder with --dry-run)
#   --out DIR        where the results go back (default $OUT, which the device tool sets)
#   --budget S       seconds this call may take before packing its results (default 540, inside the
#                    tool's 600): no profile starts after S-110 s, one still running at S-20 s is stopped
#
# The device calls, in this order, each made as soon as the last one's reply is in (the machine stays
# warm 30 s), about 24 minutes of device time in all, so two leases at the 15 minutes a task is lent
# today (docs/gpu-checkup.md):
#   here:   scripts/gpu-checkup.sh deps
#   run(command="scripts/gpu-checkup.sh build test", carry=["build-checkup"], timeout_s=600)       ~8 min
#   run(command="scripts/gpu-checkup.sh --budget 240 time microbench profiles 1/3", carry=["build-checkup"], timeout_s=300)
#                                                                                                  ~4 min
#   a later lease: "build profiles 2/3", then "profiles 3/3"                                       ~7 + 7 min
# plus about 2 minutes for each machine's start. Each call leaves in $OUT: summary.txt (every call's
# lines so far) and gpu-checkup.tar.gz (the whole state folder: logs, JSON, profiles; in 15 MiB pieces
# gpu-checkup.tar.gz.00, .01, ... if larger). Copy that tarball into build-checkup/ before the next
# call: should the machine have gone back in between, the next call restores it instead of starting
# over (the build is redone, ~5 min).
# Exit status: 0 when every step of the call passed, 1 when one failed, 75 when steps were left
# for a later call, 64 for a usage error.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 64
}
root=$(cd "$(dirname "$0")/.." && pwd)
dry_run=0 build_dir="" state="" out=${OUT:-} budget=540
stages=()
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) dry_run=1; shift ;;
        --build-dir) build_dir=${2:?--build-dir needs a folder}; shift 2 ;;
        --state) state=${2:?--state needs a folder}; shift 2 ;;
        --out) out=${2:?--out needs a folder}; shift 2 ;;
        --budget) budget=${2:?--budget needs seconds}; shift 2 ;;
        -h|--help) usage ;;
        deps|build|test|time|microbench) stages+=("$1"); shift ;;
        profiles)
            [[ "${2:-}" =~ ^[1-9][0-9]*/[1-9][0-9]*$ ]] || { echo "gpu-checkup.sh: profiles needs K/N, e.g. profiles 1/2" >&2; exit 64; }
            stages+=("profiles $2"); shift 2 ;;
        *) echo "gpu-checkup.sh: unknown stage or option '$1'" >&2; usage ;;
    esac
done
[ ${#stages[@]} -gt 0 ] || usage
[[ "$budget" =~ ^[0-9]+$ ]] && [ "$budget" -ge 150 ] || { echo "gpu-checkup.sh: --budget $budget: at least 150 s" >&2; exit 64; }
t_start=$(date +%s)

# ---- deps: runs here, where the package registry can be reached ----
# The Debian bookworm packages of the libraries the top-level CMakeLists.txt requires (and GoogleTest
# for the tests), with the runtime libraries the -dev packages point to: unpacked into a folder of
# their own on the GPU machine, never into /.
deb_packages=(nlohmann-json3-dev libcli11-dev libprotobuf-dev libprotobuf32 libprotobuf-lite32
              protobuf-compiler libprotoc32 libonnx-dev libonnx1 libonnxifi libgtest-dev libgmock-dev)
if [ "${stages[*]}" = deps ]; then
    debs=$root/build-checkup/debs
    mkdir -p "$debs"
    rm -f "$debs"/*.deb
    apt_opts=()
    if [ "$(uname -m)" != x86_64 ]; then
        # The GPU machine is x86-64 whatever this one is (device README).
        apt_opts=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
        mkdir -p /tmp/amd64/partial
        apt-get "${apt_opts[@]}" update -qq
    fi
    (cd "$debs" && apt-get "${apt_opts[@]}" download "${deb_packages[@]}") ||
        { echo "gpu-checkup.sh: apt-get download failed (apt-get update first?)" >&2; exit 1; }
    echo "$(ls "$debs"/*.deb | wc -l) packages, $(du -sh "$debs" | cut -f1) in $debs:"
    echo "name build-checkup in the carry of every device run call"
    exit 0
fi
for s in "${stages[@]}"; do
    [ "$s" != deps ] || { echo "gpu-checkup.sh: deps runs alone, here, before the device calls" >&2; exit 64; }
done

# ---- where things go ----
if [ "$dry_run" = 1 ]; then
    build_dir=${build_dir:-$root/build}
    if [ -z "$state" ] || [ -z "$out" ]; then
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-checkup-dry-run.XXXXXX")
        state=${state:-$tmp/state/gpu-checkup}
        out=${out:-$tmp/out}
    fi
else
    build_dir=${build_dir:-$root/build-gpu}
    state=${state:-$build_dir/gpu-checkup}
    [ -n "$out" ] || { echo "gpu-checkup.sh: no \$OUT (the device tool sets it; else give --out)" >&2; exit 64; }
fi
case "$build_dir" in /*) ;; *) build_dir=$PWD/$build_dir ;; esac
mkdir -p "$state" "$out"
state=$(cd "$state" && pwd)
cli=$build_dir/bin/trainscope-cli
summary=$state/summary.txt
deps_prefix=$build_dir/checkup-deps
stop=$((t_start + budget - 20))        # a profile still running then is interrupted, to leave time to pack
deadline=$((stop - 90))                # no profile starts after this: most take under 90 s on an H100
failed=0 left=0 built=0 build_ok=0

say() { echo "$*" | tee -a "$summary"; }
# Runs a command for at most the seconds left before $stop (status 124 when cut short), so that the
# call ends, and packs, before the device tool's own limit kills it with nothing sent back.
bounded() {
    local left_s=$((stop - $(date +%s)))
    [ "$left_s" -gt 0 ] || return 124
    timeout -k 10 "$left_s" "$@"
}
seconds_since() { awk -v a="$1" -v b="${EPOCHREALTIME/./}" 'BEGIN{printf "%.1f", (b-a)/1e6}'; }

# Packs the state folder into $OUT when the call ends, whatever ended it, so that what was done comes
# back even after a failure: summary.txt and gpu-checkup.tar.gz (split if over the tool's 16 MiB a file).
pack() {
    local rc=$?
    set +e
    [ "$rc" = 0 ] || [ "$rc" = 75 ] || [ "$rc" = 1 ] || { say "call: stopped by an unexpected error (status $rc)"; failed=1; }
    say "call: $(if [ "$failed" != 0 ]; then echo FAILED; elif [ "$left" != 0 ]; then echo "ok, steps left for a later call"; else echo ok; fi) in $(($(date +%s) - t_start)) s"
    rm -f "$out"/gpu-checkup.tar.gz*
    cp "$summary" "$out/summary.txt"
    tar -C "$(dirname "$state")" -czf "$out/gpu-checkup.tar.gz" "$(basename "$state")"
    if [ "$(stat -c %s "$out/gpu-checkup.tar.gz")" -gt $((15 * 1024 * 1024)) ]; then
        split -b 15M -d "$out/gpu-checkup.tar.gz" "$out/gpu-checkup.tar.gz."
        rm "$out/gpu-checkup.tar.gz"
    fi
    echo "results: $(cd "$out" && ls | tr '\n' ' ')in $out"
    if [ "$failed" != 0 ]; then exit 1; elif [ "$left" != 0 ]; then exit 75; else exit "$rc"; fi
}
trap pack EXIT

# A fresh machine (the last one went back when idle) has no state folder: when the session copied the
# last call's gpu-checkup.tar.gz into build-checkup/ and carries it, go on from there instead of
# recording again what came back already.
restore=$root/build-checkup/gpu-checkup.tar.gz
if [ "$dry_run" = 0 ] && [ ! -f "$summary" ] && [ -f "$restore" ]; then
    tar -C "$(dirname "$state")" -xzf "$restore"
    say "== restored the results of earlier calls from build-checkup/gpu-checkup.tar.gz"
fi
say "== call: ${stages[*]}$([ "$dry_run" = 1 ] && echo " (dry run on the CPU)"), started $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), budget $budget s"

# ---- build ----
python_for_torch() {
    if [ "$dry_run" = 1 ]; then
        local venv=${TRAINSCOPE_VENV:-$HOME/.cache/trainscope/venv}
        [ -x "$venv/bin/python" ] && { echo "$venv/bin/python"; return; }
    fi
    command -v python3
}

# The carried Debian packages, unpacked once per machine into the build folder (a fresh machine has
# neither); their libraries are found at run time through LD_LIBRARY_PATH (protoc needs it too).
unpack_deps() {
    local debs=$root/build-checkup/debs d
    if [ ! -d "$deps_prefix/usr" ] && compgen -G "$debs/*.deb" >/dev/null; then
        mkdir -p "$deps_prefix"
        for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$deps_prefix"; done
    fi
    if [ -d "$deps_prefix/usr" ]; then
        export PATH=$deps_prefix/usr/bin:$PATH
        export LD_LIBRARY_PATH=$deps_prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
}

# What the build depends on, by content: the tool copies the working tree anew for each call, so file
# times say nothing; equal sums mean the build in hand is of these sources.
source_sum() {
    (cd "$root" && find . \( -path ./.git -o -path './build*' \) -prune -o -type f -print0 | LC_ALL=C sort -z |
        xargs -0 sha1sum | sha1sum | cut -c1-16)
}

# The software the build and the measurements ran with, for the record.
record_environment() {
    local py=$1
    {
        echo "python: $py"; "$py" -c 'import sys, torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "at", torch.__file__)'
        cmake --version | head -1; ninja --version; ${CXX:-c++} --version | head -1
        command -v nvcc >/dev/null && nvcc --version | tail -2
        uname -a
    } >"$state/build/environment.txt" 2>&1 || true
}

stage_build() {
    mkdir -p "$state/build"
    local log=$state/build/build.log t0=${EPOCHREALTIME/./} sum py torch_cmake prefix how rc=0
    built=1
    unpack_deps
    # Inside the test suite the build folder is the suite's own: rebuilding it there would change the
    # binaries other tests are running. The dry run checks the build is present and uses it.
    if [ "$dry_run" = 1 ] && [ -x "$cli" ] && [ -x "$build_dir/bin/trainscope_tests" ]; then
        echo "dry run: $build_dir used as it is; $("$cli" --version)" >"$log"
        record_environment "$(python_for_torch)"
        say "build: ok, dry run: the build in $build_dir is used as it is (not rebuilt inside a test)"
        build_ok=1
        return 0
    fi
    sum=$(source_sum)
    if [ -x "$cli" ] && [ -x "$build_dir/bin/trainscope_tests" ] && [ "$(cat "$build_dir/checkup-source-sum" 2>/dev/null)" = "$sum" ]; then
        say "build: ok, up to date (sources $sum already built in $build_dir)"
        build_ok=1
        return 0
    fi
    # nvcc is where CUDA images put it even when it is not on the PATH.
    command -v nvcc >/dev/null || [ ! -x /usr/local/cuda/bin/nvcc ] || export PATH=$PATH:/usr/local/cuda/bin
    py=$(python_for_torch)
    how="built"
    record_environment "$py"
    # build.ninja is written last: a configure cut short is done again.
    if [ ! -f "$build_dir/build.ninja" ]; then
        how="configured and built"
        torch_cmake=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null) || {
            failed=1
            say "build: FAILED: $py cannot import torch, whose LibTorch the build links"
            return 1
        }
        prefix=$torch_cmake
        [ ! -d "$deps_prefix/usr" ] || prefix="$deps_prefix/usr;$prefix"
        # Hopper only for LibTorch's own CUDA flags (the kernels name their architectures themselves):
        # fewer architectures, a shorter build.
        TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} bounded cmake -S "$root" -B "$build_dir" -G Ninja \
            -DCMAKE_BUILD_TYPE=Release -DTRAINSCOPE_BUILD_GUI=OFF -DCMAKE_PREFIX_PATH="$prefix" \
            -DTRAINSCOPE_PYTHON="$py" >"$state/build/configure.log" 2>&1 || rc=$?
    fi
    if [ "$rc" = 0 ]; then
        bounded cmake --build "$build_dir" -j "$(nproc)" --target trainscope-cli trainscope_tests >"$log" 2>&1 || rc=$?
    fi
    if [ "$rc" = 124 ]; then
        left=1
        say "build: left, the call's budget ran out after $(seconds_since "$t0") s: call again with 'build' first"
        return 1
    elif [ "$rc" != 0 ]; then
        failed=1
        # The first error says most; configure.log exists only when the configure ran.
        say "build: FAILED (status $rc) in $(seconds_since "$t0") s: $(cat "$state/build/configure.log" "$log" 2>/dev/null |
            grep -m 1 -iE 'error|failed' || echo "see build/build.log")"
        return 1
    fi
    echo "$sum" >"$build_dir/checkup-source-sum"
    build_ok=1
    say "build: ok, $how in $(seconds_since "$t0") s ($(grep -m 1 '^torch ' "$state/build/environment.txt" | sed 's/ at .*//' ||
        echo "torch?"); $build_dir)"
}

# Later stages need the binaries: build (or find the build current) once per call.
need_build() {
    [ "$built" = 1 ] || stage_build || true
    [ "$build_ok" = 1 ]
}

device_line() {
    "$cli" devices --json >"$state/devices.json" 2>&1 || true
    python3 - "$state/devices.json" <<'EOF' || echo "device: unknown (devices --json failed)"
import json, sys
d = json.load(open(sys.argv[1]))
if d.get("devices"):
    g = d["devices"][0]
    print("device: %s, CC %s, %s SMs, %.0f GiB; driver %s, CUDA runtime %s" % (
        g.get("name"), g.get("compute_capability"), g.get("sms"), g.get("memory_bytes", 0) / 2**30, d.get("driver_version"), d.get("runtime_version")))
else:
    print("device: cpu (no GPU: %s)" % d.get("status"))
EOF
}

# ---- test: ctest -L gpu, calibrate ----
stage_test() {
    mkdir -p "$state/test"
    need_build || { say "test: skipped, no build"; [ "$left" = 1 ] || failed=1; return; }
    say "$(device_line)"
    command -v nvidia-smi >/dev/null && nvidia-smi -q >"$state/test/nvidia-smi.txt" 2>&1 || true
    local t0=${EPOCHREALTIME/./} rc=0 log=$state/test/ctest-gpu.log tests_dir=$build_dir total fails skips
    # The dry run is itself one of the outer ctest's tests in the same build folder: a ctest run
    # there would write over the outer one's Testing/ log, so it runs in tests/, which holds every
    # gpu-labelled test.
    [ "$dry_run" = 0 ] || tests_dir=$build_dir/tests
    bounded ctest --test-dir "$tests_dir" -L gpu --no-tests=error --output-on-failure --timeout 600 \
        --output-junit "$state/test/ctest-gpu.xml" >"$log" 2>&1 || rc=$?
    total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -n 1)
    fails=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -n 1)
    skips=$(grep -c '(Skipped)$' "$log" || true)
    if [ "$rc" = 124 ]; then
        left=1
        say "ctest -L gpu: left, the call's budget ran out after $(seconds_since "$t0") s: call again with 'test'"
    elif [ "$rc" != 0 ] || [ -z "$total" ]; then
        failed=1
        say "ctest -L gpu: FAILED (status $rc) in $(seconds_since "$t0") s: ${total:-?} tests, ${fails:-?} failed, $skips skipped"
    elif [ "$skips" != 0 ] && [ "$dry_run" = 0 ]; then
        failed=1
        say "ctest -L gpu: FAILED in $(seconds_since "$t0") s: $total tests, $skips skipped (a GPU checkup runs every GPU test)"
    else
        say "ctest -L gpu: ok in $(seconds_since "$t0") s: $total tests, $fails failed, $skips skipped$([ "$skips" != 0 ] && echo " (no GPU, accepted in the dry run)")"
    fi

    t0=${EPOCHREALTIME/./} rc=0
    bounded "$cli" calibrate -o "$state/test/calibration-gpus.json" --json >"$state/test/calibrate.json" \
        2>"$state/test/calibrate.err" || rc=$?
    if [ "$rc" = 0 ]; then
        say "calibrate: ok in $(seconds_since "$t0") s -> test/calibrate.json, test/calibration-gpus.json"
    elif [ "$rc" = 124 ]; then
        left=1
        say "calibrate: left, the call's budget ran out after $(seconds_since "$t0") s: call again with 'test'"
    elif [ "$rc" = 4 ] && [ "$dry_run" = 1 ]; then
        say "calibrate: no GPU (status 4, accepted in the dry run): $(tail -n 1 "$state/test/calibrate.err")"
    else
        failed=1
        say "calibrate: FAILED (status $rc) in $(seconds_since "$t0") s: $(tail -n 1 "$state/test/calibrate.err")"
    fi
}

# ---- time and profiles: scripts/record-profiles.sh ----
record() {  # record(TIMES-FILE, record-profiles options...): returns its status, never fails the call
    local mode=gpu
    [ "$dry_run" = 0 ] || mode=cpu
    "$root/scripts/record-profiles.sh" --out "$state/profiles" --times "$1" --deadline "$deadline" \
        --stop "$stop" "${@:2}" "$mode" "$cli"
}

stage_time() {
    mkdir -p "$state/time"
    need_build || { say "time: skipped, no build"; [ "$left" = 1 ] || failed=1; return; }
    local model='zoo:resnet50|32,64,128' times=$state/time/times.txt rc=0 log status="" secs="" file=""
    [ "$dry_run" = 0 ] || model='zoo:resnet50?image=32&classes=10|1'
    : >"$times"
    record "$times" --model "$model" --precisions fp32 --logs "$state/time" >"$state/time/record.log" 2>&1 || rc=$?
    # times.txt: MODEL PRECISION STATUS SECONDS FILE
    read -r _ _ status secs file <"$times" || true
    log=$(ls "$state/time"/*-fp32.log 2>/dev/null | head -n 1 || true)
    if [ "$rc" = 0 ] && [ "$status" = ok ]; then
        # The longest step: the gap between a progress line and the next one.
        say "time: ${model%%|*} fp32 batch ${model##*|} (adam) per-layer profile: ok, $secs s wall; longest step: $(
            awk '{t=$1; $1=""; if (NR>1 && t-pt>best) {best=t-pt; what=prev} pt=t; prev=substr($0,2)}
                 END{printf "%s %.1f s", what, best}' "$log") -> ${file#"$state"/}"
    elif [ "$rc" = 75 ]; then
        left=1
        say "time: left, the call's budget ran out (${status:-not started}): call again with 'time'"
    else
        failed=1
        say "time: FAILED (status $rc): $(tail -n 1 "${log:-$state/time/record.log}")"
    fi
}

stage_profiles() {
    local part=$1 times=$state/profiles/times.txt rc=0 before t0=${EPOCHREALTIME/./} counts
    mkdir -p "$state/profiles/logs"
    need_build || { say "profiles $part: skipped, no build"; [ "$left" = 1 ] || failed=1; return; }
    touch "$times"
    before=$(wc -l <"$times")
    local dry=()
    # The dry run's set: one small model at batch 1,2 in the four precisions.
    # shellcheck disable=SC2054  # the commas are record-profiles' list syntax
    [ "$dry_run" = 0 ] || dry=(--model 'zoo:resnet18?image=32&classes=10|1,2' --precisions fp32,tf32,amp-bf16,amp-fp16)
    record "$times" --part "$part" --resume --logs "$state/profiles/logs" "${dry[@]}" \
        >>"$state/profiles/record.log" 2>&1 || rc=$?
    counts=$(tail -n +"$((before + 1))" "$times" | awk '{n[$3 ~ /^failed/ ? "failed" : $3]++}
        END{printf "%d recorded, %d failed, %d left", n["ok"], n["failed"], n["left"] + n["interrupted"]}')
    if [ "$rc" = 0 ]; then
        say "profiles $part: ok in $(seconds_since "$t0") s: $counts ($(ls "$state"/profiles/*/*.json | wc -l) profiles in all)"
    elif [ "$rc" = 75 ]; then
        left=1
        say "profiles $part: $counts in $(seconds_since "$t0") s: the call's budget ran out, run 'profiles $part' again"
    else
        failed=1
        say "profiles $part: FAILED (status $rc) in $(seconds_since "$t0") s: $counts; see profiles/record.log"
    fi
}

# ---- microbench: scripts/gpu_microbench.py, with the machine's PyTorch; needs no build ----
stage_microbench() {
    mkdir -p "$state/microbench"
    local rc=0 t0=${EPOCHREALTIME/./} log=$state/microbench/log.txt args=()
    [ "$dry_run" = 0 ] || args=(--quick --device cpu)
    bounded "$(python_for_torch)" "$root/scripts/gpu_microbench.py" "${args[@]}" \
        --out "$state/microbench/results.json" >"$log" 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then
        say "microbench: ok in $(seconds_since "$t0") s: $(tail -n 1 "$log") -> microbench/results.json"
    elif [ "$rc" = 124 ]; then
        left=1
        say "microbench: left, the call's budget ran out after $(seconds_since "$t0") s: call again with 'microbench'"
    else
        failed=1
        say "microbench: FAILED (status $rc) in $(seconds_since "$t0") s: $(tail -n 1 "$log")"
    fi
}

for s in "${stages[@]}"; do
    case "$s" in
        build) stage_build || true ;;
        test) stage_test ;;
        time) stage_time ;;
        microbench) stage_microbench ;;
        profiles*) stage_profiles "${s#profiles }" ;;
    esac
done
