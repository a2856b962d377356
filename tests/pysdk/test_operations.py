"""Every operation of the API through the SDK, against a real airlock serve,
and the table that maps each operationId to a method."""
import json
import os

import pytest

from airlock_serve import OPERATIONS, Client
from airlock_serve.errors import Forbidden, NotFound
from conftest import SOURCE


def _operation_ids(document):
    return {op["operationId"] for ops in document["paths"].values() for op in ops.values()
            if isinstance(op, dict) and "operationId" in op}


def test_every_operation_of_the_api_has_a_method(client):
    with open(os.path.join(SOURCE, "docs", "openapi.json")) as f:
        documented = _operation_ids(json.load(f))
    served = _operation_ids(client.openapi())  # getOpenApi: what this service serves
    for ids in (documented, served):
        missing = sorted(ids - OPERATIONS.keys())
        assert not missing, f"operations of the API without an SDK method: {missing}"
    unknown = sorted(OPERATIONS.keys() - documented)
    assert not unknown, f"OPERATIONS names operations the API does not have: {unknown}"
    for op, method in OPERATIONS.items():
        assert callable(getattr(Client, method, None)), f"{op}: Client.{method} does not exist"


def test_operations_table_check_fails_on_a_missing_operation():
    # The check above is not vacuous: an operation the table lacks is found.
    document = {"paths": {"/v1/new": {"get": {"operationId": "newThing"}}}}
    assert _operation_ids(document) - OPERATIONS.keys() == {"newThing"}


def test_service_operations(client, service):
    assert client.health() == {"status": "ok"}                     # getHealth
    assert "airlock_" in client.metrics()                          # getMetrics
    assert "paths" in client.openapi()                             # getOpenApi
    usage = client.usage()                                         # getUsage
    assert "jobs" in usage and "storage" in usage
    by_day = client.usage(group_by="day")
    assert by_day["group_by"] == "day" and by_day["total"]["cost"]["currency"] == "GBP"
    pools = client.pools()                                         # getPools
    assert isinstance(pools["warm"], int) and pools["process"] in ("running", "stopped", "none")
    admin = Client(service.url, service.keys.alpha_admin)
    assert "removed" in admin.run_retention()                      # runRetention


def test_job_operations(client, tmp_path):
    csv = tmp_path / "numbers.csv"
    csv.write_text("n\n1\n2\n3\n")
    f = client.upload(csv)                                         # uploadFile (a path)
    assert f["name"] == "numbers.csv" and len(f["sha256"]) == 64
    g = client.upload(b"hello\n", name="greeting.txt")             # uploadFile (bytes)
    code = ("import csv\n"
            "rows = list(csv.DictReader(open('/inputs/numbers.csv')))\n"
            "total = sum(int(r['n']) for r in rows)\n"
            "open('/output/total.csv', 'w').write(f'total\\n{total}\\n')\n"
            "print(open('/inputs/greeting.txt').read().strip(), total)\n")
    job = client.create_job(code=code, language="python", inputs=[f["id"], g["id"]],   # createJob
                            policy={"timeout_s": 60, "memory_mb": 256},
                            checks=[{"kind": "csv_row_count", "output": "total.csv", "min": 1, "max": 1}])
    job.wait(timeout=120)                                          # streamJobEvents + getJob
    assert job.outcome == "succeeded", job.record
    assert job.stdout == "hello 6\n"
    assert client.get_job(job.id).outcome == "succeeded"          # getJob
    assert job.record["checks"][0]["passed"] is True
    assert job.output("total.csv") == b"total\n6\n"              # downloadOutput, sha256 checked
    dest = tmp_path / "total.csv"
    assert job.output("total.csv", dest=dest) == dest and dest.read_bytes() == b"total\n6\n"
    published = job.publish("total.csv")                           # publishOutput
    assert published["sha256"] == job.outputs[0]["sha256"]
    listed = client.list_jobs(state="finished", limit=500)         # listJobs
    assert job.id in [j["id"] for j in listed["jobs"]]
    events = list(client.job_events(job.id))                       # streamJobEvents, replayed
    assert "".join(e.text for e in events if e.kind == "stdout") == "hello 6\n"
    assert events[-1].kind == "end" and events[-1].data["outcome"] == "succeeded"


def test_command_job_and_cancel(client):
    job = client.run(command=["/bin/sh", "-c", "echo from-sh; exit 3"], timeout=120)
    assert job.outcome == "failed" and job.stdout == "from-sh\n"
    # cancelJob, at once: the job may be queued, being prepared by a worker,
    # or its airlock just started; each time it must end cancelled, soon.
    for _ in range(8):
        slow = client.create_job(command=["/bin/sleep", "60"])
        slow.cancel()
        slow.wait(timeout=30)
        assert slow.outcome == "cancelled", slow.record.get("reason")


