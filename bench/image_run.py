#!/usr/bin/python3
"""Costs of running on a stored image, in one run (docs/performance.md):

 1. cold start of `airlock run -- /bin/true` on an image against `host`,
    interleaved, medians and their ratio; the record's prepare phase for each
    (the per-sandbox erofs mount, its subtrees and the image check are in it);
 2. page cache per sandbox: how much `Cached` grows when a second sandbox on
    the same image reads the files a first one (still running) has read;
 3. the PSS of a warm pool of the image (sandbox inits) against host's.

    sudo bench/image_run.py [--image minimal] [--image-dir build/images] [--runs 30]
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AIRLOCK = os.path.join(REPO, "build", "airlock")

READER = r"""
import os, time
n = 0
for root, dirs, files in os.walk("/usr/lib/python3.11"):
    for f in files:
        p = os.path.join(root, f)
        try:
            with open(p, "rb") as fh:
                while True:
                    b = fh.read(1 << 20)
                    if not b: break
                    n += len(b)
        except OSError: pass
open("/workspace/ready", "w").write(str(n))
for _ in range(6000):
    if os.path.exists("/workspace/done"): break
    time.sleep(0.01)
"""


def run(state, image, image_dir, argv, json_out=True):
    cmd = [AIRLOCK, "run", "--state-dir", state, "--image", image, "--image-dir", image_dir]
    if json_out: cmd.append("--json")
    return subprocess.run(cmd + ["--"] + argv, capture_output=True, text=True)


def cached_kb():
    for line in open("/proc/meminfo"):
        if line.startswith("Cached:"): return int(line.split()[1])


def job_pids(airlock_pid):
    """Processes of the job's host uid whose sandbox was started by `airlock_pid`."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try:
            st = open("/proc/%s/status" % p).read()
        except OSError: continue
        fields = dict(l.split(":", 1) for l in st.splitlines() if ":" in l)
        if int(fields["Uid"].split()[0]) >= 3000000: out.append(int(p))
    return out


def start_cold(args, state):
    walls = {"host": [], args.image: []}
    prepare = {"host": [], args.image: []}
    for i in range(args.runs):
        for image in ("host", args.image) if i % 2 == 0 else (args.image, "host"):
            t = time.monotonic()
            r = run(state, image, args.image_dir, ["/bin/true"])
            walls[image].append((time.monotonic() - t) * 1000)
            rec = json.loads(r.stdout)
            assert rec["outcome"] == "succeeded", rec["reason"]
            prepare[image].append(rec["timing"].get("prepare_ms", 0))
    h, m = statistics.median(walls["host"]), statistics.median(walls[args.image])
    ph, pm = statistics.median(prepare["host"]), statistics.median(prepare[args.image])
    print("cold start /bin/true (%d runs each, interleaved): host %.1f ms, %s %.1f ms, ratio %.2f"
          % (args.runs, h, args.image, m, m / h))
    print("  prepare phase: host %.2f ms, %s %.2f ms (difference: mount + subtrees + check %.2f ms)"
          % (ph, args.image, pm, pm - ph))


def page_cache(args, state, image):
    """Cached growth for sandbox A reading /usr/lib/python3.11, then B doing the same while A lives."""
    growth, procs, seen = [], [], set()
    try:
        for _ in range(2):
            before = cached_kb()
            p = subprocess.Popen([AIRLOCK, "run", "--state-dir", state, "--image", image, "--image-dir",
                                  args.image_dir, "--timeout", "120", "--", "python3", "-c", READER],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(p)
            read = None
            for _ in range(6000):
                for pid in job_pids(p.pid):
                    if pid in seen: continue  # sandbox A's
                    try:
                        read = open("/proc/%d/root/workspace/ready" % pid).read()
                        ready_pid = pid
                    except OSError: pass
                if read: break
                time.sleep(0.01)
            growth.append((cached_kb() - before, int(read or 0) // 1024))
            p.ready_pid = ready_pid
            seen.update(job_pids(p.pid))
    finally:
        for p in procs:
            try: open("/proc/%d/root/workspace/done" % p.ready_pid, "w").close()
            except Exception: pass
            p.wait()
    print("page cache on %s: sandbox A read %d KiB, Cached +%d KiB; sandbox B (A still running) read %d KiB, "
          "Cached +%d KiB" % (image, growth[0][1], growth[0][0], growth[1][1], growth[1][0]))


def pool_pss(args, state, image, warm=4):
    cmd = [AIRLOCK, "pool", "--state-dir", state, "--warm", str(warm), "--preloaded", "0"]
    if image != "host": cmd += ["--image", image, "--image-dir", args.image_dir]
    before = cached_kb()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(3000):
            if os.path.exists(os.path.join(state, "pool.sock")) and len(job_pids(p.pid)) >= warm * (2 if image != "host" else 1):
                break
            time.sleep(0.01)
        time.sleep(1)
        pss = 0
        for pid in job_pids(p.pid):
            try:
                for line in open("/proc/%d/smaps_rollup" % pid):
                    if line.startswith("Pss:"): pss += int(line.split()[1])
            except OSError: pass
        print("warm pool of %s (%d sandboxes, host class too): sandbox PSS %d KiB total; Cached +%d KiB"
              % (image, warm, pss, cached_kb() - before))
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", default="minimal")
    ap.add_argument("--image-dir", default=os.environ.get("AIRLOCK_TEST_IMAGE_DIR", os.path.join(REPO, "build/images")))
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    state = tempfile.mkdtemp(prefix="airlock-image-bench-", dir="/var/tmp")
    os.chmod(state, 0o711)
    try:
        run(state, args.image, args.image_dir, ["/bin/true"])  # the first run checks the image's sha256
        start_cold(args, state)
        page_cache(args, state, "host")
        page_cache(args, state, args.image)
        pool_pss(args, state, "host")
        pool_pss(args, state, args.image)
    finally:
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
