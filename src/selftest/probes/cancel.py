# The selftest's job to cancel: says it runs, then waits far longer than
# the selftest does.
import time

print("running", flush=True)
time.sleep(120)
print("PROBE cancel OPEN the job ran to its end", flush=True)