def test_session_operations(client, service):
    admin = Client(service.url, service.keys.alpha_admin)
    beta = Client(service.url, service.keys.beta)
    with client.session(policy={"timeout_s": 60}, idle_timeout_s=300) as s:        # openSession
        assert s.state == "ready"
        assert s.id in [x["id"] for x in client.list_sessions()]   # listSessions
        # tenant: an admin key lists every tenant's (each with its tenant); beta's key may not.
        everyone = {x["id"]: x["tenant_name"] for x in admin.list_sessions(tenant="*")}
        assert everyone[s.id] == "alpha"
        assert s.id not in [x["id"] for x in admin.list_sessions(tenant="beta")]
        with pytest.raises(Forbidden):
            beta.list_sessions(tenant="alpha")
        assert client.get_session(s.id)["id"] == s.id             # getSession
        r = s.run("x = 6 * 7\nprint('hi')\nx")                    # submitSessionCall + getSessionCall
        assert (r.status, r.stdout, r.value) == ("ok", "hi\n", "42")
        r = s.run("x + 1")                                         # state kept between calls
        assert r.value == "43"
        r = s.run("raise ValueError('nope')")
        assert r.status == "error" and "ValueError: nope" in r.traceback
        r = s.run("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])")
        assert len(r.figures) == 1 and r.figures[0].startswith(b"\x89PNG\r\n\x1a\n")
        r = s.run("echo $((2+3)); cd /tmp", kind="shell")
        assert (r.status, r.stdout, r.exit_code, r.cwd) == ("ok", "5\n", 0, "/tmp")
        seen = []
        r = s.run("import sys\nprint('out')\nprint('err', file=sys.stderr)", on_output=seen.append)
        # streamSessionCallEvents (print writes the text and the newline apart)
        assert "".join(e.text for e in seen if e.kind == "stdout") == "out\n"
        assert "".join(e.text for e in seen if e.kind == "stderr") == "err\n"
        assert (r.stdout, r.stderr) == ("out\n", "err\n")
        calls = client.list_calls(s.id)                            # listSessionCalls
        assert len(calls) == 6 and calls[-1]["id"] == r.id
        assert s.call(r.id).stdout == "out\n"                     # getSessionCall by id

        written = s.write_file("data/a.csv", "a,b\n1,2\n")         # writeSessionFile
        assert written["type"] == "csv"
        assert [e["name"] for e in s.list_files("data")["entries"]] == ["a.csv"]   # listSessionFiles
        assert s.read_file("data/a.csv") == b"a,b\n1,2\n"          # readSessionFile
        snap = s.snapshot()                                        # snapshotSession
        assert snap["digest"].startswith("sha256:")
        assert s.delete_file("data")["deleted"] is True            # deleteSessionFile
        assert s.list_files()["entries"] == [] or "data" not in [e["name"] for e in s.list_files()["entries"]]

        sleeper = s.submit("import time\nprint('sleeping', flush=True)\ntime.sleep(30)")
        next(iter(s.events(sleeper["id"])))                        # it runs: it printed
        s.interrupt()                                              # interruptSession
        stopped = s.call(sleeper["id"], wait_s=30)
        assert stopped.status == "interrupted" and "KeyboardInterrupt" in stopped.traceback
        assert s.run("x").value == "42"                            # the kernel's variables remain
        s.restart()                                                # restartSession
        assert s.run("'x' in dir()").value == "False"             # a fresh kernel
    assert s.data["state"] == "closed" and s.record["close_reason"] == "closed"   # closeSession

    digest = snap["digest"]
    assert digest in [x["digest"] for x in client.list_snapshots()]  # listSnapshots
    files = client.get_snapshot(digest)["files"]                   # getSnapshot
    assert "data/a.csv" in [x["path"] for x in files]
    assert digest in [x["digest"] for x in admin.list_snapshots(tenant="alpha")]
    assert admin.get_snapshot(digest, tenant="*")["tenant"] == admin.get_snapshot(digest)["tenant"]
    with pytest.raises(Forbidden):
        beta.list_snapshots(tenant="*")
    with pytest.raises(NotFound):
        beta.get_snapshot(digest)
    with client.session(snapshot=digest) as again:                 # a session from the snapshot
        assert again.read_file("data/a.csv") == b"a,b\n1,2\n"
    assert client.delete_snapshot(digest)["deleted"] is True       # deleteSnapshot
