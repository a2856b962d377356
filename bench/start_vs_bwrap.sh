#!/usr/bin/env bash
# Issue 14: `airlock run -- /bin/true` cold and warm against bwrap's /bin/true, interleaved in one
# run, with the machine's state and CPU per job. Starts `airlock pool --warm W --preloaded 0` on a
# private state directory and runs build/bench/startup_bench, rounds interleaved:
#   bwrap  the bwrap command line of bench/startup.sh (the baseline)
#   cold   airlock run --state-dir S --start cold -- /bin/true
#   warm   airlock run --state-dir S --start warm -- /bin/true   (fails rather than start cold)
# Paced: PAUSE_MS after every run, so the pool has refilled before each warm run (warm is really
# warm), and the refill a warm run causes happens inside that run's CPU window. CPU per job:
# "tree" is the command with its reaped descendants plus the pool process (its refills and the
# inits it reaps); "machine" is every CPU's non-idle time in the run's window (includes kernel
# threads, and whatever else runs on the machine: see the load average printed).
#   bench/start_vs_bwrap.sh [N] [PAUSE_MS]     (defaults 200 and 30; AIRLOCK_BUILD=dir of the build
#                                               whose airlock is measured; STARTUP_BENCH=the timer,
#                                               default that build's bench/startup_bench;
#                                               AIRLOCK_BASE_BUILD=a second build, e.g. of main: its
#                                               cold and warm cases join the same interleaved run,
#                                               with a pool and state directory of their own;
#                                               AIRLOCK_BASE_POOL_ARGS=more options for its pool,
#                                               e.g. --refill-hold-ms 0)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AIRLOCK_BUILD:-${repo}/build}"
airlock="${build}/airlock"
runs="${1:-200}"
pause_ms="${2:-30}"
pool_size=4

timer="${STARTUP_BENCH:-${build}/bench/startup_bench}"
if [[ ! -x "$timer" ]]; then
  cmake --build "$build" --target startup_bench >/dev/null
fi

pool_pids=()
states=()
cleanup() {
  for pid in "${pool_pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true  # the pool removes its unused sandboxes before it exits
  done
  for dir in "${states[@]}"; do rm -rf "$dir"; done
}
trap cleanup EXIT

# start_pool BINARY [POOL_ARGS...]: a pool on a fresh state directory; sets $state and $pool_pid.
start_pool() {
  state="$(mktemp -d /var/tmp/airlock-start-vs-bwrap-XXXXXX)"
  chmod 0711 "$state"  # the sandbox's user passes through it
  states+=("$state")
  "$1" pool --state-dir "$state" --warm "$pool_size" --preloaded 0 "${@:2}" 2>"${state}/pool.log" &
  pool_pid=$!
  pool_pids+=("$pool_pid")
  for ((i = 0; i < 300; i++)); do
    grep -q '^airlock pool: serving' "${state}/pool.log" 2>/dev/null && break
    kill -0 "$pool_pid" 2>/dev/null || { cat "${state}/pool.log" >&2; exit 1; }
    sleep 0.1
  done
  grep -q '^airlock pool: serving' "${state}/pool.log" || { echo "the pool did not start" >&2; exit 1; }
  local start
  start="$("$1" run --state-dir "$state" --start warm --json -- /bin/true |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["sandbox"]["start"])')"
  if [[ "$start" != "warm" ]]; then
    echo "--start warm gave a '${start}' start" >&2
    exit 1
  fi
}

base_cases=()
charge=()
if [[ -n "${AIRLOCK_BASE_BUILD:-}" ]]; then
  base_airlock="${AIRLOCK_BASE_BUILD}/airlock"
  # shellcheck disable=SC2086  # AIRLOCK_BASE_POOL_ARGS is a list of words
  start_pool "$base_airlock" ${AIRLOCK_BASE_POOL_ARGS:-}
  charge+=(--charge-pid "$pool_pid")
  base_cases=(
    --case "cold (base)" "$base_airlock" run --state-dir "$state" --start cold -- /bin/true
    --case "warm (base)" "$base_airlock" run --state-dir "$state" --start warm -- /bin/true
  )
fi
start_pool "$airlock"
charge+=(--charge-pid "$pool_pid")

cgroup2_opts="$(awk '$3 == "cgroup2" {print $2 " (" $4 ")"}' /proc/mounts | paste -sd ' ')"
v1_count="$(awk '$3 == "cgroup"' /proc/mounts | wc -l)"
favor="off"
grep -q 'cgroup2 .*favordynmods' /proc/mounts && favor="on"

echo "## Start time against bwrap: /bin/true ($(uname -r), $(nproc) CPUs)"
echo
echo "Machine: ${v1_count} cgroup v1 hierarchies, cgroup2 at ${cgroup2_opts:-none}; favordynmods ${favor}."
echo "Load average before: $(cut -d' ' -f1-3 /proc/loadavg). Pool: ${pool_size} warm sandboxes; ${pause_ms} ms after every run."
if [[ -n "${AIRLOCK_BASE_BUILD:-}" ]]; then echo "(base): ${AIRLOCK_BASE_BUILD}/airlock, with a pool of its own."; fi
echo "CPU per job, tree: the command with its reaped descendants, plus every pool process, in the run's window."
echo
status=0
"$timer" --runs "$runs" --pause-ms "$pause_ms" --ratio-to bwrap \
  "${charge[@]}" \
  --case "bwrap" bwrap --unshare-all --die-with-parent --ro-bind /usr /usr \
      --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin \
      --proc /proc --dev /dev --tmpfs /tmp -- /bin/true \
  --case "cold" "$airlock" run --state-dir "$state" --start cold -- /bin/true \
  --case "warm" "$airlock" run --state-dir "$state" --start warm -- /bin/true \
  "${base_cases[@]}" || status=$?
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "### Where the time goes (wall time and the record's timing, ${pause_ms} ms pause after each run)"
echo
python3 "${repo}/bench/phases.py" --runs 30 --pause-ms "$pause_ms" \
  --case cold "$airlock" run --json --state-dir "$state" --start cold -- /bin/true \
  --case warm "$airlock" run --json --state-dir "$state" --start warm -- /bin/true
exit "$status"
