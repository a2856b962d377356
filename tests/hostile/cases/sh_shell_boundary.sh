# case: sh-shell-boundary
# why: a shell job meets the same boundary: core limit not raisable, image read-only, no /sys, uid 1000
# expect-outcome: succeeded
# expect-stdout: BLOCKED shell boundary holds
# compute-why: a shell runs its commands in new processes: compute denies fork (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: Cannot fork
escaped=""
if (ulimit -c unlimited) 2>/dev/null; then escaped="$escaped core-ulimit"; fi
if touch /usr/airlock-hostile-x 2>/dev/null; then escaped="$escaped write-usr"; rm -f /usr/airlock-hostile-x; fi
if [ -e /sys/kernel ]; then escaped="$escaped sys"; fi
if [ "$(id -u)" != 1000 ]; then escaped="$escaped uid=$(id -u)"; fi
if [ -n "$escaped" ]; then echo "ESCAPED$escaped"; else echo "BLOCKED shell boundary holds"; fi
