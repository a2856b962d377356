# case: priv-open-by-handle-at
# why: open_by_handle_at ("shocker") reaches files by handle, around the mount tree
# expect-outcome: succeeded
# expect-stdout: BLOCKED open_by_handle_at EPERM
import ctypes, errno, os, struct
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
AT_FDCWD = -100
handle = ctypes.create_string_buffer(struct.pack("Ii", 128, 0) + b"\0" * 128)
mount_id = ctypes.c_int()
r = libc.syscall(303, AT_FDCWD, b"/usr/bin/env", handle, ctypes.byref(mount_id), 0)  # name_to_handle_at
print("name_to_handle_at", "OK" if r == 0 else en(ctypes.get_errno()))
if r != 0:  # still try with a forged handle (ext4-style inode 2)
    handle = ctypes.create_string_buffer(struct.pack("IiII", 8, 1, 2, 0) + b"\0" * 120)
mfd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
r = libc.syscall(304, mfd, handle, os.O_RDONLY)
err = ctypes.get_errno()
if r >= 0:
    os.close(r)
    print("ESCAPED open_by_handle_at opened a file")
else:
    print("BLOCKED open_by_handle_at", en(err))
