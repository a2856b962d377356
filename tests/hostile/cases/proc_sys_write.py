# case: proc-sys-write
# why: kernel tunables under /proc/sys must not be writable (hostname, core_pattern, drop_caches)
# expect-outcome: succeeded
# expect-stdout: BLOCKED /proc/sys read-only
import errno, os
def en(e): return errno.errorcode.get(e, str(e))
opened = []
for path in ("/proc/sys/kernel/hostname", "/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches",
             "/proc/sys/kernel/modprobe", "/proc/sys/net/ipv4/ip_forward"):
    try:
        fd = os.open(path, os.O_WRONLY)  # nothing is written: opening proves access
        os.close(fd)
        opened.append(path)
        print(path, "OPENED for writing")
    except OSError as e:
        print(path, en(e.errno))
print("ESCAPED writable: " + ", ".join(opened) if opened else "BLOCKED /proc/sys read-only")
