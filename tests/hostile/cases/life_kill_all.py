# case: life-kill-all
# why: kill(-1, SIGKILL) reaches only the job's own processes (the runner's canary on the host survives); the job ends normally
# setup: canary
# expect-outcome: succeeded
# expect-stdout: kill(-1) done
# compute-why: the probe forks before kill(-1): compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import errno, os, signal, time
for _ in range(2):
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
try:
    os.kill(-1, signal.SIGKILL)  # never kills the caller itself
    res = "OK"
except OSError as e:
    res = errno.errorcode.get(e.errno, str(e.errno))
time.sleep(0.2)
left = []
for _ in range(2):
    try:
        left.append(os.waitpid(-1, 0)[1])
    except ChildProcessError:
        break
print("kill(-1) done:", res, "child statuses", left)
