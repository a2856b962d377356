# case: fail-exit-code
# why: the program's own non-zero exit code is kept
# expect-outcome: failed
# expect-exit: 3
# expect-stdout: exiting with 3
import sys
print("exiting with 3", flush=True)
sys.exit(3)
