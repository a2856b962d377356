# case: priv-io-uring
# why: io_uring is enabled on this host (io_uring_disabled=0); the filter must deny io_uring_setup
# expect-outcome: succeeded
# expect-stdout: BLOCKED io_uring_setup EPERM
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
r = libc.syscall(425, 8, params)
err = ctypes.get_errno()
if r >= 0:
    os.close(r)
    print("ESCAPED io_uring_setup fd", r)
else:
    print("BLOCKED io_uring_setup", errno.errorcode.get(err, err))
