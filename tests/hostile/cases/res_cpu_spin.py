# case: res-cpu-spin
# why: spinning on every core ends the job at the cpu-time limit (summed over all processes)
# args: --cpu-time 2 --timeout 20
# expect-outcome: cpu_limit
# expect-limit: cpu_time
# compute-why: the spinners are forked processes: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import os, time
n = max(2, os.cpu_count() or 2)
for _ in range(n - 1):
    if os.fork() == 0:
        break
end = time.time() + 15
x = 0
while time.time() < end:
    x += 1
print("ESCAPED spun 15 s on", n, "processes")
