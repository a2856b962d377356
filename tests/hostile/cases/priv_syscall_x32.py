# case: priv-syscall-x32
# why: the x32 ABI (nr | 0x40000000) must not bypass the filter: killed
# expect-outcome: failed
# expect-signal: 31
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
print("calling x32 getpid", flush=True)
r = libc.syscall(0x40000000 | 39)
err = ctypes.get_errno()
print("NOT-KILLED x32 syscall returned", r, errno.errorcode.get(err, err) if r < 0 else "")
