# case: sys-absent
# why: no host /sys in the sandbox
# expect-outcome: succeeded
# expect-stdout: BLOCKED /sys ENOENT
import errno, os
try:
    names = os.listdir("/sys")
    print("ESCAPED /sys exists with", len(names), "entries:", sorted(names)[:10])
except OSError as e:
    print("BLOCKED /sys", errno.errorcode.get(e.errno, e.errno))
