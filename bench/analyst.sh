#!/usr/bin/env bash
# The analyst example (examples/analyst.py) run directly with /usr/bin/python3 (the
# interpreter the host image gives the sandbox), in the sandbox's minimal environment with a
# fresh HOME, and through `airlock run`; 10 runs each (or N), alternating.
# Prints medians and their ratio.
#   bench/analyst.sh [N]
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
airlock="${repo}/build/airlock"
examples="${repo}/examples"
runs="${1:-10}"

tmp="$(mktemp -d)"
# airlock keeps a record per job in its state directory; use a private one, removed at the end.
AIRLOCK_STATE_DIR="$(mktemp -d /var/tmp/airlock-bench-XXXXXX)"
chmod 0711 "$AIRLOCK_STATE_DIR"  # the sandbox's user passes through it
export AIRLOCK_STATE_DIR
trap 'rm -rf "$tmp" "$AIRLOCK_STATE_DIR"' EXIT

now_ns() { date +%s%N; }

median() {  # numbers on stdin, one a line -> median
  sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

direct=()
sandboxed=()
for ((i = 0; i < runs; i++)); do
  out="${tmp}/direct-${i}"
  home="${tmp}/home-${i}"
  mkdir -p "$out" "$home"
  # The environment the sandbox gives (fresh HOME, so matplotlib starts without a cache).
  t0="$(now_ns)"
  env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" TMPDIR=/tmp LANG=C.UTF-8 MPLBACKEND=Agg \
    AIRLOCK_INPUTS="$examples" AIRLOCK_OUTPUT="$out" /usr/bin/python3 "${examples}/analyst.py" >/dev/null
  t1="$(now_ns)"
  direct+=("$(((t1 - t0) / 1000))")

  out="${tmp}/airlock-${i}"
  t0="$(now_ns)"
  "$airlock" run --record "${tmp}/record-${i}.json" \
    --input "${examples}/analyst.py" \
    --input "${examples}/sales_jan.csv" \
    --input "${examples}/sales_feb.csv" \
    --output-dir "$out" -- python3 /inputs/analyst.py >/dev/null 2>"${tmp}/airlock-${i}.err"
  t1="$(now_ns)"
  sandboxed+=("$(((t1 - t0) / 1000))")
  if [[ ! -s "${out}/chart.png" || ! -s "${out}/summary.csv" ]]; then
    echo "airlock run ${i} produced no outputs:" >&2
    cat "${tmp}/airlock-${i}.err" >&2
    exit 1
  fi
done

d="$(printf '%s\n' "${direct[@]}" | median)"
s="$(printf '%s\n' "${sandboxed[@]}" | median)"
echo "## Analyst example ($(uname -r), $(nproc) CPUs), ${runs} runs each, alternating"
echo
echo "| case | median ms | ratio |"
echo "|---|---:|---:|"
awk -v d="$d" -v s="$s" 'BEGIN {
  printf "| python3 analyst.py (direct) | %.1f | 1.00x |\n", d / 1000
  printf "| airlock run -- python3 /inputs/analyst.py | %.1f | %.2fx |\n", s / 1000, s / d
}'
