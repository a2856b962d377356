#!/usr/bin/env bash
# What a session saves an agent, measured in one run (docs/performance.md):
# N short Python turns in one session against the same N turns as separate
# jobs (each a new sandbox and interpreter), through airlock serve on
# loopback, with the turn's answer awaited (wait_s). Also the time to open a
# session, and to open one from a snapshot of a 100 MB workspace.
#   bench/session_turns.sh [N]     (default 30 turns)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
airlock="${repo}/build/airlock"
turns="${1:-30}"
port=18479

work="$(mktemp -d /var/tmp/airlock-session-bench-XXXXXX)"
serve=""
cleanup() {
  [[ -n "$serve" ]] && kill "$serve" 2>/dev/null && wait "$serve" 2>/dev/null || true
  "$airlock" sweep --state-dir "${work}/state" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

key="$("$airlock" keys create --tenant bench --data-dir "${work}/data" 2>/dev/null)"
"$airlock" serve --listen "127.0.0.1:${port}" --data-dir "${work}/data" --state-dir "${work}/state" \
  >"${work}/serve.log" 2>&1 &
serve=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:${port}/healthz" >/dev/null && break; sleep 0.1; done

api() { curl -sf -H "Authorization: Bearer ${key}" "$@"; }
now_ms() { date +%s%3N; }
field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

t0=$(now_ms)
sid="$(api -XPOST "http://127.0.0.1:${port}/v1/sessions" -d '{}' | field '["id"]')"
t1=$(now_ms)
open_ms=$((t1 - t0))

# Each turn is timed by curl (request sent to answer read); the answers are
# checked afterwards, so the client's own work is not in the times.
timed_turns() {  # URL BODY NAME
  for i in $(seq "$turns"); do
    api -o "${work}/$3.$i" -w '%{time_total}\n' -XPOST "$1" -d "$2" >>"${work}/$3.times"
  done
  python3 - "${work}" "$3" "$turns" <<'PY'
import json, sys
work, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(1, n + 1):
    d = json.load(open("%s/%s.%d" % (work, name, i)))
    ok = d.get("status") == "ok" if name == "session" else d.get("outcome") == "succeeded"
    if not ok:
        sys.exit("%s turn %d did not succeed: %s" % (name, i, json.dumps(d)[:300]))
PY
  python3 -c "import sys; print(round(sum(float(l) for l in open(sys.argv[1])) * 1000, 1))" "${work}/$3.times"
}

session_ms=$(timed_turns "http://127.0.0.1:${port}/v1/sessions/${sid}/execs" \
  '{"code": "import json\ntotal = sum(range(1000))\ntotal", "wait_s": 60}' session)
job_ms=$(timed_turns "http://127.0.0.1:${port}/v1/jobs" \
  '{"code": "import json\ntotal = sum(range(1000))\nprint(total)", "wait_s": 60}' job)

# A 100 MB workspace (100 files of 1 MB), snapshotted, then opened in a new session.
api -XPOST "http://127.0.0.1:${port}/v1/sessions/${sid}/execs" \
  -d '{"code": "import os\nos.makedirs(\"big\", exist_ok=True)\nfor i in range(100):\n    open(\"big/%d.bin\" % i, \"wb\").write(os.urandom(1 << 20))", "wait_s": 60}' >/dev/null
digest="$(api -XPOST "http://127.0.0.1:${port}/v1/sessions/${sid}/snapshots" | field '["digest"]')"
api -XDELETE "http://127.0.0.1:${port}/v1/sessions/${sid}" >/dev/null
t0=$(now_ms)
restored="$(api -XPOST "http://127.0.0.1:${port}/v1/sessions" -d "{\"snapshot\": \"${digest}\", \"policy\": {\"workspace_mb\": 512}}")"
t1=$(now_ms)
restored_open_ms=$((t1 - t0))
restore_ms="$(echo "$restored" | field '["events"][0]["ms"]')"
sid2="$(echo "$restored" | field '["id"]')"
api -XDELETE "http://127.0.0.1:${port}/v1/sessions/${sid2}" >/dev/null

echo "turns: ${turns}"
echo "session open: ${open_ms} ms"
echo "session turns: ${session_ms} ms ($(python3 -c "print(round(${session_ms}/${turns},1))") ms each)"
echo "job turns:     ${job_ms} ms ($(python3 -c "print(round(${job_ms}/${turns},1))") ms each)"
echo "session / jobs: $(python3 -c "print(round(${session_ms}/${job_ms},4))")"
echo "open from a 100 MB snapshot: ${restored_open_ms} ms (restore itself ${restore_ms} ms; plain open ${open_ms} ms)"
