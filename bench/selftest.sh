#!/usr/bin/env bash
# How long `airlock selftest` (local: a serve of its own, 8 items, 7 jobs)
# takes against a baseline measured in the same run: 7 cold `airlock run`
# jobs of python3 -c pass in a row, the jobs it runs without the service,
# the HTTP round trips, the checks and the serve's start and stop
# (docs/performance.md). Interleaved, R rounds (default 5), medians.
#   bench/selftest.sh [R]     (root)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
airlock="${repo}/build/airlock"
rounds="${1:-5}"
work="$(mktemp -d /tmp/airlock-selftest-bench-XXXXXX)"
chmod 0711 "$work"
cleanup() {
  "$airlock" sweep --state-dir "${work}/state" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

ms() { echo $(( $(date +%s%N) / 1000000 )); }
selftest=() baseline=()
for _ in $(seq "$rounds"); do
  t0=$(ms)
  "$airlock" selftest --json "${work}/report.json" >/dev/null
  selftest+=($(( $(ms) - t0 )))
  t0=$(ms)
  for _ in 1 2 3 4 5 6 7; do
    "$airlock" run --quiet --state-dir "${work}/state" -- python3 -c pass >/dev/null
  done
  baseline+=($(( $(ms) - t0 )))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
s=$(median "${selftest[@]}")
b=$(median "${baseline[@]}")
echo "selftest: median ${s} ms over ${rounds} rounds (${selftest[*]})"
echo "baseline (7 cold airlock run python3 -c pass): median ${b} ms (${baseline[*]})"
awk -v s="$s" -v b="$b" 'BEGIN {printf "ratio selftest / baseline: %.2f\n", s / b}'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
