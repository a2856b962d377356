#!/usr/bin/env bash
# Issue 14: sessions with the data stack ready. In one run, two `airlock serve`
# one after the other on loopback, the same steps on each:
#   cold       today's sessions (no preloaded pool: the keeper starts python3,
#              the kernel is an exec of python3)
#   preloaded  `--preloaded 1`: sessions fork from the sessions' preloaded
#              interpreter (pandas, numpy, matplotlib with Agg imported)
# (with 2 spare sessions opened ahead, src/sessions/session_spares.cc).
# Steps: the PSS of the service's whole process tree (the service and every
# descendant: pool, preloaded interpreters, sandboxes; smaps_rollup) once idle;
# N sessions opened one after another (each POST /v1/sessions timed by curl,
# request to answer, PACE_S seconds apart, default 1.5); in each a first call
# `import pandas, matplotlib.pyplot` (timed too); the tree's PSS again with the N
# sessions open and their imports done. Per session = (after - before) / N.
# Prints a Markdown table. Cleans up: sessions closed, services stopped by pid
# (SIGTERM), their state swept, the temp dir removed.
#   bench/session_preload.sh [N]    (default 12; AIRLOCK_BUILD=dir of the build)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AIRLOCK_BUILD:-${repo}/build}"
airlock="${build}/airlock"
n="${1:-12}"
port=18493
pace="${PACE_S:-1.5}"

work="$(mktemp -d /var/tmp/airlock-session-preload-XXXXXX)"
chmod 0711 "$work"
serve=""
stop_serve() {
  if [[ -n "$serve" ]]; then
    kill -TERM "$serve" 2>/dev/null || true
    wait "$serve" 2>/dev/null || true
    serve=""
  fi
}
cleanup() {
  stop_serve
  for mode in cold preloaded; do
    [[ -d "${work}/${mode}/state" ]] && "$airlock" sweep --state-dir "${work}/${mode}/state" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

cat >"${work}/tree_pss.py" <<'PY'
import os, sys
def ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
        return int(s[s.rfind(")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return None
def pss(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
root = int(sys.argv[1])
kids = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        p = ppid(int(d))
        if p is not None:
            kids.setdefault(p, []).append(int(d))
todo, total, count = [root], 0, 0
while todo:
    p = todo.pop()
    total += pss(p)
    count += 1
    todo.extend(kids.get(p, []))
print(total, count)  # kB, processes
PY

cat >"${work}/stats.py" <<'PY'
import statistics, sys
xs = sorted(float(l) * 1000 for l in open(sys.argv[1]) if l.strip())
def q(p):
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]
print("%.1f %.1f" % (statistics.median(xs), q(0.9)))
PY

api() { curl -sf -H "Authorization: Bearer ${key}" "$@"; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }

run_mode() {  # MODE EXTRA_SERVE_ARGS...
  local mode="$1"; shift
  local dir="${work}/${mode}"
  mkdir -p "$dir"
  cat >"${dir}/config.toml" <<TOML
max_sessions = $((n + 4))
max_sessions_per_tenant = $((n + 4))
TOML
  key="$("$airlock" keys create --tenant bench --data-dir "${dir}/data" 2>/dev/null)"
  "$airlock" serve --config "${dir}/config.toml" --listen "127.0.0.1:${port}" --data-dir "${dir}/data" \
    --state-dir "${dir}/state" "$@" >"${dir}/serve.log" 2>&1 &
  serve=$!
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:${port}/healthz" >/dev/null && break; sleep 0.1; done
  # One session opened and closed first, so both modes start warm (page cache, pool filled).
  local sid
  sid="$(api -XPOST "http://127.0.0.1:${port}/v1/sessions" -d '{}' | field '["id"]')"
  api -XDELETE "http://127.0.0.1:${port}/v1/sessions/${sid}" >/dev/null
  sleep 2
  read -r before procs_before < <(python3 "${work}/tree_pss.py" "$serve")
  local ids=() start=""
  for i in $(seq "$n"); do
    api -o "${dir}/open.$i" -w '%{time_total}\n' -XPOST "http://127.0.0.1:${port}/v1/sessions" -d '{}' >>"${dir}/open.times"
    ids+=("$(field '["id"]' <"${dir}/open.$i")")
    start="$(field '.get("start", "?")' <"${dir}/open.$i")"
    sleep "$pace"  # sessions open at an agent's pace, not back to back (the spares refill meanwhile)
  done
  for i in $(seq "$n"); do
    api -o "${dir}/call.$i" -w '%{time_total}\n' -XPOST "http://127.0.0.1:${port}/v1/sessions/${ids[$((i - 1))]}/execs" \
      -d '{"code": "import pandas as pd, matplotlib.pyplot as plt\n1", "wait_s": 120}' \
      >>"${dir}/call.times"
    [[ "$(field '["status"]' <"${dir}/call.$i")" == ok ]] || { echo "a first call failed: $(cat "${dir}/call.$i")" >&2; exit 1; }
  done
  sleep 1
  read -r after procs_after < <(python3 "${work}/tree_pss.py" "$serve")
  for id in "${ids[@]}"; do api -XDELETE "http://127.0.0.1:${port}/v1/sessions/${id}" >/dev/null; done
  stop_serve
  read -r open_p50 open_p90 < <(python3 "${work}/stats.py" "${dir}/open.times")
  read -r call_p50 call_p90 < <(python3 "${work}/stats.py" "${dir}/call.times")
  per=$(python3 -c "print(round(($after - $before) / 1024 / $n, 1))")
  printf '| %s | %s | %s / %s | %s / %s | %.0f -> %.0f MB (%s -> %s processes) | %s MB |\n' "$mode" "$start" \
    "$open_p50" "$open_p90" "$call_p50" "$call_p90" "$(python3 -c "print($before/1024)")" \
    "$(python3 -c "print($after/1024)")" "$procs_before" "$procs_after" "$per" | tee -a "${work}/rows"
  eval "${mode}_open=${open_p50}; ${mode}_per=${per}; ${mode}_call=${call_p50}"
}

echo "sessions: ${n}; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| sessions | start | open p50 / p90 (ms) | first call p50 / p90 (ms, import pandas+pyplot) | service tree PSS before -> after | PSS per session |"
echo "|---|---|---|---|---|---|"
run_mode cold
run_mode preloaded --preloaded 1
echo
echo "preloaded / cold: open $(python3 -c "print(round(${preloaded_open}/${cold_open},3))"), first call $(python3 -c "print(round(${preloaded_call}/${cold_call},3))"), PSS per session $(python3 -c "print(round(${preloaded_per}/${cold_per},3))")"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
