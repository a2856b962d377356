# case: priv-bpf
# why: bpf(2) is denied
# expect-outcome: succeeded
# expect-stdout: BLOCKED bpf EPERM
import ctypes, errno, os, struct
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(struct.pack("IIII", 2, 4, 4, 1) + b"\0" * 112)  # ARRAY map, 1 entry
r = libc.syscall(321, 0, attr, 128)  # BPF_MAP_CREATE
err = ctypes.get_errno()
if r >= 0:
    os.close(r)
    print("ESCAPED bpf map created")
else:
    print("BLOCKED bpf", errno.errorcode.get(err, err))
