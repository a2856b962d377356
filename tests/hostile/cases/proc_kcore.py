# case: proc-kcore
# why: /proc/kcore is the kernel's memory
# expect-outcome: succeeded
# expect-stdout: BLOCKED kcore
import errno, os
try:
    fd = os.open("/proc/kcore", os.O_RDONLY)
except OSError as e:
    print("BLOCKED kcore open", errno.errorcode.get(e.errno, e.errno))
else:
    try:
        data = os.read(fd, 64)
        if data:
            print("ESCAPED kcore read %d bytes: %r" % (len(data), data[:8]))
        else:
            print("BLOCKED kcore reads empty")
    except OSError as e:
        print("BLOCKED kcore read", errno.errorcode.get(e.errno, e.errno))
