#!/usr/bin/python3
"""Where a cold start on an image spends its extra time (docs/performance.md).

Cold `airlock run --start cold -- CMD` on `host` and on each --image, interleaved
round by round (the order rotates every round), in one run; for each, the
median of the wall time and of every phase of the record's `timing`
(prepare, start, run, stop, collect, cleanup), and the difference to host.
Prints /proc/loadavg before and after: on a shared machine only same-run
differences count.

    sudo bench/image_cold_phases.py --image-dir STORE --image minimal [--image NAME]... [--runs 30] [--warm]

With --warm, the same from a warm pool of each image (`--start warm`): the
sandbox and its image mount are made ahead; what remains is in the job's path.

The first run of each image (not counted) checks the file and makes the
machine's shared mount of it (docs/image-mounts.md); the bench releases the
shared mounts when it starts and when it ends (`airlock image release`).
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AIRLOCK = os.path.join(REPO, "build", "airlock")


def one(state, image, image_dir, argv, start="cold"):
    cmd = [AIRLOCK, "run", "--json", "--start", start, "--state-dir", state, "--image", image,
           "--image-dir", image_dir, "--"] + argv
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = (time.monotonic() - t) * 1000
    rec = json.loads(r.stdout)
    assert rec["outcome"] == "succeeded", rec.get("reason")
    phases = dict(rec["timing"])
    phases["wall"] = wall
    return phases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", action="append", required=True)
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--command", default="/bin/true", help="shell-split command to run")
    ap.add_argument("--warm", action="store_true",
                    help="start warm from a pool of 2 per image (host and each --image), pausing 0.3 s "
                         "after every run so the pool is full again")
    ap.add_argument("--no-prefetch-too", action="store_true",
                    help="with --warm: each image also from a second pool whose refills do not read the "
                         "loader's files ahead (airlock pool --prefetch-image no), as IMAGE/noprefetch")
    args = ap.parse_args()
    argv = args.command.split()
    images = ["host"] + args.image
    state = tempfile.mkdtemp(prefix="airlock-phases-", dir="/var/tmp")
    os.chmod(state, 0o711)
    pools = []
    state_b = None
    subprocess.run([AIRLOCK, "image", "release"], check=True, capture_output=True)
    try:
        for image in args.image:
            one(state, image, args.image_dir, argv)  # the first run of an image hashes it
        if args.warm:
            dirs = [(state, "yes")]
            if args.no_prefetch_too:
                state_b = tempfile.mkdtemp(prefix="airlock-phases-", dir="/var/tmp")
                os.chmod(state_b, 0o711)
                dirs.append((state_b, "no"))
                images += [i + "/noprefetch" for i in args.image]
            for d, prefetch in dirs:
                cmd = [AIRLOCK, "pool", "--state-dir", d, "--warm", "2", "--preloaded", "0",
                       "--image-dir", args.image_dir, "--prefetch-image", prefetch]
                for image in args.image: cmd += ["--image", image]
                pool = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                pools.append(pool)
                for line in pool.stderr:
                    if "airlock pool: serving" in line: break
            time.sleep(1)
        start = "warm" if args.warm else "cold"
        print("load before:", open("/proc/loadavg").read().strip())
        res = {i: [] for i in images}
        for r in range(args.runs):
            k = r % len(images)
            for image in images[k:] + images[:k]:
                name, _, variant = image.partition("/")
                res[image].append(one(state_b if variant else state, name, args.image_dir, argv, start))
                if args.warm: time.sleep(0.3)
        print("load after: ", open("/proc/loadavg").read().strip())
        keys = ["wall"] + sorted(k for k in res["host"][0] if k != "wall")
        images = [i for i in images if res[i]]
        med = {i: {k: statistics.median(x[k] for x in res[i]) for k in keys} for i in images}
        print("%-12s" % ("%s, %d runs" % (" ".join(argv), args.runs)) +
              "".join("%22s" % i for i in images) + "   (%s start)" % start)
        for k in keys:
            line = "%-12s" % k + "%22.2f" % med["host"][k]
            for i in images[1:]:
                line += "%15.2f %+6.2f" % (med[i][k], med[i][k] - med["host"][k])
            print(line)
        for i in images[1:]:
            print("ratio %s / host (wall): %.3f" % (i, med[i]["wall"] / med["host"]["wall"]))
    finally:
        for pool in pools:
            pool.terminate()  # by its pid: the pool removes its unused sandboxes
            pool.wait()
        shutil.rmtree(state, ignore_errors=True)
        if state_b: shutil.rmtree(state_b, ignore_errors=True)
        subprocess.run([AIRLOCK, "image", "release"], capture_output=True)


if __name__ == "__main__":
    main()
