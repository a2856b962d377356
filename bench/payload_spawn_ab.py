#!/usr/bin/python3
"""Two airlock binaries against each other, interleaved: cold and warm `airlock run -- /bin/true`,
and preloaded `airlock run -- python3 -c "print(1)"`.

    sudo bench/payload_spawn_ab.py OLD_BINARY NEW_BINARY [RUNS] [MODES]

MODES: a comma-separated list of cold, warm, preloaded (default cold,warm). Each binary gets a
pool of its own (3 warm sandboxes, 2 preloaded ones when preloaded is asked for, its own state
directory); every round runs each mode on each binary, the binaries' order alternating, 30 ms
apart (100 ms after a preloaded run: its refill is a clone of the interpreter). Prints the
median wall time (the client's) and the median of the record's start_ms + run_ms (where the
payload's start and its life are) for each. Used for the payload's spawn (docs/performance.md).
"""
import subprocess, time, statistics, os, sys, tempfile, shutil, json
if len(sys.argv) < 3:
    sys.exit(__doc__)
bins = {"old": sys.argv[1], "new": sys.argv[2]}
N = int(sys.argv[3]) if len(sys.argv) > 3 else 40
modes = sys.argv[4].split(",") if len(sys.argv) > 4 else ["cold", "warm"]
commands = {"cold": ["/bin/true"], "warm": ["/bin/true"], "preloaded": ["python3", "-c", "print(1)"]}
if any(m not in commands for m in modes):
    sys.exit("modes: cold, warm, preloaded")
states, pools = {}, []
try:
    for k, b in bins.items():
        d = tempfile.mkdtemp(prefix="airlock-ab-", dir="/var/tmp"); os.chmod(d, 0o711); states[k] = d
        p = subprocess.Popen([b, "pool", "--state-dir", d, "--warm", "3", "--preloaded", "2" if "preloaded" in modes else "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        pools.append(p)
        for line in p.stderr:
            if "serving" in line: break
    time.sleep(1)
    res = {(k, m): [] for k in bins for m in modes}
    ph = {(k, m): [] for k in bins for m in modes}
    for i in range(N):
        order = list(bins) if i % 2 == 0 else list(reversed(list(bins)))
        for k in order:
            for m in modes:
                t = time.perf_counter()
                r = subprocess.run([bins[k], "run", "--json", "--state-dir", states[k], "--start", m, "--"] + commands[m], capture_output=True, text=True)
                res[(k, m)].append((time.perf_counter() - t) * 1000)
                rec = json.loads(r.stdout); assert rec["outcome"] == "succeeded"
                ph[(k, m)].append(rec["timing"].get("start_ms", 0) + rec["timing"].get("run_ms", 0))
                time.sleep(0.1 if m == "preloaded" else 0.03)
    for key in res:
        print("%s %s wall %.2f  start+run %.2f" % (key[0], key[1], statistics.median(res[key]), statistics.median(ph[key])))
finally:
    for p in pools: p.terminate(); p.wait()
    for d in states.values(): shutil.rmtree(d, ignore_errors=True)
