# case: priv-unshare-userns
# why: new namespaces (user first: it grants capabilities inside) are denied, by unshare and by clone flags
# expect-outcome: succeeded
# expect-stdout: unshare(CLONE_NEWUSER) EPERM
# expect-stdout: clone(CLONE_NEWUSER) EPERM
# expect-stdout: BLOCKED new namespaces
# compute-why: the probe forks first: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x00020000, 0x40000000, 17
escaped = []
for name, flags in (("CLONE_NEWUSER", CLONE_NEWUSER), ("CLONE_NEWNS", CLONE_NEWNS),
                    ("CLONE_NEWUSER|CLONE_NEWNET", CLONE_NEWUSER | CLONE_NEWNET)):
    pid = os.fork()  # unshare in a child so the probe's own state never changes
    if pid == 0:
        r = libc.unshare(flags)
        os._exit(0 if r == 0 else 100 + ctypes.get_errno())
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    res = "OK" if code == 0 else en(code - 100)
    print("unshare(%s)" % name, res)
    if res == "OK":
        escaped.append("unshare " + name)
# raw clone(2) with a namespace flag: the child (if any) exits at once
r = libc.syscall(56, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
if r == 0:
    os._exit(0)
if r > 0:
    os.waitpid(r, 0)
    escaped.append("clone CLONE_NEWUSER")
    print("clone(CLONE_NEWUSER) OK")
else:
    print("clone(CLONE_NEWUSER)", en(ctypes.get_errno()))
print("ESCAPED " + ", ".join(escaped) if escaped else "BLOCKED new namespaces")
