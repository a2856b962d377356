#!/usr/bin/env bash
# Issue 4: memory of the warm pool, measured as PSS (proportional set size: each shared page
# divided among the processes that map it) from /proc/PID/smaps_rollup.
#  1. Marginal PSS per warm sandbox (exec class) and per preloaded sandbox: `airlock pool` is
#     started at sizes 0, N and 2N of one class (the other class 0), and once full the PSS of
#     every process of the pool is summed: the pool process, the preloaded interpreter
#     (`airlock zygote`, started only when the preloaded class is not empty) and every sandbox's
#     init (children of the pool or of the zygote, running as host uids >= 3000000).
#     Marginal = (sum at 2N - sum at N) / N; for the exec class also (sum at N - sum at 0) / N.
#     The sandboxes' cgroup memory charge (v1 memory.usage_in_bytes or v2 memory.current, which
#     also counts kernel memory such as page tables and tmpfs pages) is shown beside it.
#  2. Per preloaded job process: with a pool of N preloaded sandboxes, K jobs
#     `python3 -c "import time; time.sleep(S)"` are started with --start preloaded and held
#     running; once the pool has refilled, each job's sandbox (its init and the payload, the
#     init's fork that runs the job) is read: PSS, USS (Private_Clean + Private_Dirty),
#     Private_Dirty, RSS; the job's `airlock run` process is shown apart. The marginal total is
#     (every pool process + the jobs' processes, with the K jobs) minus (the pool alone, full,
#     just before), divided by K, in PSS and in USS (PSS also moves when processes outside the
#     pool start or stop mapping the same libraries, e.g. another Python).
# Prints Markdown tables. Cleans up: the jobs end by themselves, the pools are stopped by pid
# (SIGTERM; each removes its sandboxes before it exits) and the state directories removed.
#   bench/pss.sh [N] [K]          (defaults 4 and 4; AIRLOCK_BUILD=dir of the build)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AIRLOCK_BUILD:-${repo}/build}"
airlock="${build}/airlock"
n="${1:-4}"
k="${2:-4}"
hold_s=20

tmp="$(mktemp -d /var/tmp/airlock-pss-XXXXXX)"
chmod 0711 "$tmp"
pool_pid=""
job_pids=()
stop_pool() {
  if [[ -n "$pool_pid" ]]; then
    kill -TERM "$pool_pid" 2>/dev/null || true
    wait "$pool_pid" 2>/dev/null || true  # the pool removes its unused sandboxes before it exits
    pool_pid=""
  fi
}
cleanup() {
  for p in "${job_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${job_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  stop_pool
  rm -rf "$tmp"
}
trap cleanup EXIT

# The measuring helper: prints JSON with the PSS of the tree under the pool and of given pids.
cat >"${tmp}/measure.py" <<'EOF'
import json, os, sys

