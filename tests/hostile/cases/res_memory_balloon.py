# case: res-memory-balloon
# why: touching 1 GiB under a 64M limit ends the job as memory_limit (cgroup OOM kill)
# args: --memory 64M --timeout 30
# expect-outcome: memory_limit
# expect-limit: memory
import sys
chunks = []
mb = 0
for mb in range(16, 1024 + 1, 16):
    b = bytearray(16 << 20)
    b[::4096] = b"\x01" * len(range(0, 16 << 20, 4096))  # touch every page
    chunks.append(b)
    if mb % 128 == 0:
        print("allocated", mb, "MiB", flush=True)
print("ESCAPED allocated and touched 1 GiB")
