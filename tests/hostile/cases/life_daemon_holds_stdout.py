# case: life-daemon-holds-stdout
# why: a daemon that keeps stdout/stderr open must not keep the job alive after its main process exits
# args: --timeout 20
# expect-outcome: succeeded
# expect-stdout: MAIN exiting
# compute-why: there is no daemon to leave behind: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)  # holds the inherited stdout and stderr pipes
        os._exit(0)
    os._exit(0)
time.sleep(0.2)
print("MAIN exiting, daemon keeps stdout open", flush=True)
