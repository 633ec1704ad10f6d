#!/usr/bin/env bash
# Builds TrainScope with AddressSanitizer and UndefinedBehaviorSanitizer (the `asan` preset) and
# runs the CPU test suite under them. Slow (a Debug build of everything, LibTorch included):
# run it before a release, or when CI time allows.
#
#   scripts/sanitize.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests >/dev/null   # dependencies; the asan build itself is separate
cmake --preset asan -DTRAINSCOPE_PYTHON="${TRAINSCOPE_VENV:-$HOME/.cache/trainscope/venv}/bin/python" >/dev/null
cmake --build --preset asan -j "${TRAINSCOPE_JOBS:-$(nproc)}"
# LibTorch is not instrumented; its allocations are outside ASan's view but harmless to it.
ctest --preset asan -L cpu "$@"
