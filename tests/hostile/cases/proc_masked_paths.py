# case: proc-masked-paths
# why: /proc files that describe the host kernel (keys, timers, memory maps, scheduler, acpi) are masked: absent, empty or unreadable
# expect-outcome: succeeded
# expect-stdout: BLOCKED masked
import errno, os
paths = ["/proc/keys", "/proc/key-users", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
         "/proc/latency_stats", "/proc/kcore", "/proc/kallsyms", "/proc/kmsg", "/proc/vmallocinfo", "/proc/iomem",
         "/proc/ioports", "/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup", "/proc/config.gz",
         "/proc/acpi", "/proc/scsi", "/proc/asound", "/proc/driver"]
shown = []
for p in paths:
    try:
        if os.path.isdir(p):
            entries = os.listdir(p)
            res = "empty dir" if not entries else "DIR %s" % entries[:5]
        else:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
            try:
                data = os.read(fd, 256)
            finally:
                os.close(fd)
            res = "empty" if not data else "READ %r" % data[:60]
    except OSError as e:
        res = errno.errorcode.get(e.errno, str(e.errno))
    print(p, res)
    if res.startswith(("READ", "DIR")):
        shown.append(p)
print("ESCAPED readable: " + ", ".join(shown) if shown else "BLOCKED masked")
