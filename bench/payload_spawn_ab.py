#!/usr/bin/python3
"""Two airlock binaries against each other, interleaved: cold and warm `airlock run -- /bin/true`.

    sudo bench/payload_spawn_ab.py OLD_BINARY NEW_BINARY [RUNS]

Each binary gets a warm pool of its own (3 sandboxes, its own state directory); every round
runs cold then warm on each binary, the binaries' order alternating, 30 ms apart. Prints the
median wall time (the client's) and the median of the record's start_ms + run_ms (where the
payload's start and its life are) for each. Used for the payload's spawn (docs/performance.md).
"""
import subprocess, time, statistics, os, sys, tempfile, shutil, json
if len(sys.argv) < 3:
    sys.exit(__doc__)
bins = {"old": sys.argv[1], "new": sys.argv[2]}
N = int(sys.argv[3]) if len(sys.argv) > 3 else 40
states, pools = {}, []
try:
    for k, b in bins.items():
        d = tempfile.mkdtemp(prefix="airlock-ab-", dir="/var/tmp"); os.chmod(d, 0o711); states[k] = d
        p = subprocess.Popen([b, "pool", "--state-dir", d, "--warm", "3", "--preloaded", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        pools.append(p)
        for line in p.stderr:
            if "serving" in line: break
    time.sleep(1)
    res = {(k, m): [] for k in bins for m in ("cold", "warm")}
    ph = {(k, m): [] for k in bins for m in ("cold", "warm")}
    for i in range(N):
        order = list(bins) if i % 2 == 0 else list(reversed(list(bins)))
        for k in order:
            for m in ("cold", "warm"):
                t = time.perf_counter()
                r = subprocess.run([bins[k], "run", "--json", "--state-dir", states[k], "--start", m, "--", "/bin/true"], capture_output=True, text=True)
                res[(k, m)].append((time.perf_counter() - t) * 1000)
                rec = json.loads(r.stdout); assert rec["outcome"] == "succeeded"
                ph[(k, m)].append(rec["timing"].get("start_ms", 0) + rec["timing"].get("run_ms", 0))
                time.sleep(0.03)
    for key in res:
        print("%s %s wall %.2f  start+run %.2f" % (key[0], key[1], statistics.median(res[key]), statistics.median(ph[key])))
finally:
    for p in pools: p.terminate(); p.wait()
    for d in states.values(): shutil.rmtree(d, ignore_errors=True)
