# case: priv-perf-event-open
# why: perf_event_open is denied (a kernel attack surface even for self-monitoring)
# expect-outcome: succeeded
# expect-stdout: BLOCKED perf_event_open EPERM
import ctypes, errno, os, struct
libc = ctypes.CDLL(None, use_errno=True)
# struct perf_event_attr: type=PERF_TYPE_SOFTWARE(1), size=128, config=CPU_CLOCK(0), flags: disabled|exclude_kernel|exclude_hv
flags = (1 << 0) | (1 << 5) | (1 << 6)
attr = ctypes.create_string_buffer(struct.pack("IIQQQQQ", 1, 128, 0, 0, 0, 0, flags) + b"\0" * 80)
r = libc.syscall(298, attr, 0, -1, -1, 0)
err = ctypes.get_errno()
if r >= 0:
    os.close(r)
    print("ESCAPED perf_event_open fd", r)
else:
    print("BLOCKED perf_event_open", errno.errorcode.get(err, err))
