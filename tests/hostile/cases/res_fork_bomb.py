# case: res-fork-bomb
# why: the pids limit stops a fork bomb; the job still ends normally
# args: --pids 32 --timeout 30
# expect-outcome: succeeded
# expect-limit: pids
# expect-stdout: BLOCKED EAGAIN
# compute-why: not one fork: compute denies new processes before the pids limit is reached
# compute-expect-outcome: succeeded
# compute-expect-stdout: BLOCKED EPERM after 0 forks
import errno, os, signal
r, w = os.pipe()
children = []
verdict = "ESCAPED forked 2000 processes"
for i in range(2000):
    try:
        pid = os.fork()
    except OSError as e:
        verdict = "BLOCKED %s after %d forks" % (errno.errorcode.get(e.errno, e.errno), len(children))
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)  # EOF when the parent goes
        os._exit(0)
    children.append(pid)
for pid in children:
    os.kill(pid, signal.SIGKILL)
for pid in children:
    os.waitpid(pid, 0)
print(verdict)
