#!/usr/bin/env bash
# Issue 4: the analyst example (examples/analyst.py: pandas + matplotlib, two CSVs in, a CSV and a
# PNG out) started from the preloaded interpreter, against a cold airlock start, bwrap and plain
# python3, in one run; then the floor: the script's own work in a Python that has already
# imported everything.
#   preloaded  airlock run --start preloaded --input ... --output-dir ... -- python3 /inputs/analyst.py
#   cold       the same with --start cold
#   bwrap      bwrap (namespaces, /usr and /etc read-only, the inputs read-only, an output
#              directory, a fresh /tmp as HOME) -- /usr/bin/python3 /inputs/analyst.py
#   direct     env -i (the sandbox's environment, fresh HOME) /usr/bin/python3 analyst.py
# The four are interleaved round by round by build/bench/startup_bench with PAUSE_MS after each
# run (so the pool has refilled its preloaded sandbox before the next preloaded run).
# The floor: one python3 process imports numpy, pandas, matplotlib and matplotlib.pyplot (what
# the preloaded interpreter imports), then runs analyst.py's code N+1 times with fresh globals;
# the first run is the floor (it pays for lazy imports and matplotlib's first figure): one sample
# per process, so it is taken in FLOOR_PROCESSES fresh processes (default 5), and the preloaded
# median is divided by their median (issue 14's goal: at most 1.25x).
#   bench/fast_analyst.sh [N] [PAUSE_MS]      (defaults 20 and 300; AIRLOCK_BUILD=dir of the build)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AIRLOCK_BUILD:-${repo}/build}"
airlock="${build}/airlock"
examples="${repo}/examples"
runs="${1:-20}"
pause_ms="${2:-300}"

if [[ ! -x "${build}/bench/startup_bench" ]]; then
  cmake --build "$build" --target startup_bench >/dev/null
fi

