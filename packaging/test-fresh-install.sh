#!/usr/bin/env bash
# Installs a TrainScope .deb into a fresh Debian 12 (a debootstrap chroot; needs root and the
# Debian mirror) and checks that it runs: the CLI, the GUI's offscreen screenshot, and the clear
# statement of a build without CUDA.
#
#   sudo packaging/test-fresh-install.sh build-package/trainscope_*.deb [ROOT_DIR]
set -euo pipefail
deb=$(readlink -f "$1")
root=${2:-/tmp/trainscope-debian12-root}
if [ ! -x "$root/usr/bin/apt-get" ]; then
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
cp "$deb" "$root/tmp/trainscope.deb"
chroot "$root" bash -euo pipefail -c '
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq /tmp/trainscope.deb >/dev/null
  trainscope-cli --version
  trainscope-cli inspect zoo:resnet50 | tail -1
  trainscope-cli gpus | grep -q "h100-sxm"
  set +e; trainscope-cli calibrate 2>/tmp/err; rc=$?; set -e
  [ "$rc" = 4 ] && grep -q "no CUDA support" /tmp/err
  QT_QPA_PLATFORM=offscreen trainscope --screenshot /tmp/shot.png 2>/dev/null
  [ "$(stat -c %s /tmp/shot.png)" -gt 2000 ]
  echo "fresh Debian 12: installed and ran"'
