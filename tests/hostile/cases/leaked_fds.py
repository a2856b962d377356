# case: leaked-fds
# why: no descriptor of airlock or the host may be inherited: only 0, 1, 2 (and the scan's own)
# expect-outcome: succeeded
# expect-stdout: BLOCKED fds=0,1,2
import os
names = sorted(int(n) for n in os.listdir("/proc/self/fd"))
extra = {}
for n in names:
    if n > 2:
        try:
            extra[n] = os.readlink("/proc/self/fd/%d" % n)
        except FileNotFoundError:
            pass  # the descriptor listdir itself used, closed again by now
names = [n for n in names if n <= 2 or n in extra]
if extra:
    print("ESCAPED leaked fds:", extra)
else:
    print("BLOCKED fds=" + ",".join(map(str, names)))
