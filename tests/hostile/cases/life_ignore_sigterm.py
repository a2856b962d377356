# case: life-ignore-sigterm
# why: processes that ignore SIGTERM are still killed at the timeout
# args: --timeout 2
# expect-outcome: timed_out
# expect-limit: wall_time
# compute-why: the probe forks the children that ignore SIGTERM: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        break
print("ignoring SIGTERM in pid", os.getpid(), flush=True)
while True:
    time.sleep(1)
