# case: host-environment
# why: the code sees exactly the documented minimal environment (with the data request channel's variables) plus --env, nothing of the host
# args: --env HOSTILE_PROBE=42
# expect-outcome: succeeded
# expect-stdout: BLOCKED env is exactly the minimal set
# compute-why: compute sets HOME=/tmp (/workspace is read-only there); every other variable is the same minimal set
# compute-expect-outcome: succeeded
# compute-expect-stdout: WRONG missing: [] different: [('HOME', '/tmp')]
import os
want = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/workspace", "TMPDIR": "/tmp",
        "LANG": "C.UTF-8", "USER": "sandbox", "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/matplotlib", "PYTHONPATH": "/run/airlock/python",
        "AIRLOCK_REQUEST_FD": "3", "AIRLOCK_REQUEST_LIMIT": "4", "AIRLOCK_REQUEST_BYTES": "4096",
        "HOSTILE_PROBE": "42"}
got = dict(os.environ)
extra = sorted(set(got) - set(want))
missing = sorted(set(want) - set(got))
wrong = sorted(k for k in want if k in got and got[k] != want[k])
print("keys:", sorted(got))
if extra:
    print("ESCAPED extra variables:", extra)
elif missing or wrong:
    print("WRONG missing:", missing, "different:", [(k, got[k]) for k in wrong])
else:
    print("BLOCKED env is exactly the minimal set")
