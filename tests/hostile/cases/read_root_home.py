# case: read-root-home
# why: the host's /root must not be listable
# expect-outcome: succeeded
# expect-stdout: BLOCKED ENOENT|BLOCKED EACCES
import errno, os
try:
    names = os.listdir("/root")
    print("ESCAPED listed /root:", sorted(names)[:10])
except OSError as e:
    print("BLOCKED", errno.errorcode.get(e.errno, e.errno), "/root")
