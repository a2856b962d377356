# case: life-stopped-and-subreaper
# why: what the job leaves behind a child subreaper of its own, or stopped (SIGSTOP), is killed and reaped when its main process exits, before the outputs are read: nothing is left on the host and the job ends at once
# args: --timeout 20
# expect-outcome: succeeded
# expect-stdout: LEFT subreaper, writer, stopped
# compute-why: there is nothing to leave behind: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import ctypes, os, signal, time

PR_SET_CHILD_SUBREAPER = 36

# A subreaper whose grandchild is orphaned to it (not to the sandbox's init)
# and writes /output for a minute.
if os.fork() == 0:
    os.setsid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if os.fork() == 0:
        if os.fork() == 0:
            end = time.time() + 60
            n = 0
            while time.time() < end:
                n += 1
                try:
                    with open("/output/late.txt", "w") as f:
                        f.write("%d\n" % n)
                except OSError:
                    pass
            os._exit(0)
        os._exit(0)  # the writer is orphaned: the subreaper is its parent now
    time.sleep(60)
    os._exit(0)

# A process that stops itself: only SIGKILL moves it.
if os.fork() == 0:
    with open("/output/stopped.txt", "w") as f:
        f.write("stopping\n")
    os.kill(os.getpid(), signal.SIGSTOP)
    os._exit(0)

time.sleep(0.3)
print("LEFT subreaper, writer, stopped", flush=True)
