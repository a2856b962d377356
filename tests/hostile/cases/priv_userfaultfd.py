# case: priv-userfaultfd
# why: userfaultfd is denied (used to win kernel races)
# expect-outcome: succeeded
# expect-stdout: BLOCKED userfaultfd EPERM
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(323, 0o2000000 | 1)  # O_CLOEXEC | UFFD_USER_MODE_ONLY
err = ctypes.get_errno()
if r >= 0:
    os.close(r)
    print("ESCAPED userfaultfd fd", r)
else:
    print("BLOCKED userfaultfd", errno.errorcode.get(err, err))