def fields(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2] == "kB":
                    out[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        return None
    return out

def status(pid):
    ppid = uid = None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("PPid:"):
                    ppid = int(line.split()[1])
                elif line.startswith("Uid:"):
                    uid = int(line.split()[1])
    except OSError:
        pass
    return ppid, uid

def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            ppid, _ = status(int(d))
            if ppid is not None:
                kids.setdefault(ppid, []).append(int(d))
    return kids

def tree(root, kids):
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out

def argv(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace").split("\0")
    except OSError:
        return []

def cgroup_charge(pid):
    """Bytes charged to the memory cgroup of `pid` (v1 memory controller, else v2)."""
    try:
        lines = open(f"/proc/{pid}/cgroup").read().splitlines()
    except OSError:
        return None
    v1 = v2 = None
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        if "memory" in ctrls.split(","):
            v1 = path
        elif ctrls == "":
            v2 = path
    for f in ([f"/sys/fs/cgroup/memory{v1}/memory.usage_in_bytes"] if v1 else []) + \
             ([f"/sys/fs/cgroup/unified{v2}/memory.current", f"/sys/fs/cgroup{v2}/memory.current"] if v2 else []):
        try:
            return int(open(f).read())
        except (OSError, ValueError):
            continue
    return None

def measure(pool, extra):
    kids = children_map()
    procs = tree(pool, kids) + [p for x in extra for p in tree(x, kids)]
    total = {"Pss": 0, "Rss": 0, "Private_Dirty": 0, "Private_Clean": 0}
    sandboxes, jobs = [], []
    zygote = None
    for p in procs:
        f = fields(p)
        if f is None:
            continue
        for key in total:
            total[key] += f.get(key, 0)
        ppid, uid = status(p)
        if uid is not None and uid >= 3000000 and status(ppid)[1] is not None and status(ppid)[1] < 3000000:
            sandboxes.append(p)  # a sandbox's init: the first host-uid process of its tree
        if ppid == pool and uid == 0 and argv(p)[1:2] == ["zygote"]:
            zygote = p
    charges = [c for c in (cgroup_charge(s) for s in sandboxes) if c is not None]
    # Sandboxes with a running job: their init has a child (the payload).
    running = []
    for s in sandboxes:
        if kids.get(s):
            members = tree(s, kids)
            per = {"Pss": 0, "Rss": 0, "Private_Dirty": 0, "Private_Clean": 0}
            payload = {"Pss": 0, "Rss": 0, "Private_Dirty": 0, "Private_Clean": 0}
            for m in members:
                f = fields(m) or {}
                for key in per:
                    per[key] += f.get(key, 0)
                    if m != s:
                        payload[key] += f.get(key, 0)
            running.append({"init": s, "processes": len(members), "all": per, "payload": payload,
                            "cgroup_bytes": cgroup_charge(s)})
    jobs = []
    for x in extra:
        f = fields(x) or {}
        jobs.append({"pid": x, "Pss": f.get("Pss", 0), "Rss": f.get("Rss", 0)})
    return {"total": total, "processes": len(procs), "sandboxes": len(sandboxes), "zygote": zygote,
            "zygote_pss": (fields(zygote) or {}).get("Pss") if zygote else None,
            "cgroup_bytes": sum(charges), "running": running, "supervisors": jobs}

pool = int(sys.argv[1])
extra = [int(x) for x in sys.argv[2:]]
print(json.dumps(measure(pool, extra)))
EOF

sandbox_count() {  # sandboxes (first host-uid process of a tree) under the pool
  python3 "${tmp}/measure.py" "$pool_pid" | python3 -c 'import json, sys; print(json.load(sys.stdin)["sandboxes"])'
}

pools_started=0
start_pool() {  # start_pool WARM PRELOADED [STDLIB]: starts it, waits until full and quiet
  pools_started=$((pools_started + 1))
  local state="${tmp}/state-${pools_started}"
  mkdir -m 0711 "$state"
  "$airlock" pool --state-dir "$state" --warm "$1" --preloaded "$2" --preloaded-stdlib "${3:-0}" 2>"${state}.log" &
  pool_pid=$!
  for ((i = 0; i < 600; i++)); do
    grep -q '^airlock pool: serving' "${state}.log" 2>/dev/null && break
    kill -0 "$pool_pid" 2>/dev/null || { cat "${state}.log" >&2; exit 1; }
    sleep 0.1
  done
  grep -q '^airlock pool: serving' "${state}.log" || { echo "the pool did not start" >&2; exit 1; }
  local want=$(($1 + $2 + ${3:-0}))
  for ((i = 0; i < 100; i++)); do
    [[ "$(sandbox_count)" -ge "$want" ]] && break
    sleep 0.1
  done
  sleep 1  # let the refill thread and the zygote settle
  pool_state="$state"
}

measure_pool() {  # measure_pool WARM PRELOADED STDLIB -> JSON line in $tmp/sizes.jsonl
  start_pool "$1" "$2" "$3"
  python3 "${tmp}/measure.py" "$pool_pid" |
    python3 -c 'import json, sys; j = json.load(sys.stdin); j["warm"], j["preloaded"], j["stdlib"] = map(int, sys.argv[1:4]); print(json.dumps(j))' "$1" "$2" "$3" \
    >>"${tmp}/sizes.jsonl"
  stop_pool
}

measure_pool 0 0 0
measure_pool "$n" 0 0
measure_pool $((2 * n)) 0 0
measure_pool 0 "$n" 0
measure_pool 0 $((2 * n)) 0
measure_pool 0 0 "$n"
measure_pool 0 0 $((2 * n))

# Preloaded jobs held running (the data stack's interpreter: no standard-library class).
start_pool 0 "$n" 0
python3 "${tmp}/measure.py" "$pool_pid" >"${tmp}/before.json"
for ((j = 0; j < k; j++)); do
  "$airlock" run --state-dir "$pool_state" --start preloaded --json -- \
    python3 -c "import time; time.sleep(${hold_s})" >"${tmp}/job-${j}.json" 2>/dev/null &
  job_pids+=($!)
  sleep 0.5  # one at a time, so each takes a ready sandbox and the pool refills behind it
done
for ((i = 0; i < 100; i++)); do
  [[ "$(sandbox_count)" -ge $((n + k)) ]] && break
  sleep 0.1
done
sleep 1
python3 "${tmp}/measure.py" "$pool_pid" "${job_pids[@]}" >"${tmp}/during.json"
for p in "${job_pids[@]}"; do wait "$p" || { echo "a held job failed" >&2; exit 1; }; done
job_pids=()
for ((j = 0; j < k; j++)); do
  start="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sandbox"]["start"])' "${tmp}/job-${j}.json")"
  [[ "$start" == "preloaded" ]] || { echo "held job ${j} started ${start}, not preloaded" >&2; exit 1; }
