# case: priv-ptrace
# why: ptrace is denied by the syscall filter, even on the job's own child
# expect-outcome: succeeded
# expect-stdout: BLOCKED ptrace EPERM
# compute-why: the probe forks the process it would trace: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import ctypes, errno, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = os.fork()
if pid == 0:
    time.sleep(30)
    os._exit(0)
r = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
err = ctypes.get_errno()
if r == 0:
    os.waitpid(pid, os.WUNTRACED)
    libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print("ESCAPED ptrace attached" if r == 0 else "BLOCKED ptrace " + errno.errorcode.get(err, str(err)))
