# case: profile-clone3-threads
# why: clone3 answers ENOSYS in every profile (its flags live in memory, out of the filter's reach; ENOSYS, not EPERM, makes glibc fall back to clone); threads still start, under compute too
# expect-outcome: succeeded
# expect-stdout: clone3 ENOSYS
# expect-stdout: threads 8 OK
import ctypes, errno, threading
libc = ctypes.CDLL(None, use_errno=True)
args = (ctypes.c_uint64 * 11)()  # struct clone_args, all zero: a fork if it got through
args[4] = 17  # exit_signal SIGCHLD
r = libc.syscall(435, ctypes.byref(args), ctypes.sizeof(args))
if r == 0:
    libc._exit(0)
print("clone3", "ESCAPED pid %d" % r if r > 0 else errno.errorcode.get(ctypes.get_errno()))
done = []
ts = [threading.Thread(target=lambda: done.append(1)) for _ in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print("threads", len(done), "OK")
