#!/usr/bin/env bash
# expect_error.sh [--usage] CLI FILE FRAGMENT [COMMAND...]: `CLI COMMAND FILE` (COMMAND defaults to
# `inspect`) must fail with status 2 and print exactly one line on stderr that names FILE and
# contains FRAGMENT (case-insensitive), within 30 s.
#
# --usage: a command-line usage error as CLI11 reports it instead: status 1, the line naming FILE
# and containing FRAGMENT, then CLI11's own second line "Run with --help for more information.".
#
# Any other status fails, so a crash (a signal), an internal error (3) or a missing device (4)
# cannot pass for the refusal a test claims; FILE is the offending value (a path, an ID, an option's
# argument), so "names FILE" means the message says which input was wrong.
set -u
status=2 lines=1
if [ "${1:-}" = --usage ]; then
    status=1 lines=2
    shift
fi
[ $# -ge 3 ] || { echo "usage: expect_error.sh [--usage] CLI FILE FRAGMENT [COMMAND...]" >&2; exit 1; }
cli=$1 file=$2 fragment=$3
shift 3
[ $# -gt 0 ] || set -- inspect
err=$(mktemp)
timeout 30 "$cli" "$@" "$file" >/dev/null 2>"$err"
rc=$?
msg=$(cat "$err"); rm -f "$err"
echo "exit $rc: $msg"
[ "$rc" = 124 ] && { echo "FAIL: hung"; exit 1; }
[ "$rc" = "$status" ] || { echo "FAIL: expected exit status $status"; exit 1; }
[ "$(printf '%s\n' "$msg" | wc -l)" = "$lines" ] || { echo "FAIL: expected $lines line(s)"; exit 1; }
first=$(printf '%s\n' "$msg" | head -n 1)
if [ "$lines" = 2 ]; then
    [ "$(printf '%s\n' "$msg" | tail -n 1)" = "Run with --help for more information." ] ||
        { echo "FAIL: the second line is not CLI11's usage hint"; exit 1; }
fi
case "$first" in *"$file"*) ;; *) echo "FAIL: the message does not name $file"; exit 1 ;; esac
printf '%s' "$first" | grep -qiF -- "$fragment" || { echo "FAIL: the message lacks '$fragment'"; exit 1; }
echo "ok"
