# case: priv-mount
# why: mount (tmpfs, proc, bind of /) is denied by the syscall filter
# expect-outcome: succeeded
# expect-stdout: BLOCKED mount EPERM
# compute-why: the probe makes a mount point in /workspace: read-only under compute (Landlock, EACCES)
# compute-expect-outcome: failed
# compute-expect-stderr: Permission denied: b'/workspace/m'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
target = os.path.abspath("m").encode()  # under the cwd, /workspace
os.makedirs(target, exist_ok=True)
res = []
for src, fstype, flags in ((b"none", b"tmpfs", 0), (b"proc", b"proc", 0), (b"/", None, 4096 | 16384)):
    r = libc.mount(src, target, fstype, flags, None)
    if r == 0:
        libc.umount2(target, 2)
        res.append("OK")
    else:
        res.append(errno.errorcode.get(ctypes.get_errno(), "?"))
print("mount tmpfs/proc/bind:", res)
if "OK" in res:
    print("ESCAPED mount worked")
elif all(r == "EPERM" for r in res):
    print("BLOCKED mount EPERM")
else:
    print("BLOCKED other", res)
