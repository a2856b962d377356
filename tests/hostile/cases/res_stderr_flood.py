# case: res-stderr-flood
# why: a stderr flood while stdout is idle must not deadlock the job (both pipes are drained)
# args: --timeout 30
# expect-outcome: succeeded
# expect-limit: stderr
# expect-truncated: stderr
# expect-stdout: DONE after 64 MiB on stderr
import sys
chunk = b"E" * (1 << 20)
for _ in range(64):
    sys.stderr.buffer.write(chunk)
sys.stderr.flush()
print("DONE after 64 MiB on stderr")
