# case: image-flock
# why: a flock on a file of the shared image would block, or signal to, another job that locks it too: flock is denied (also on the job's own files; fcntl locks stay, see workspace_sqlite_locks)
# expect-outcome: succeeded
# expect-stdout: LOCK_EX /usr/bin/python3: EPERM
# expect-stdout: LOCK_SH /usr/lib/os-release: EPERM
# expect-stdout: LOCK_EX /workspace/own: EPERM
# expect-stdout: BLOCKED flock
# compute-why: the probe creates a file in /workspace: read-only under compute (Landlock, EACCES)
# compute-expect-outcome: failed
# compute-expect-stderr: Permission denied: '/workspace/own'
import errno, fcntl, os, sys
def en(e): return errno.errorcode.get(e, str(e))
open("/workspace/own", "w").close()
res = {}
for path, op in ((os.path.realpath(sys.executable), "LOCK_EX"), ("/usr/bin/python3", "LOCK_EX"),
                 ("/usr/lib/os-release", "LOCK_SH"), ("/workspace/own", "LOCK_EX")):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, getattr(fcntl, op) | fcntl.LOCK_NB)
        res[op + " " + path] = "OK"
    except OSError as e:
        res[op + " " + path] = en(e.errno)
    os.close(fd)
for k, v in res.items():
    print(k + ":", v)
print("BLOCKED flock" if "OK" not in res.values() else "ESCAPED flock on " + str(res))
