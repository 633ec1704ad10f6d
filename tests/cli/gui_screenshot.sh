#!/usr/bin/env bash
# `trainscope --screenshot FILE` renders the window without a display: FILE must be a PNG with
# something drawn in it, and a model that cannot be opened exits with status 2.
set -u
gui=$1
out=$(mktemp -d)
QT_QPA_PLATFORM=offscreen "$gui" zoo:resnet50 --screenshot "$out/shot.png" || { echo "FAIL: exit $?"; exit 1; }
[ "$(head -c 8 "$out/shot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "FAIL: not a PNG"; exit 1; }
[ "$(stat -c %s "$out/shot.png")" -gt 2000 ] || { echo "FAIL: nearly empty image"; exit 1; }
QT_QPA_PLATFORM=offscreen "$gui" "$out/missing.onnx" --screenshot "$out/err.png"
[ $? = 2 ] || { echo "FAIL: a model that cannot be opened must exit with 2"; exit 1; }
rm -rf "$out"
echo ok
