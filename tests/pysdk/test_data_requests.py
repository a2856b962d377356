"""Data requests through the SDK against a real airlock serve (issue 16): a
job that asks for a third CSV, the application answering with a follow-up
that succeeds, a refusal; the same in a session."""
import pytest

from airlock_serve import AlreadyAnswered, Client, DataRequest, NotFound

# Sums the amounts of three regional exports; the third is not among the
# inputs of the first run, so the code asks the application for it.
ASKING_JOB = """
import csv, os, airlock_request
if not os.path.exists('/inputs/west.csv'):
    airlock_request.ask('west_sales', 'the west region export is needed for the total',
                        description='CSV with columns region,amount', params={'region': 'west', 'quarter': 3})
total = 0
for name in ('north.csv', 'south.csv', 'west.csv'):
    total += sum(int(r['amount']) for r in csv.DictReader(open('/inputs/' + name)))
print('total', total)
"""


@pytest.fixture
def exports(client):
    return [client.upload(b"region,amount\nnorth,3\n", name="north.csv")["id"],
            client.upload(b"region,amount\nsouth,4\n", name="south.csv")["id"]]


def test_a_job_asks_and_a_follow_up_answers(client, exports):
    first = client.run(ASKING_JOB, language="python", inputs=exports, timeout=120)
    assert first.outcome == "input_requested", first.record
    assert first.input_requested
    [req] = first.data_requests
    assert isinstance(req, DataRequest)
    assert (req.id, req.name, req.why) == ("r1", "west_sales", "the west region export is needed for the total")
    assert req.description == "CSV with columns region,amount"
    assert req.params == {"region": "west", "quarter": 3}
    assert req.open and req.state == "open"
    assert "total" not in first.stdout  # it ended at ask(), before the sum

    west = client.upload(b"region,amount\nwest,5\n", name="west.csv")
    assert first.answers() == {"job": first.id, "requests": ["r1"]}
    follow = client.run(ASKING_JOB, language="python", inputs=exports + [west["id"]], answers=first.answers(),
                        timeout=120)
    assert follow.outcome == "succeeded", follow.record
    assert follow.stdout == "total 12\n"
    assert follow.record["answers"]["job"] == first.id
    assert follow.record["answers"]["requests"] == ["r1"]
    assert len(follow.record["answers"]["record_sha256"]) == 64

    [answered] = first.refresh().data_requests
    assert answered.state == "answered" and answered.answer["by_job"] == follow.id
    # An answered request cannot be answered again or refused; a job that did not ask has no r1.
    with pytest.raises(AlreadyAnswered):
        client.create_job(code="print(1)", answers=first.answers("r1"))
    with pytest.raises(AlreadyAnswered):
        first.refuse("r1", "too late")
    with pytest.raises(NotFound):
        client.create_job(code="print(1)", answers=follow.answers("r1"))
    with pytest.raises(NotFound):
        client.create_job(code="print(1)", answers=first.answers("r9"))


def test_a_job_request_refused(client, service, exports):
    first = client.run(ASKING_JOB, language="python", inputs=exports, timeout=120)
    assert first.outcome == "input_requested", first.record
    # Another tenant cannot refuse (or see) it: 404, like a job that does not exist.
    beta = Client(service.url, service.keys.beta)
    with pytest.raises(NotFound):
        beta.refuse_job_request(first.id, "r1", "not yours")
    with pytest.raises(NotFound):
        beta.create_job(code="print(1)", answers=first.answers())
    assert first.refuse("r1", "the west export is confidential") is first
    assert first.data_requests[0].state == "refused"  # the answer of the refusal
    [req] = first.refresh().data_requests
    assert req.state == "refused"
    assert req.answer["reason"] == "the west export is confidential"
    assert req.answer.get("key_id")
    # Refused is final: neither a second refusal nor a follow-up.
    with pytest.raises(AlreadyAnswered):
        first.refuse("r1", "again")
    with pytest.raises(AlreadyAnswered):
        client.create_job(code="print(1)", answers=first.answers("r1"))
    with pytest.raises(NotFound):
        first.refuse("r9", "no such request")


ASKING_CALL = """
import os, airlock_request
if not os.path.exists('west.csv'):
    airlock_request.ask('west_sales', 'the west export is needed', params={'region': 'west'})
open('west.csv').read().count('\\n')
"""


def test_a_session_call_asks_answered_and_refused(client):
    with client.session(policy={"timeout_s": 60}) as s:
        assert s.run("kept = 41").ok
        asked = s.run(ASKING_CALL)
        assert asked.status == "input_requested", (asked.status, asked.traceback)
        assert asked.input_requested and not asked.ok
        [req] = asked.data_requests
        assert (req.id, req.name, req.why, req.params) == ("r1", "west_sales", "the west export is needed",
                                                           {"region": "west"})
        assert req.open
        # The session stays, its kernel's state too.
        assert s.run("kept + 1").value == "42"

        # An answer naming a request the session does not have is refused before the call runs.
        with pytest.raises(NotFound):
            s.run("kept = 0", answers=["r7"])
        assert s.run("kept").value == "41"
        with pytest.raises(NotFound):
            s.refuse("r7", "no such request")

        s.write_file("west.csv", "region,amount\nwest,5\n")
        answered = s.run(ASKING_CALL, answers=["r1"])
        assert answered.ok, answered.traceback
        assert answered.value == "2"

        # A second request in the session gets the next id; refused, and the
        # next call's code learns the answer.
        again = s.run("import airlock_request\nairlock_request.ask('costs', 'costs are not in the workspace')")
        assert again.status == "input_requested"
        assert [r.id for r in again.data_requests] == ["r2"]
        s.refuse("r2", "no cost data for this analysis")
        with pytest.raises(AlreadyAnswered):
            s.refuse("r2", "twice")
        with pytest.raises(AlreadyAnswered):
            s.refuse("r1", "already answered")
        with pytest.raises(AlreadyAnswered):
            s.run("1", answers=["r2"])
        learned = s.run("import airlock_request\nairlock_request.answer('r2')")
        assert learned.ok, learned.traceback
        assert "refused" in learned.value and "no cost data for this analysis" in learned.value

        calls = {c["id"]: c for c in s.calls()}
        states = {r.id: r for c in calls.values() for r in _requests(c)}
        assert states["r1"].state == "answered" and states["r1"].answer["by_call"] == answered.id
        assert states["r2"].state == "refused"
        assert {r.id: r.state for r in s.refresh().data_requests} == {"r1": "answered", "r2": "refused"}
    record = s.record
    recorded = {r["id"]: r for r in _record_requests(record)}
    assert recorded["r1"]["answer"]["state"] == "answered"
    assert recorded["r2"]["answer"]["state"] == "refused"
    assert recorded["r2"]["answer"]["reason"] == "no cost data for this analysis"


def _requests(call):
    from airlock_serve.data_requests import requests_of

    return requests_of(call, call.get("result") or {})


def _record_requests(record):
    """The session record's requests: at its top, or in each call."""
    d = record.get("data_requests")
    if isinstance(d, dict) and isinstance(d.get("requests"), list):
        return d["requests"]
    if isinstance(d, list):
        return d
    return [r for c in record.get("calls") or record.get("execs") or [] for r in c.get("data_requests") or []]
