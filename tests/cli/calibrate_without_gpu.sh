#!/usr/bin/env bash
# Without a GPU, `calibrate` exits with status 4 and one sentence saying why; everything that
# needs no GPU (here: `gpus`) keeps working. Skipped (77) where a GPU is present.
set -u
cli=$1
if "$cli" devices | grep -q '^cuda:0 '; then echo "a GPU is present: nothing to check"; exit 77; fi
out=$(mktemp -d)
err=$("$cli" calibrate -o "$out/cal.json" 2>&1 >/dev/null)
rc=$?
echo "exit $rc: $err"
[ "$rc" = 4 ] || { echo "FAIL: expected exit status 4"; exit 1; }
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { echo "FAIL: expected one line"; exit 1; }
printf '%s' "$err" | grep -q "cannot calibrate: " || { echo "FAIL: no reason given"; exit 1; }
[ ! -e "$out/cal.json" ] || { echo "FAIL: wrote a calibration without measuring"; exit 1; }
rm -rf "$out"
"$cli" gpus >/dev/null || { echo "FAIL: gpus needs no GPU"; exit 1; }
echo ok
