# Runs only if the service accepted a job naming the selftest's loopback
# listener as a destination (it must not): the request goes through the
# egress gateway, as an approved destination would.
import os
import urllib.request

try:
    with urllib.request.urlopen("http://127.0.0.1:%d/selftest" % PORT, timeout=5) as r:
        print("PROBE gateway OPEN", "status", r.status, flush=True)
except Exception as e:
    print("PROBE gateway BLOCKED", str(e)[:200], flush=True)
