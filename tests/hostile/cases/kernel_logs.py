# case: kernel-logs
# why: the kernel log (dmesg, /dev/kmsg, syslog(2)) is host information
# expect-outcome: succeeded
# expect-stdout: kmsg ENOENT
# expect-stdout: syslog EPERM
# expect-stdout: BLOCKED kernel log
import ctypes, errno, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
escaped = []
try:
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    try:
        data = os.read(fd, 512)
        escaped.append("read /dev/kmsg: %r" % data[:60])
        print("kmsg READ")
    except OSError as e:
        print("kmsg opened, read", en(e.errno))
        escaped.append("opened /dev/kmsg")
except OSError as e:
    print("kmsg", en(e.errno))
buf = ctypes.create_string_buffer(4096)
r = libc.syscall(103, 3, buf, 4096)  # syslog(SYSLOG_ACTION_READ_ALL)
if r < 0:
    print("syslog", en(ctypes.get_errno()))
else:
    print("syslog READ", r)
    escaped.append("syslog read %d bytes" % r)
try:
    out = subprocess.run(["dmesg"], capture_output=True, timeout=10)
    print("dmesg exit", out.returncode, out.stderr[:100])
    if out.returncode == 0 and out.stdout:
        escaped.append("dmesg printed %d bytes" % len(out.stdout))
except OSError as e:
    print("dmesg", en(e.errno))
print("ESCAPED " + "; ".join(escaped) if escaped else "BLOCKED kernel log unreadable")
