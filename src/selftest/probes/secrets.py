# The selftest's credentials probe: nothing that looks like a credential in
# the environment or the files a job can read. The selftest puts a canary
# (CANARY_PREFIX + 32 hex) into the service's environment and data
# directory; the probe never knows the canary itself, only its prefix.
import os
import re

canary = re.compile(re.escape(CANARY_PREFIX) + "[0-9a-f]{32}")
key_like = re.compile(r"alk_[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----")
names = re.compile(r"(SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|API_KEY|AWS_|AIRLOCK_|GITHUB_|SSH_AUTH)", re.I)

# The data request channel's variables (docs/data-requests.md) name a descriptor and limits: numbers only.
channel = {"AIRLOCK_REQUEST_FD", "AIRLOCK_REQUEST_LIMIT", "AIRLOCK_REQUEST_BYTES"}
found = [k for k, v in os.environ.items()
         if (names.search(k) and not (k in channel and v.isdigit())) or canary.search(v) or key_like.search(v)]
print("PROBE environment", "FOUND" if found else "CLEAN", ",".join(sorted(found)) or "%d variables" % len(os.environ), flush=True)

hits, scanned = [], 0
for top in ["/etc", "/root", "/home", "/run", "/var", "/tmp", "/workspace", "/inputs", "/proc/self/environ", "/proc/1/environ"]:
    for dirpath, dirnames, filenames in ([(os.path.dirname(top), [], [os.path.basename(top)])] if not os.path.isdir(top) else os.walk(top)):
        dirnames[:] = [d for d in dirnames if not d.startswith("proc")][:200]
        for fn in filenames[:500]:
            p = os.path.join(dirpath, fn)
            if scanned > 3000:
                break
            try:
                if not os.path.isfile(p) or os.path.islink(p):
                    continue
                with open(p, "rb") as f:
                    data = f.read(256 << 10).decode("latin-1")
                scanned += 1
                if canary.search(data) or key_like.search(data):
                    hits.append(p)
            except OSError:
                pass
print("PROBE files", "FOUND" if hits else "CLEAN", ",".join(hits[:10]) or "%d readable files scanned" % scanned, flush=True)
