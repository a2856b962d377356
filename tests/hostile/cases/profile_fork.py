# case: profile-fork
# why: compute: no new process by any call (fork, clone without CLONE_THREAD, vfork-style posix_spawn, subprocess, os.system); standard allows them
# expect-outcome: succeeded
# expect-stdout: fork OK
# expect-stdout: raw clone(SIGCHLD) OK
# expect-stdout: posix_spawn OK
# expect-stdout: subprocess OK
# expect-stdout: os.system 0
# compute-why: compute denies fork, vfork and clone without CLONE_THREAD (EPERM); clone3 is ENOSYS so glibc falls back to clone
# compute-expect-outcome: succeeded
# compute-expect-stdout: fork EPERM
# compute-expect-stdout: raw clone(SIGCHLD) EPERM
# compute-expect-stdout: posix_spawn EPERM
# compute-expect-stdout: subprocess EPERM
# compute-expect-stdout: os.system 32512
import ctypes, errno, os, signal, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def name(e): return errno.errorcode.get(e, e)
try:
    pid = os.fork()
    if pid == 0: os._exit(0)
    os.waitpid(pid, 0); print("fork OK")
except OSError as e:
    print("fork", name(e.errno))
pid = libc.syscall(56, signal.SIGCHLD, 0, 0, 0, 0)  # clone, like fork
if pid == 0: os._exit(0)
if pid > 0:
    os.waitpid(pid, 0); print("raw clone(SIGCHLD) OK")
else:
    print("raw clone(SIGCHLD)", name(ctypes.get_errno()))
for label, run in (("posix_spawn", lambda: os.waitpid(os.posix_spawn("/bin/true", ["true"], {}), 0)),
                   ("subprocess", lambda: subprocess.run(["/bin/true"], check=True))):
    try:
        run(); print(label, "OK")
    except OSError as e:
        print(label, name(e.errno))
print("os.system", os.system("true"))  # 32512: the shell could not start (127)
