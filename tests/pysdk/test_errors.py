"""Typed errors per API error code, 429 retried after Retry-After (bounded),
timeouts, and downloads whose sha256 does not match."""
import os
import threading
import time

import pytest

import airlock_service
from airlock_serve import (ApiError, AirlockTimeout, BadName, BadPath, BadRequest, Client, ConnectionFailed,
                           Forbidden, IntegrityError, NotFinished, NotFound, NotPublishable, Overloaded,
                           ServerError, SessionClosed, TooManyRequests, TooManySessions, TypeNotAllowed,
                           Unauthenticated)
from airlock_serve.errors import error_for


def test_an_unknown_key_is_unauthenticated(service):
    with pytest.raises(Unauthenticated) as e:
        Client(service.url, "alk_not_a_key").list_jobs()
    assert (e.value.status, e.value.code) == (401, "unauthenticated")


def test_a_key_without_the_run_scope_is_forbidden(service):
    with pytest.raises(Forbidden, match="'run' scope") as e:
        Client(service.url, service.keys.alpha_reader).create_job(command=["/bin/true"])
    assert e.value.status == 403


def test_another_tenants_job_is_not_found(client, service):
    job = client.run(command=["/bin/true"], timeout=60)
    beta = Client(service.url, service.keys.beta)
    with pytest.raises(NotFound):
        beta.get_job(job.id)
    with pytest.raises(NotFound):
        beta.download_output(job.id, "x")


def test_bad_requests_name_the_field(client):
    with pytest.raises(BadRequest, match="memory_mb|policy") as e:
        client.create_job(command=["/bin/true"], policy={"memory_mb": "lots"})
    assert isinstance(e.value, ApiError) and e.value.code == "bad_request"
    with pytest.raises(BadName):
        client.upload(b"x", name="../escape.txt")


def test_publish_errors(client):
    running = client.create_job(command=["/bin/sleep", "30"])
    with pytest.raises(NotFinished):
        running.publish("x")
    running.cancel()
    failed = client.run(code="open('/output/a.txt', 'w').write('a')\nraise SystemExit(1)", language="python",
                        timeout=60)
    assert failed.outcome == "failed"
    with pytest.raises(NotPublishable):
        failed.publish("a.txt")


def test_session_errors(client):
    with client.session() as s:
        with pytest.raises(BadPath):
            s.write_file("../outside.txt", b"x")
        with pytest.raises(TypeNotAllowed):
            s.write_file("blob.bin", bytes(range(256)) * 4)
        with pytest.raises(NotFound):
            s.read_file("missing.txt")
    with pytest.raises(SessionClosed, match="closed"):
        s.run("1")


def test_every_code_the_service_answers_has_its_class():
    # Each `error(STATUS, "code"` in the service's sources, and the codes
    # session files map in session_files.cc, has a class of its own.
    import re

    from conftest import SOURCE
    from airlock_serve import ERRORS

    found = {}
    for root, _, files in os.walk(os.path.join(SOURCE, "src")):
        for name in files:
            if name.endswith((".cc", ".h")):
                with open(os.path.join(root, name)) as f:
                    text = f.read()
                for status, code in re.findall(r'error\((\d{3}), "([a-z_]+)"', text):
                    found[code] = int(status)
                if name == "session_files.cc":  # its table of workspace error codes
                    for code, status in re.findall(r'\{"([a-z_]+)", (\d{3})\}', text):
                        found.setdefault(code, int(status))
    assert len(found) > 20
    missing = sorted(set(found) - set(ERRORS))
    assert not missing, f"error codes of the service without an SDK class: {missing}"
    for code, status in found.items():
        assert error_for(status, code, "m").code == code and isinstance(error_for(status, code, "m"), ERRORS[code])


def test_unknown_codes_map_by_status():
    assert type(error_for(409, "something_new", "m")).__name__ == "Conflict"
    assert isinstance(error_for(502, "bad_gateway", "m"), ServerError)
    assert type(error_for(418, "teapot", "m")) is ApiError


# 429: a service with one running job and one queued job per tenant.
@pytest.fixture(scope="module")
def small_service():
    s = airlock_service.Service(extra_args=["--max-running", "1", "--tenant-max-queued", "1"],
                                config="max_sessions_per_tenant = 1\n")
    s.k = s.key("tiny")
    s.start()
    yield s
    s.stop()


def _fill(c):
    """A running job and a queued one: the tenant's queue is full."""
    a = c.create_job(command=["/bin/sleep", "60"])
    for _ in range(200):
        if c.get_job(a.id).state == "running":
            break
        time.sleep(0.05)
    b = c.create_job(command=["/bin/sleep", "60"])
    return a, b


def test_429_raises_overloaded_with_retry_after_when_retries_are_off(small_service):
    c = Client(small_service.url, small_service.k, max_retries=0)
    a, b = _fill(c)
    try:
        with pytest.raises(Overloaded, match="tenant tiny") as e:
            c.create_job(command=["/bin/true"])
        assert isinstance(e.value, TooManyRequests) and e.value.status == 429
        assert e.value.retry_after == 1.0  # the service's Retry-After
    finally:
        a.cancel(), b.cancel()
        a.wait(60), b.wait(60)


def test_429_is_retried_a_bounded_number_of_times(small_service):
    retries = []
    c = Client(small_service.url, small_service.k, max_retries=2, max_retry_wait=0.2,
               on_retry=lambda err, attempt, delay: retries.append((type(err).__name__, attempt, delay)))
    a, b = _fill(c)
    try:
        t0 = time.monotonic()
        with pytest.raises(Overloaded):
            c.create_job(command=["/bin/true"])
        assert retries == [("Overloaded", 1, 0.2), ("Overloaded", 2, 0.2)]  # Retry-After 1 s, capped at 0.2
        assert time.monotonic() - t0 >= 0.4
    finally:
        a.cancel(), b.cancel()
        a.wait(60), b.wait(60)


