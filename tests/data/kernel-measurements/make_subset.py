#!/usr/bin/env python3
"""Regenerates this test subset from the public measurements (NeuSight artifact, MIT licence; see
/work/shared/data/gpu-kernel-measurements/README.md and LICENSE): per operator folder, the same
N configurations on all five GPUs, spread evenly over the latency range of the first GPU so the
subset keeps floor-bound and large configurations. Same schema and file names as the original.

    python3 make_subset.py /work/shared/data/gpu-kernel-measurements [N]
"""
import csv, os, sys

SIZE = {"linear": ["B", "M", "N", "K"], "bmm": ["B", "M", "N", "K"],
        "conv": ["B", "Input_Channel", "Output_Channel", "Kernel_Szie", "Input_Size", "Stride", "Padding"]}


def main(src, n):
    here = os.path.dirname(os.path.abspath(__file__))
    for op in sorted(os.listdir(src)):
        folder = os.path.join(src, op)
        if not os.path.isdir(folder):
            continue
        cols = SIZE.get(op, ["B", "H"])
        files = sorted(f for f in os.listdir(folder) if f.endswith(".csv"))
        tables = {}
        for f in files:
            with open(os.path.join(folder, f), newline="") as fh:
                r = csv.DictReader(fh)
                tables[f] = (r.fieldnames, list(r))
        keysets = [{tuple(row[c] for c in cols) for row in rows} for _, rows in tables.values()]
        common = set.intersection(*keysets)
        first = {}
        for row in tables[files[0]][1]:
            k = tuple(row[c] for c in cols)
            if k in common and k not in first:
                first[k] = float(row["Latency"])
        ordered = sorted(common, key=lambda k: (first[k], k))
        step = max(1, len(ordered) // n)
        chosen = set(ordered[i] for i in range(0, len(ordered), step)[:n]) | {ordered[-1]}
        os.makedirs(os.path.join(here, op), exist_ok=True)
        for f, (fields, rows) in tables.items():
            with open(os.path.join(here, op, f), "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
                w.writeheader()
                for row in rows:
                    if tuple(row[c] for c in cols) in chosen:
                        w.writerow(row)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12)
