# case: life-daemon
# why: a setsid + double-fork daemon must die with the job (the runner checks no process of the sandbox's host uid remains)
# expect-outcome: succeeded
# expect-stdout: DAEMON started
# compute-why: there is no daemon to leave behind: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import os, sys, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.close(r)
        os.write(w, str(os.getpid()).encode())
        os.close(w)
        fd = os.open("/dev/null", os.O_RDWR)
        for n in (0, 1, 2):
            os.dup2(fd, n)
        with open("/tmp/daemon.pid", "w") as f:
            f.write(str(os.getpid()))
        time.sleep(300)
        os._exit(0)
    os._exit(0)
os.close(w)
pid = os.read(r, 32).decode()
print("DAEMON started, pid", pid)
