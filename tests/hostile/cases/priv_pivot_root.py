# case: priv-pivot-root
# why: pivot_root is denied
# expect-outcome: succeeded
# expect-stdout: BLOCKED pivot_root EPERM
# compute-why: the probe makes a directory in /workspace: read-only under compute (Landlock, EACCES)
# compute-expect-outcome: failed
# compute-expect-stderr: Permission denied: 'newroot'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs("newroot/old", exist_ok=True)
r = libc.syscall(155, b"newroot", b"newroot/old")
err = ctypes.get_errno()
print("ESCAPED pivot_root worked" if r == 0 else "BLOCKED pivot_root " + errno.errorcode.get(err, str(err)))
