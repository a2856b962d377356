# case: climb-proc-root
# why: /proc/<pid>/root and /proc/self/cwd magic links must lead only into the sandbox's own tree
# expect-outcome: succeeded
# expect-stdout: BLOCKED via /proc
import errno, os
paths = ["/proc/self/root/work", "/proc/1/root/work", "/proc/self/cwd/../../../../work",
         "/proc/self/root/../../../home", "/proc/1/root/var/lib/dpkg", "/proc/self/root/root/.bash_history"]
res = {}
for p in paths:
    try:
        os.stat(p)
        res[p] = "REACHED"
    except OSError as e:
        res[p] = errno.errorcode.get(e.errno, str(e.errno))
for p, r in res.items():
    print(p, r)
reached = [p for p, r in res.items() if r == "REACHED"]
if reached:
    print("ESCAPED reached", reached)
elif all(r == "ENOENT" or (r == "EACCES" and p.startswith("/proc/1/")) for p, r in res.items()):
    # our own root has no host tree (ENOENT); another process's root is not even ours to open (EACCES)
    print("BLOCKED via /proc:", " ".join(sorted(set(res.values()))))
else:
    print("BLOCKED other via /proc", res)
