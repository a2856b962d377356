# case: res-sleep-forever
# why: the wall-clock limit ends a job that never finishes
# args: --timeout 2
# expect-outcome: timed_out
# expect-limit: wall_time
import time
print("sleeping", flush=True)
time.sleep(3600)
print("ESCAPED slept an hour")
