# case: sysrq-trigger
# why: /proc/sysrq-trigger can reboot or crash the host
# expect-outcome: succeeded
# expect-stdout: BLOCKED sysrq-trigger
import errno, os
try:
    fd = os.open("/proc/sysrq-trigger", os.O_WRONLY)  # nothing is written
    os.close(fd)
    print("ESCAPED /proc/sysrq-trigger opened for writing")
except OSError as e:
    print("BLOCKED sysrq-trigger", errno.errorcode.get(e.errno, e.errno))
