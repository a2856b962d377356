# case: leftover-write
# why: step one of two: leave marker files in /tmp, /dev/shm, /workspace and a SysV shm segment, semaphore set and message queue
# expect-outcome: succeeded
# expect-stdout: LEFT tmp shm workspace sysv-shm sysv-sem sysv-msg
# compute-why: under compute /dev/shm and /workspace cannot be written (Landlock, EACCES)
# compute-expect-outcome: succeeded
# compute-expect-stdout: shm EACCES
# compute-expect-stdout: workspace EACCES
# compute-expect-stdout: LEFT tmp sysv-shm sysv-sem sysv-msg
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
KEY = 0x41524c4b  # 'ARLK'
left = []
for name, path in (("tmp", "/tmp/airlock-hostile-marker"), ("shm", "/dev/shm/airlock-hostile-marker"),
                   ("workspace", "/workspace/airlock-hostile-marker")):
    try:
        with open(path, "w") as f:
            f.write("left by leftover_write\n")
        left.append(name)
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
IPC_CREAT = 0o1000
for name, r in (("sysv-shm", libc.shmget(KEY, 4096, IPC_CREAT | 0o666)),
                ("sysv-sem", libc.semget(KEY, 1, IPC_CREAT | 0o666)),
                ("sysv-msg", libc.msgget(KEY, IPC_CREAT | 0o666))):
    if r >= 0:
        left.append(name)
    else:
        print(name, errno.errorcode.get(ctypes.get_errno(), "?"))
print("LEFT " + " ".join(left))
