#!/usr/bin/env bash
# gui_no_display.sh GUI [INPUT REPORT-NAME]: `trainscope INPUT` where there is no display (no
# DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM) says so, writes the hardware-choice report for the
# model (or the trace's job) into the working directory as REPORT-NAME, prints its path and exits 0.
# Default: a small ResNet-18, trainscope-report-resnet18.html.
set -u
gui=$1
input=${2:-'zoo:resnet18?image=64'}
name=${3:-trainscope-report-resnet18.html}
dir=$(mktemp -d)
out=$(cd "$dir" && env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$gui" "$input" 2>"$dir/err")
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: exit $rc: $(cat "$dir/err")"; exit 1; }
printf '%s\n' "$out" | head -1 | grep -q "no display" || { echo "FAIL: the first line does not say there is no display"; exit 1; }
report="$dir/$name"
[ "$(printf '%s\n' "$out" | tail -1)" = "$report" ] || { echo "FAIL: the path printed is not $report"; exit 1; }
head -c 15 "$report" | grep -q '<!DOCTYPE html>' || { echo "FAIL: $report is not HTML"; exit 1; }
grep -q 'data:image/png;base64,' "$report" || { echo "FAIL: no embedded plot"; exit 1; }
rm -rf "$dir"
echo ok
