"""Event streams through a proxy that cuts or stalls the connection in the
middle: the SDK reconnects with Last-Event-ID and yields every byte of
output exactly once, then the final event once."""
import re

import pytest

from airlock_serve import Client, StreamError

LINES = 200
# Prints slowly, so that a cut lands while the job still runs.
SLOW = f"import sys, time\nfor i in range({LINES}):\n    print(f'line {{i:04d}}', flush=True)\n    time.sleep(0.01)\n"
EXPECTED = "".join(f"line {i:04d}\n" for i in range(LINES))


def _proxied(service, proxy, **kw):
    positions = []
    c = Client(proxy.url, service.keys.alpha, timeout=60, on_reconnect=lambda pos, err: positions.append(pos), **kw)
    return c, positions


def _resumed_ids(proxy):
    return [int(m.group(1)) for r in proxy.requests for m in [re.search(r"(?im)^last-event-id: *(\d+)", r)] if m]


def _collect(events):
    out, finals = [], []
    for e in events:
        (out if e.kind in ("stdout", "stderr") else finals).append(e)
    return "".join(e.text for e in out), finals


def test_a_cut_job_stream_is_resumed_without_loss_or_duplicates(client, service, proxy):
    job = client.create_job(code=SLOW, language="python")
    proxy.plan({"cut_after": 3000})
    c, positions = _proxied(service, proxy)
    stream = c.job_events(job.id, timeout=120)
    text, finals = _collect(stream)
    assert text == EXPECTED
    assert [f.kind for f in finals] == ["end"] and finals[0].data["outcome"] == "succeeded"
    assert stream.reconnects == 1
    # It resumed from the middle: the second request carried the offset reached.
    assert 0 < positions[0] < len(EXPECTED)
    assert _resumed_ids(proxy) == positions


def test_many_cuts_still_give_every_byte_once(client, service, proxy):
    job = client.create_job(code=SLOW, language="python")
    proxy.plan({"cut_after": 1200}, {"cut_after": 1500}, {"cut_after": 1777}, {"cut_after": 2100})
    c, positions = _proxied(service, proxy)
    stream = c.job_events(job.id, timeout=120)
    text, finals = _collect(stream)
    assert text == EXPECTED and len(finals) == 1
    assert stream.reconnects == 4
    assert positions == sorted(positions) and positions[-1] < len(EXPECTED)


def test_a_stalled_stream_is_detected_by_its_silence_and_resumed(client, service, proxy):
    # The proxy keeps the socket open and passes nothing more: only the
    # silence (3 keep-alive intervals) tells the client the stream is dead.
    job = client.create_job(code=SLOW, language="python")
    proxy.plan({"stall_after": 3000})
    c, positions = _proxied(service, proxy, keepalive_s=0.3)
    stream = c.job_events(job.id, timeout=120)
    text, finals = _collect(stream)
    assert text == EXPECTED and len(finals) == 1
    assert stream.reconnects >= 1 and 0 < positions[0] < len(EXPECTED)


def test_a_cut_session_call_stream_is_resumed(client, service, proxy):
    c, positions = _proxied(service, proxy)
    with client.session() as s:
        view = s.submit(SLOW + "print('done', file=sys.stderr)\n'the end'")
        proxy.plan({"cut_after": 2500})
        stream = c.call_events(s.id, view["id"], timeout=120)
        events = list(stream)
    stdout = "".join(e.text for e in events if e.kind == "stdout")
    stderr = "".join(e.text for e in events if e.kind == "stderr")
    results = [e for e in events if e.kind == "result"]
    assert (stdout, stderr) == (EXPECTED, "done\n")
    assert len(results) == 1 and results[0].data["result"]["value"] == "'the end'"
    assert stream.reconnects == 1 and 0 < positions[0]


def test_the_caller_can_resume_from_a_last_event_id(client):
    job = client.run(code="print('a' * 10)\nprint('b' * 10)", language="python", timeout=120)
    events = list(client.job_events(job.id, last_event_id=11))
    assert "".join(e.text for e in events if e.kind == "stdout") == "b" * 10 + "\n"


def test_a_stream_that_never_progresses_gives_up_with_stream_error(client, service, proxy):
    job = client.create_job(code=SLOW, language="python")
    proxy.plan(*[{"cut_after": 60}] * 10)  # never past the status line
    c, _ = _proxied(service, proxy, max_reconnects=2)
    with pytest.raises(StreamError, match="3 connections in a row"):
        list(c.job_events(job.id, timeout=120))
    job.cancel()


def test_keep_alives_keep_a_silent_stream_open(client, service, proxy, request):
    if "--event-keepalive-ms" not in service.extra:
        pytest.skip("this airlock serve has no --event-keepalive-ms (the SSE keep-alive)")
    # 2 s of silence, 10 keep-alive intervals (200 ms) and far more than the
    # 3 the client waits: without keep-alives it would reconnect.
    job = client.create_job(code="import time\ntime.sleep(2)\nprint('late')", language="python")
    c, positions = _proxied(service, proxy, keepalive_s=0.2)
    stream = c.job_events(job.id, timeout=120)
    text, finals = _collect(stream)
    assert text == "late\n" and len(finals) == 1
    assert stream.reconnects == 0, positions


def test_a_call_stream_resumed_from_done_has_nothing_more(client):
    with client.session() as s:
        r = s.run("print('once')")
        assert list(s.events(r.id, last_event_id="done")) == []  # the service answers 204
        events = list(s.events(r.id))
        assert events[-1].kind == "result"
        assert "".join(e.text for e in events if e.kind == "stdout") == "once\n"
