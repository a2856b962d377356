# case: life-output-race
# why: a leftover process swapping an output between a file and a symlink to a host file must be dead before collection; nothing of the host is copied
# expect-outcome: succeeded|output_rejected
# forbid-record: root:x:0:0
# expect-stdout: RACER started
# compute-why: there is no racer process: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        end = time.time() + 60
        while time.time() < end:
            try:
                with open("/output/race.tmp", "w") as f:
                    f.write("plain\n")
                os.replace("/output/race.tmp", "/output/race.txt")
                os.symlink("/etc/passwd", "/output/race.lnk")
                os.replace("/output/race.lnk", "/output/race.txt")
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
time.sleep(0.3)
print("RACER started", flush=True)
