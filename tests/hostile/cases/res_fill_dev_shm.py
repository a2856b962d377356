# case: res-fill-dev-shm
# why: /dev/shm is a size-limited private tmpfs: writing stops at ENOSPC, the host disk is untouched
# args: --workspace-size 16M
# expect-outcome: succeeded
# expect-stdout: BLOCKED ENOSPC
# compute-why: /dev/shm is not writable under compute: the open fails (EACCES), the cleanup then finds nothing
# compute-expect-outcome: failed
# compute-expect-stderr: No such file or directory: '/dev/shm/airlock-hostile-fill'
import errno, os
path = "/dev/shm/airlock-hostile-fill"
written = 0
chunk = b"\xaa" * (1 << 20)
verdict = None
try:
    with open(path, "wb", buffering=0) as f:
        while written < (128 << 20):
            written += f.write(chunk)
    verdict = "ESCAPED wrote %d MiB to /dev/shm" % (written >> 20)
except OSError as e:
    verdict = "BLOCKED %s after %d MiB" % (errno.errorcode.get(e.errno, e.errno), written >> 20)
os.unlink(path)
print(verdict)
