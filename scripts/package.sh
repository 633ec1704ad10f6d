#!/usr/bin/env bash
# Builds the .deb: a Release build without LibTorch and without CUDA (see the README's
# "Packages" section for why), installed under /usr. The package lands in build-package/.
#
#   scripts/package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build-package}
scripts/setup.sh >/dev/null      # the Debian packages the build needs
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
      -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >/dev/null
cmake --build "$BUILD" -j "${TRAINSCOPE_JOBS:-$(nproc)}"
(cd "$BUILD" && cpack -G DEB)
ls -l "$BUILD"/*.deb
