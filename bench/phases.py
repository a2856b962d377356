#!/usr/bin/env python3
"""Where a job's time goes: runs each case's `airlock run --json ...` command N times, cases
alternating, PAUSE_MS after each run, and prints a Markdown table of medians: the wall time
seen from here, every phase of the record's `timing`, and the rest (wall minus the phases:
airlock's own start, the job directory, the record written and fsynced with the sandbox's
removal beside it; a record without `cleanup_ms` shows "-" there).

  bench/phases.py [--runs N] [--pause-ms MS] --case NAME CMD [ARG...] [--case ...]
"""
import json
import statistics
import subprocess
import sys
import time

PHASES = ["prepare_ms", "take_ms", "admit_ms", "start_ms", "run_ms", "stop_ms", "collect_ms", "cleanup_ms"]


def main(argv):
    runs, pause_ms, cases = 5, 0, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if cases and a != "--case":
            cases[-1][1].append(a)
        elif a == "--runs":
            runs, i = int(argv[i + 1]), i + 1
        elif a == "--pause-ms":
            pause_ms, i = int(argv[i + 1]), i + 1
        elif a == "--case":
            cases.append((argv[i + 1], []))
            i += 1
        else:
            sys.exit(f"phases.py: unknown option {a}")
        i += 1
    rows = {name: [] for name, _ in cases}
    starts = {name: set() for name, _ in cases}
    for _ in range(runs):
        for name, cmd in cases:
            t0 = time.perf_counter()
            out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
            wall = (time.perf_counter() - t0) * 1000
            record = json.loads(out)
            t = dict(record["timing"])
            t["wall_ms"] = wall
            t["rest_ms"] = wall - sum(t.get(p, 0) for p in PHASES)
            rows[name].append(t)
            starts[name].add(record["sandbox"]["start"])
            time.sleep(pause_ms / 1000)
    cols = ["wall_ms"] + PHASES + ["rest_ms"]
    print("| case (started as) | " + " | ".join(c[:-3] for c in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for name, _ in cases:
        cells = []
        for c in cols:
            vals = [t[c] for t in rows[name] if c in t]
            cells.append(f"{statistics.median(vals):.2f}" if vals else "-")
        print(f"| {name} ({'/'.join(sorted(starts[name]))}) | " + " | ".join(cells) + " |")
    print(f"\nMedians of {runs} runs each, ms. rest: outside the record's phases (airlock's own start,"
          " the job directory, the record written and fsynced).")


if __name__ == "__main__":
    main(sys.argv[1:])
