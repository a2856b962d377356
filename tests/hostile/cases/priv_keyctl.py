# case: priv-keyctl
# why: the kernel keyring is not namespaced: keyctl/add_key are denied
# expect-outcome: succeeded
# expect-stdout: BLOCKED keyctl EPERM
# expect-stdout: add_key EPERM
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
r = libc.syscall(250, 0, ctypes.c_long(-3), 0)  # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)
k = en(ctypes.get_errno()) if r < 0 else "OK %d" % r
r2 = libc.syscall(248, b"user", b"airlock-hostile", b"x", 1, ctypes.c_long(-3))  # add_key
a = en(ctypes.get_errno()) if r2 < 0 else "OK %d" % r2
if r2 >= 0:
    libc.syscall(250, 21, r2, ctypes.c_long(-3))  # KEYCTL_UNLINK
print("add_key", a)
print("ESCAPED keyctl " + k if r >= 0 else "BLOCKED keyctl " + k)
