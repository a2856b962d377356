#!/usr/bin/env bash
# Issue 4: a /bin/true job through the CLI, from the warm pool against a cold start, in one run.
# Starts `airlock pool --warm W --preloaded 0` on a private state directory, then runs
# build/bench/startup_bench with the cases interleaved round by round:
#   cold   airlock run --state-dir S --start cold -- /bin/true
#   warm   airlock run --state-dir S --start warm -- /bin/true   (fails rather than start cold)
#   bwrap  the bwrap command line of bench/startup.sh, for scale
# Table 1 sleeps PAUSE_MS after every run, so the pool has refilled the sandbox the previous
# warm run took before the next one takes (a refill takes a few ms): warm is really warm.
# Table 2 runs the same cases back to back (no pause): the pool refills while the next runs go.
#   bench/fast_start.sh [N] [PAUSE_MS]        (defaults 200 and 20; AIRLOCK_BUILD=dir of the build)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AIRLOCK_BUILD:-${repo}/build}"
airlock="${build}/airlock"
runs="${1:-200}"
pause_ms="${2:-20}"
pool_size=4

if [[ ! -x "${build}/bench/startup_bench" ]]; then
  cmake --build "$build" --target startup_bench >/dev/null
fi

state="$(mktemp -d /var/tmp/airlock-fast-start-XXXXXX)"
chmod 0711 "$state"  # the sandbox's user passes through it
pool_pid=""
cleanup() {
  if [[ -n "$pool_pid" ]]; then
    kill -TERM "$pool_pid" 2>/dev/null || true
    wait "$pool_pid" 2>/dev/null || true  # the pool removes its unused sandboxes before it exits
  fi
  rm -rf "$state"
}
trap cleanup EXIT

"$airlock" pool --state-dir "$state" --warm "$pool_size" --preloaded 0 2>"${state}/pool.log" &
pool_pid=$!
for ((i = 0; i < 300; i++)); do
  grep -q '^airlock pool: serving' "${state}/pool.log" 2>/dev/null && break
  kill -0 "$pool_pid" 2>/dev/null || { cat "${state}/pool.log" >&2; exit 1; }
  sleep 0.1
done
grep -q '^airlock pool: serving' "${state}/pool.log" || { echo "the pool did not start" >&2; exit 1; }

cases=(
  --case "cold" "$airlock" run --state-dir "$state" --start cold -- /bin/true
  --case "warm" "$airlock" run --state-dir "$state" --start warm -- /bin/true
  --case "bwrap" bwrap --unshare-all --die-with-parent --ro-bind /usr /usr
      --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin
      --proc /proc --dev /dev --tmpfs /tmp -- /bin/true
)

# Sanity: the warm case really starts warm (the record says so).
start="$("$airlock" run --state-dir "$state" --start warm --json -- /bin/true |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["sandbox"]["start"])')"
if [[ "$start" != "warm" ]]; then
  echo "--start warm gave a '${start}' start" >&2
  exit 1
fi

status=0
echo "## Fast start, CLI: /bin/true warm vs cold ($(uname -r), $(nproc) CPUs, pool of ${pool_size} warm sandboxes)"
echo
echo "### Paced: ${pause_ms} ms after every run (the pool is full before each warm run)"
echo
"${build}/bench/startup_bench" --runs "$runs" --pause-ms "$pause_ms" --ratio-to cold "${cases[@]}" || status=$?
echo
echo "### Back to back: no pause (the pool refills while the next runs go)"
echo
"${build}/bench/startup_bench" --runs "$runs" --ratio-to cold "${cases[@]}" || status=$?
echo
echo "### Where the time goes (wall time and the record's timing, ${pause_ms} ms pause after each run)"
echo
python3 "${repo}/bench/phases.py" --runs 50 --pause-ms "$pause_ms" \
  --case cold "$airlock" run --json --state-dir "$state" --start cold -- /bin/true \
  --case warm "$airlock" run --json --state-dir "$state" --start warm -- /bin/true
exit "$status"