tmp="$(mktemp -d /var/tmp/airlock-fast-analyst-XXXXXX)"
chmod 0711 "$tmp"  # the sandbox's user passes through the state directory inside
state="${tmp}/state"
mkdir -m 0711 "$state"
mkdir "${tmp}/out-preloaded" "${tmp}/out-cold" "${tmp}/out-bwrap" "${tmp}/out-direct" "${tmp}/out-floor"
pool_pid=""
cleanup() {
  if [[ -n "$pool_pid" ]]; then
    kill -TERM "$pool_pid" 2>/dev/null || true
    wait "$pool_pid" 2>/dev/null || true  # the pool removes its unused sandboxes before it exits
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$airlock" pool --state-dir "$state" --warm 0 --preloaded 2 2>"${tmp}/pool.log" &
pool_pid=$!
for ((i = 0; i < 600; i++)); do
  grep -q '^airlock pool: serving' "${tmp}/pool.log" 2>/dev/null && break
  kill -0 "$pool_pid" 2>/dev/null || { cat "${tmp}/pool.log" >&2; exit 1; }
  sleep 0.1
done
grep -q '^airlock pool: serving' "${tmp}/pool.log" || { echo "the pool did not start" >&2; exit 1; }

inputs=(--input "${examples}/analyst.py" --input "${examples}/sales_jan.csv" --input "${examples}/sales_feb.csv")
preloaded_cmd=("$airlock" run --state-dir "$state" --start preloaded "${inputs[@]}" --output-dir "${tmp}/out-preloaded"
  -- python3 /inputs/analyst.py)
cold_cmd=("$airlock" run --state-dir "$state" --start cold "${inputs[@]}" --output-dir "${tmp}/out-cold"
  -- python3 /inputs/analyst.py)
bwrap_cmd=(bwrap --unshare-all --die-with-parent --ro-bind /usr /usr
  --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --ro-bind /etc /etc
  --proc /proc --dev /dev --tmpfs /tmp --ro-bind "$examples" /inputs --bind "${tmp}/out-bwrap" /output
  --clearenv --setenv PATH /usr/local/bin:/usr/bin:/bin --setenv HOME /tmp --setenv TMPDIR /tmp
  --setenv LANG C.UTF-8 --setenv MPLBACKEND Agg -- /usr/bin/python3 /inputs/analyst.py)
# A fresh HOME per run, as in the sandbox (matplotlib starts without a cache each time).
direct_cmd=(sh -c 'h="$(mktemp -d)"; env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$h" TMPDIR=/tmp LANG=C.UTF-8 MPLBACKEND=Agg AIRLOCK_INPUTS="$1" AIRLOCK_OUTPUT="$2" /usr/bin/python3 "$1/analyst.py"; s=$?; rm -rf "$h"; exit $s'
  sh "$examples" "${tmp}/out-direct")

# Sanity: every case produces the outputs, and the preloaded case really starts preloaded.
start="$("$airlock" run --json --state-dir "$state" --start preloaded "${inputs[@]}" \
  --output-dir "${tmp}/out-preloaded" -- python3 /inputs/analyst.py 2>/dev/null |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["sandbox"]["start"])')"
if [[ "$start" != "preloaded" ]]; then
  echo "--start preloaded gave a '${start}' start" >&2
  exit 1
fi
"${cold_cmd[@]}" >/dev/null 2>&1
"${bwrap_cmd[@]}" >/dev/null
"${direct_cmd[@]}" >/dev/null
for d in preloaded cold bwrap direct; do
  if [[ ! -s "${tmp}/out-${d}/chart.png" || ! -s "${tmp}/out-${d}/summary.csv" ]]; then
    echo "the ${d} case produced no outputs" >&2
    exit 1
  fi
done
sleep 1  # the pool refills the sandbox the sanity run took

echo "## Fast start: the analyst example, preloaded vs cold ($(uname -r), $(nproc) CPUs)"
echo
status=0
"${build}/bench/startup_bench" --runs "$runs" --warmup 2 --pause-ms "$pause_ms" --ratio-to cold --ratio-to bwrap \
  --case preloaded "${preloaded_cmd[@]}" \
  --case cold "${cold_cmd[@]}" \
  --case bwrap "${bwrap_cmd[@]}" \
  --case direct "${direct_cmd[@]}" | tee "${tmp}/table.md" || status=$?

echo
echo "### Where the time goes (wall time and the record's timing)"
echo
python3 "${repo}/bench/phases.py" --runs 5 --pause-ms "$pause_ms" \
  --case preloaded "$airlock" run --json --state-dir "$state" --start preloaded "${inputs[@]}" \
      --output-dir "${tmp}/out-preloaded" -- python3 /inputs/analyst.py \
  --case cold "$airlock" run --json --state-dir "$state" --start cold "${inputs[@]}" \
      --output-dir "${tmp}/out-cold" -- python3 /inputs/analyst.py
echo
echo "### The floor: analyst.py's own work in a Python that has imported everything"
echo
# The first run after the imports is the floor; one process gives one sample of it, so
# FLOOR_PROCESSES fresh processes (default 5) each give one, and their median is compared.
floor_processes="${FLOOR_PROCESSES:-5}"
for ((p = 0; p < floor_processes; p++)); do
  home="$(mktemp -d "${tmp}/home-XXXXXX")"
  env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" TMPDIR=/tmp LANG=C.UTF-8 MPLBACKEND=Agg \
    AIRLOCK_INPUTS="$examples" AIRLOCK_OUTPUT="${tmp}/out-floor" /usr/bin/python3 - "${examples}/analyst.py" "$runs" \
    >>"${tmp}/floor.txt" <<'EOF'
import sys, time
t0 = time.perf_counter()
import numpy, pandas, matplotlib, matplotlib.pyplot as plt  # what the preloaded interpreter imports
imports_ms = (time.perf_counter() - t0) * 1000
path, n = sys.argv[1], int(sys.argv[2])
code = compile(open(path).read(), path, "exec")
times = []
for i in range(n + 1):
    g = {"__name__": "__main__", "__file__": path}
    t = time.perf_counter()
    import contextlib, io
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, g)
    times.append((time.perf_counter() - t) * 1000)
    plt.close("all")
print(imports_ms, *times)
EOF
done
python3 - "${tmp}/floor.txt" "${tmp}/table.md" <<'EOF'
import statistics, sys
rows = [[float(x) for x in line.split()] for line in open(sys.argv[1]) if line.strip()]
firsts = sorted(r[1] for r in rows)
later = sorted(x for r in rows for x in r[2:])
floor = statistics.median(firsts)
def pct(v, p):
    return v[min(len(v) - 1, max(0, int(p / 100 * len(v) + 0.999999) - 1))]
print(f"imports (numpy, pandas, matplotlib, pyplot), median of {len(rows)} processes: "
      f"{statistics.median(r[0] for r in rows):.1f} ms\n")
print("| run of analyst.py's code | median ms | min ms | max ms |")
print("|---|---:|---:|---:|")
print(f"| first, after the imports ({len(firsts)} processes): the floor | {floor:.1f} | {firsts[0]:.1f} | {firsts[-1]:.1f} |")
print(f"| later ({len(later)} runs) | {pct(later, 50):.1f} | {later[0]:.1f} | {later[-1]:.1f} |")
preloaded = [line.split("|")[2] for line in open(sys.argv[2]) if line.startswith("| preloaded |")]
if preloaded:
    p = float(preloaded[0])
    print(f"\npreloaded median / floor: {p:.1f} / {floor:.1f} = **{p / floor:.2f}x** (issue 14's goal: at most 1.25x)")
EOF
exit "$status"
