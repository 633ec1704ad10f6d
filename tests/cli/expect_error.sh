#!/usr/bin/env bash
# expect_error.sh CLI FILE FRAGMENT [COMMAND...]: `CLI COMMAND FILE` (COMMAND defaults to `inspect`)
# must fail with status 2 and print exactly one line on stderr that names FILE and contains
# FRAGMENT (case-insensitive), within 30 s.
set -u
cli=$1 file=$2 fragment=$3
shift 3
[ $# -gt 0 ] || set -- inspect
err=$(mktemp)
timeout 30 "$cli" "$@" "$file" >/dev/null 2>"$err"
rc=$?
msg=$(cat "$err"); rm -f "$err"
echo "exit $rc: $msg"
[ "$rc" = 124 ] && { echo "FAIL: hung"; exit 1; }
[ "$rc" = 2 ] || { echo "FAIL: expected exit status 2"; exit 1; }
[ "$(printf '%s\n' "$msg" | wc -l)" = 1 ] || { echo "FAIL: expected one line"; exit 1; }
case "$msg" in *"$file"*) ;; *) echo "FAIL: the message does not name $file"; exit 1 ;; esac
printf '%s' "$msg" | grep -qiF -- "$fragment" || { echo "FAIL: the message lacks '$fragment'"; exit 1; }
echo "ok"
