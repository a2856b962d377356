# case: leaked-fds
# why: no descriptor of airlock or the host may be inherited: only 0, 1, 2 (and the scan's own), and fd 3 only as the job's data request channel (AIRLOCK_REQUEST_FD: the write end of a pipe, docs/data-requests.md)
# expect-outcome: succeeded
# expect-stdout: BLOCKED fds=0,1,2 channel=3
import fcntl, os, stat
channel = int(os.environ.get("AIRLOCK_REQUEST_FD", "-1"))
names = sorted(int(n) for n in os.listdir("/proc/self/fd"))
extra = {}
for n in names:
    if n > 2:
        try:
            extra[n] = os.readlink("/proc/self/fd/%d" % n)
        except FileNotFoundError:
            pass  # the descriptor listdir itself used, closed again by now
names = [n for n in names if n <= 2 or n in extra]
if channel in extra:
    mode = os.fstat(channel).st_mode
    flags = fcntl.fcntl(channel, fcntl.F_GETFL)
    if stat.S_ISFIFO(mode) and flags & os.O_ACCMODE == os.O_WRONLY:
        del extra[channel]
        names.remove(channel)
if channel != 3:
    print("WRONG AIRLOCK_REQUEST_FD is", channel)
elif extra:
    print("ESCAPED leaked fds:", extra)
else:
    print("BLOCKED fds=" + ",".join(map(str, names)), "channel=%d" % channel)
