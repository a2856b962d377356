# The selftest's file probe: files outside /inputs must not be there or must
# not open. TARGETS (set by the selftest) adds the service's own paths.
import os

def probe(name, path):
    try:
        if os.path.isdir(path):
            os.listdir(path)
            print("PROBE", name, "OPEN", "listed", path, flush=True)
        else:
            with open(path, "rb") as f:
                f.read(16)
            print("PROBE", name, "OPEN", "read", path, flush=True)
    except OSError as e:
        print("PROBE", name, "BLOCKED", path, os.strerror(e.errno) if e.errno else str(e), flush=True)

for name, path in [("shadow", "/etc/shadow"), ("root_home", "/root"), ("host_proc_root", "/proc/1/root/etc/shadow"),
                   ("ssh_keys", "/root/.ssh"), ("host_sys", "/sys/fs/cgroup")] + TARGETS:
    probe(name, path)
# Only what was admitted is in /inputs.
listed = sorted(os.listdir("/inputs"))
extra = [n for n in listed if n not in ADMITTED]
print("PROBE inputs", "OPEN" if extra else "BLOCKED", "only admitted files in /inputs:", listed, flush=True)
# /inputs is read-only.
try:
    open("/inputs/written-by-job", "w").close()
    print("PROBE inputs_readonly OPEN wrote /inputs/written-by-job", flush=True)
except OSError as e:
    print("PROBE inputs_readonly BLOCKED", os.strerror(e.errno), flush=True)
