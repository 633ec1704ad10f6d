#!/usr/bin/env bash
# Installs what is missing, configures and builds TrainScope. Idempotent: a second run with
# nothing changed checks in seconds and rebuilds nothing.
#
#   scripts/setup.sh            runtime dependencies + build
#   scripts/setup.sh --tests    also the Python packages the test suite uses to build real models
#
# Environment: TRAINSCOPE_VENV (default ~/.cache/trainscope/venv) holds PyTorch, whose LibTorch
# the build links; BUILD_DIR (default build); TRAINSCOPE_JOBS (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
for arg in "$@"; do
  case "$arg" in
    --tests) with_tests=1 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 1 ;;
  esac
done

VENV=${TRAINSCOPE_VENV:-$HOME/.cache/trainscope/venv}
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${TRAINSCOPE_JOBS:-$(nproc)}
log() { echo "[setup] $*" >&2; }

# ---- Debian packages ----
packages=(build-essential cmake ninja-build ccache pkg-config python3-venv
          qt6-base-dev libqcustomplot-dev libonnx-dev libprotobuf-dev protobuf-compiler
          nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev zlib1g-dev)
[ "$with_tests" = 1 ] && packages+=(libonnx-testdata poppler-utils)  # pdftotext: the report test reads its PDF
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# ---- PyTorch (LibTorch) in a virtual environment outside the source tree ----
# python3-venv's interpreter; a pyenv or system python works as well.
PY=${TRAINSCOPE_PYTHON_FOR_VENV:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  log "creating the virtual environment $VENV"
  mkdir -p "$(dirname "$VENV")"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
fi
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ ! -f "$site/torch/share/cmake/Torch/TorchConfig.cmake" ]; then
  log "installing PyTorch (LibTorch with CUDA; several GB, once)"
  "$VENV/bin/pip" install -q 'torch>=2.0'
fi
if [ "$with_tests" = 1 ]; then
  need=()
  for mod in torchvision transformers onnx onnxscript numpy peft; do
    [ -d "$site/$mod" ] || need+=("$mod")
  done
  if [ ${#need[@]} -gt 0 ]; then
    log "installing test packages: ${need[*]}"
    "$VENV/bin/pip" install -q "${need[@]}"
  fi
fi
TORCH_CMAKE="$site/torch/share/cmake"

# ---- configure (once, or when the environment moved) and build ----
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] || ! grep -q "CMAKE_PREFIX_PATH:UNINITIALIZED=$TORCH_CMAKE\$" "$BUILD_DIR/CMakeCache.txt"; then
  log "configuring $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_PREFIX_PATH="$TORCH_CMAKE" -DTRAINSCOPE_PYTHON="$VENV/bin/python" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
