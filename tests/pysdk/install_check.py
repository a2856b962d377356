"""Run by test_install.py with the venv's python, inside a network namespace
with only loopback: imports the installed SDK (not the checkout's), starts
an airlock serve on loopback there and runs one job through the SDK."""
import sys

import airlock_service
import airlock_serve

venv = sys.argv[1]
assert airlock_serve.__file__.startswith(venv), f"imported from {airlock_serve.__file__}, not from {venv}"
service = airlock_service.Service()
try:
    key = service.key("installed")
    service.start()
    client = airlock_serve.Client(service.url, key)
    job = client.run("print(6 * 7)", language="python", timeout=120)
    print(f"installed-sdk-ran {job.outcome} {job.stdout.strip()} {airlock_serve.__file__}")
finally:
    service.stop()
