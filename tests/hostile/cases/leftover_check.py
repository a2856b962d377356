# case: leftover-check
# why: step two: a later job sees nothing that leftover_write left (/tmp, /dev/shm, /workspace, SysV IPC)
# after: leftover_write.py
# expect-outcome: succeeded
# expect-stdout: BLOCKED nothing left over
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
KEY = 0x41524c4b
found = []
for path in ("/tmp/airlock-hostile-marker", "/dev/shm/airlock-hostile-marker", "/workspace/airlock-hostile-marker"):
    if os.path.exists(path):
        found.append(path)
        try:
            os.unlink(path)
        except OSError:
            pass
IPC_RMID = 0
r = libc.shmget(KEY, 0, 0)
if r >= 0:
    found.append("sysv shm %d" % r)
    libc.shmctl(r, IPC_RMID, None)
r = libc.semget(KEY, 0, 0)
if r >= 0:
    found.append("sysv sem %d" % r)
    libc.semctl(r, 0, IPC_RMID)
r = libc.msgget(KEY, 0)
if r >= 0:
    found.append("sysv msg %d" % r)
    libc.msgctl(r, IPC_RMID, None)
print("ESCAPED found (and removed) " + ", ".join(found) if found else "BLOCKED nothing left over")
