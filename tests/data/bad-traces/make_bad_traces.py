#!/usr/bin/env python3
"""Writes the bad PyTorch profiler traces of this directory (run once; the files are committed).

Each file is paired in expected.tsv with a fragment of the one-line error `trainscope-cli inspect`
must print (exit status 2). Built from the start of a trace recorded on the CPU
(../traces/cpu_cnn_shapes.json.gz) and from small hand-written events."""
import gzip
import os
import zlib

here = os.path.dirname(os.path.abspath(__file__))
recorded = gzip.open(os.path.join(here, "..", "traces", "cpu_cnn_shapes.json.gz")).read()


def write(name, data):
    with open(os.path.join(here, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def events(*items):
    return '{"schemaVersion": 1, "traceEvents": [' + ", ".join(items) + "]}"


op = '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5%s}'
kernel = '{"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, %s}'

# Truncated: the text cut in the middle, and a gzip stream cut in the middle.
write("truncated.json", recorded[:3000])
compressed = gzip.compress(recorded[:200000], mtime=0)
write("truncated.json.gz", compressed[:len(compressed) // 2])
damaged = bytearray(gzip.compress(recorded[:20000], mtime=0))
damaged[40:80] = b"\xff" * 40
write("damaged.json.gz", bytes(damaged))
# Not a trace at all, once opened.
write("no_trace_events.json", '{"schemaVersion": 1, "deviceProperties": []}')
write("events_not_array.json", '{"schemaVersion": 1, "traceEvents": {"ph": "X"}}')
write("event_not_object.json", events("42"))
# Hostile: deep nesting, numbers beyond double, absurd times and sizes, wrong types, missing fields.
write("deep_nesting.json", '{"schemaVersion": 1, "traceEvents": [], "x": ' + "[" * 5000 + "]" * 5000 + "}")
write("huge_number.json", events(kernel % '"ts": 1, "dur": 1e999'))
write("absurd_ts.json", events(kernel % '"ts": 1e300, "dur": 1'))
write("negative_dur.json", events(kernel % '"ts": 1, "dur": -40'))
write("ts_string.json", events(kernel % '"ts": "yesterday", "dur": 1'))
write("missing_dur.json", events('{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10}'))
write("bad_grid.json", events(kernel % '"ts": 1, "dur": 1, "args": {"grid": [1, 2]}'))
write("huge_grid.json", events(kernel % '"ts": 1, "dur": 1, "args": {"grid": [1e15, 1, 1], "block": [1, 1, 1]}'))
write("negative_correlation.json", events(kernel % '"ts": 1, "dur": 1, "args": {"correlation": -1}'))
write("name_not_string.json", events('{"ph": "X", "cat": "cpu_op", "name": [1], "pid": 1, "tid": 1, "ts": 1, "dur": 1}'))
write("args_not_object.json", events(op % ', "args": "none"'))
write("huge_string.json.gz", gzip.compress(events('{"ph": "X", "cat": "cpu_op", "name": "' + "a" * (1 << 21) + '", "ts": 1, "dur": 1}').encode(), mtime=0))
write("zlib_truncated.json.gz", zlib.compress(recorded[:100000])[:5000])