def test_429_retried_after_retry_after_succeeds_once_there_is_room(small_service):
    retries = []
    freed = []

    def on_retry(err, attempt, delay):
        retries.append(delay)
        if not freed:  # make room while the client waits out Retry-After
            freed.append(1)
            threading.Thread(target=lambda: (a.cancel(), b.cancel())).start()

    c = Client(small_service.url, small_service.k, max_retries=10, on_retry=on_retry)
    a, b = _fill(c)
    job = c.run(command=["/bin/echo", "admitted"], timeout=120)
    assert job.outcome == "succeeded" and job.stdout == "admitted\n"
    assert retries and retries[0] == 1.0  # it waited the service's Retry-After


def test_too_many_sessions(small_service):
    c = Client(small_service.url, small_service.k, max_retries=0)
    with c.session():
        with pytest.raises(TooManySessions) as e:
            c.session()
        assert e.value.retry_after == 1.0


# Timeouts.
def test_a_request_that_gets_no_answer_times_out(service, proxy):
    proxy.plan({"stall_after": 0})
    c = Client(proxy.url, service.keys.alpha, timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(AirlockTimeout):
        c.health()
    assert time.monotonic() - t0 < 10


def test_waits_time_out(client):
    job = client.create_job(command=["/bin/sleep", "60"])
    with pytest.raises(AirlockTimeout):
        job.wait(timeout=1)
    job.cancel()
    with client.session() as s:
        with pytest.raises(AirlockTimeout):
            s.run("import time\ntime.sleep(60)", timeout=1)
        s.interrupt()


def test_an_unreachable_service_is_connection_failed():
    import socket

    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectionFailed):
        Client(f"http://127.0.0.1:{port}", "k", timeout=5).health()


# Downloads with the wrong bytes.
def test_a_tampered_job_output_is_refused(client, service, proxy, tmp_path):
    job = client.run(code="open('/output/a.txt', 'w').write('hello world\\n')", language="python", timeout=60)
    assert job.output("a.txt") == b"hello world\n"
    via = Client(proxy.url, service.keys.alpha)
    proxy.plan({"replace": (b"hello world", b"HELLO world")}, {"replace": (b"hello world", b"HELLO world")})
    with pytest.raises(IntegrityError, match="announced"):
        via.download_output(job.id, "a.txt")
    dest = tmp_path / "a.txt"
    with pytest.raises(IntegrityError):
        via.download_output(job.id, "a.txt", dest=dest)
    assert os.listdir(tmp_path) == []  # neither the file nor a temporary one


def test_an_announced_hash_other_than_the_records_is_refused(client, service, proxy):
    job = client.run(code="open('/output/a.txt', 'w').write('x')", language="python", timeout=60)
    real = job.outputs[0]["sha256"]
    proxy.plan({"replace": (real.encode(), b"0" * 64)})
    via = Client(proxy.url, service.keys.alpha)
    with pytest.raises(IntegrityError, match="the record says"):
        via.download_output(job.id, "a.txt", expected_sha256=real)


def test_a_tampered_session_file_is_refused(client, service, proxy):
    via = Client(proxy.url, service.keys.alpha)
    with client.session() as s:
        s.write_file("n.txt", "secret numbers 123\n")
        proxy.plan({"replace": (b"123", b"124")})
        with pytest.raises(IntegrityError):
            via.read_session_file(s.id, "n.txt")
        assert via.read_session_file(s.id, "n.txt") == b"secret numbers 123\n"


class _Answers:
    """A loopback HTTP server answering each request with the next (status, headers, body)."""

    def __init__(self, answers):
        import http.server
        import json as _json

        self.answers = list(answers)
        self.seen = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                status, headers, body = outer.answers[min(outer.seen, len(outer.answers) - 1)]
                outer.seen += 1
                data = _json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


_STORE_DOWN = (503, {"Retry-After": "0"},
               {"error": {"code": "store_unavailable", "message": "the service's store cannot be reached now"}})
_A_JOB = (200, {}, {"id": "0123456789abcdef", "state": "finished", "outcome": "succeeded"})


def test_503_store_unavailable_with_retry_after_is_retried_until_the_store_answers():
    from airlock_serve.errors import StoreUnavailable

    server = _Answers([_STORE_DOWN, _STORE_DOWN, _A_JOB])
    retries = []
    try:
        c = Client(server.url, "k", max_retries=5,
                   on_retry=lambda err, attempt, delay: retries.append((type(err).__name__, attempt)))
        job = c.get_job("0123456789abcdef")
        assert job.outcome == "succeeded"
        assert retries == [("StoreUnavailable", 1), ("StoreUnavailable", 2)]
        assert server.seen == 3
    finally:
        server.close()


def test_503_store_unavailable_is_retried_a_bounded_number_of_times():
    from airlock_serve.errors import StoreUnavailable

    server = _Answers([_STORE_DOWN])
    try:
        c = Client(server.url, "k", max_retries=2)
        with pytest.raises(StoreUnavailable) as e:
            c.get_job("0123456789abcdef")
        assert e.value.status == 503 and e.value.retryable
        assert server.seen == 3  # the first try and two retries
    finally:
        server.close()


def test_503_without_retry_after_is_not_retried():
    server = _Answers([(503, {}, {"error": {"code": "stopping", "message": "the service is stopping"}}), _A_JOB])
    try:
        c = Client(server.url, "k", max_retries=5)
        with pytest.raises(ServerError) as e:
            c.get_job("0123456789abcdef")
        assert e.value.status == 503 and e.value.code == "stopping"
        assert server.seen == 1
    finally:
        server.close()
