# case: profile-execve
# why: compute: no program starts after the first (init lets exactly one exec through); standard allows exec
# expect-outcome: succeeded
# expect-stdout: EXEC RAN /bin/echo
# compute-why: the second exec is refused by init through the layer's user notification (EPERM)
# compute-expect-outcome: succeeded
# compute-expect-stdout: BLOCKED execve EPERM
import errno, os, sys
sys.stdout.flush()
try:
    os.execv("/bin/echo", ["echo", "EXEC RAN /bin/echo"])
except OSError as e:
    print("BLOCKED execve", errno.errorcode.get(e.errno, e.errno))
