# case: res-stdout-flood
# why: 1 GiB on stdout is capped in the record and the rest drained, without blocking the job
# args: --timeout 60
# expect-outcome: succeeded
# expect-limit: stdout
# expect-truncated: stdout
# expect-stderr: wrote 1073741824 bytes
import os, sys
chunk = b"A" * (1 << 20)
n = 0
for _ in range(1024):
    n += sys.stdout.buffer.write(chunk)
sys.stdout.flush()
sys.stderr.write("wrote %d bytes\n" % n)
