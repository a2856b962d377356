# case: priv-setns
# why: setns is denied
# expect-outcome: succeeded
# expect-stdout: BLOCKED setns EPERM
# compute-why: the probe forks first: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
results = []
for ns in ("net", "mnt", "user", "pid"):
    try:
        fd = os.open("/proc/self/ns/" + ns, os.O_RDONLY)
    except OSError as e:
        results.append((ns, "open " + errno.errorcode.get(e.errno, str(e.errno))))
        continue
    pid = os.fork()
    if pid == 0:
        r = libc.setns(fd, 0)
        os._exit(0 if r == 0 else 100 + ctypes.get_errno())
    _, st = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(st)
    os.close(fd)
    results.append((ns, "OK" if code == 0 else errno.errorcode.get(code - 100, str(code))))
print(results)
if any(r == "OK" for _, r in results):
    print("ESCAPED setns", results)
elif all(r == "EPERM" for _, r in results):
    print("BLOCKED setns EPERM")
else:
    print("BLOCKED other", results)