done
stop_pool

python3 - "$tmp" "$n" "$k" <<'EOF'
import json, sys
tmp, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [json.loads(l) for l in open(f"{tmp}/sizes.jsonl")]
def row(w, p, s=0):
    return next(r for r in rows if r["warm"] == w and r["preloaded"] == p and r["stdlib"] == s)
mb = lambda kb: kb / 1024
print(f"## Warm pool memory (PSS from /proc/PID/smaps_rollup), N = {n}, K = {k}\n")
print("### The pool at each size (sum over the pool process, the zygote and every sandbox init)\n")
print("| warm | preloaded (data) | preloaded (stdlib) | processes | sandboxes | PSS MB | of it the zygote MB | USS MB | RSS MB | sandboxes' cgroup charge MB |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    t = r["total"]
    z = f'{mb(r["zygote_pss"]):.1f}' if r["zygote_pss"] else "-"
    print(f'| {r["warm"]} | {r["preloaded"]} | {r["stdlib"]} | {r["processes"]} | {r["sandboxes"]} | {mb(t["Pss"]):.1f} | {z} | '
          f'{mb(t["Private_Dirty"] + t["Private_Clean"]):.1f} | {mb(t["Rss"]):.1f} | {r["cgroup_bytes"] / 2**20:.1f} |')
print("\n### Marginal memory per pooled sandbox\n")
print("| class | sizes compared | PSS MB per sandbox | cgroup charge MB per sandbox |")
print("|---|---|---:|---:|")
def marg(a, b, count):
    return (mb(b["total"]["Pss"] - a["total"]["Pss"]) / count, (b["cgroup_bytes"] - a["cgroup_bytes"]) / 2**20 / count)
for label, a, b in [("warm (exec)", row(0, 0), row(n, 0)), ("warm (exec)", row(n, 0), row(2 * n, 0)),
                    ("preloaded (data)", row(0, n), row(0, 2 * n)),
                    ("preloaded (stdlib)", row(0, 0, n), row(0, 0, 2 * n)),
                    ("preloaded (stdlib), with its interpreter", row(0, 0), row(0, 0, n))]:
    p, c = marg(a, b, n)
    count = lambda r: r["warm"] + r["preloaded"] + r["stdlib"]
    print(f'| {label} | {count(a)} -> {count(b)} | {p:.2f} | {c:.2f} |')

before = json.load(open(f"{tmp}/before.json"))
during = json.load(open(f"{tmp}/during.json"))
print(f"\n### Preloaded job processes: {k} jobs `python3 -c \"import time; time.sleep(...)\"` held running\n")
print("| job | processes | PSS MB | USS MB | Private_Dirty MB | RSS MB | payload PSS MB | payload Private_Dirty MB | cgroup charge MB |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for i, r in enumerate(during["running"]):
    a, p = r["all"], r["payload"]
    cg = f'{r["cgroup_bytes"] / 2**20:.1f}' if r["cgroup_bytes"] is not None else "-"
    print(f'| {i + 1} | {r["processes"]} | {mb(a["Pss"]):.1f} | {mb(a["Private_Dirty"] + a["Private_Clean"]):.1f} | '
          f'{mb(a["Private_Dirty"]):.1f} | {mb(a["Rss"]):.1f} | {mb(p["Pss"]):.1f} | {mb(p["Private_Dirty"]):.1f} | {cg} |')
sup = during["supervisors"]
if sup:
    print(f'\nEach job\'s `airlock run` process (host side): PSS {mb(sum(s["Pss"] for s in sup)) / len(sup):.1f} MB '
          f'on average, RSS {mb(sum(s["Rss"] for s in sup)) / len(sup):.1f} MB.')
dp = mb(during["total"]["Pss"] - before["total"]["Pss"]) / k
print(f'\nMarginal total per held preloaded job (pool + jobs incl. their `airlock run`, {during["sandboxes"]} '
      f'sandboxes vs {before["sandboxes"]} before): {mb(during["total"]["Pss"]):.1f} MB - '
      f'{mb(before["total"]["Pss"]):.1f} MB = {dp * k:.1f} MB, **{dp:.2f} MB per job**.')
uss = lambda j: j["total"]["Private_Dirty"] + j["total"]["Private_Clean"]
du = mb(uss(during) - uss(before)) / k
print(f'The same in USS (private pages only; PSS moves when processes outside the pool map the same '
      f'libraries): {mb(uss(during)):.1f} MB - {mb(uss(before)):.1f} MB, **{du:.2f} MB per job**.')
EOF
