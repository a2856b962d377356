# case: priv-seccomp-mode
# why: a seccomp filter is installed (mode 2) on the job's processes and their children
# expect-outcome: succeeded
# expect-stdout: BLOCKED Seccomp=2 child=2
# compute-why: the probe forks a child to read its mode: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import subprocess
with open("/proc/self/status") as f:
    st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
child = subprocess.run(["/bin/sh", "-c", "grep '^Seccomp:' /proc/self/status"], capture_output=True, text=True).stdout.split()
v, c = st.get("Seccomp", "?").strip(), (child[1] if len(child) > 1 else "?")
print("BLOCKED Seccomp=%s child=%s" % (v, c) if v == "2" and c == "2" else "ESCAPED Seccomp=%s child=%s" % (v, c))
