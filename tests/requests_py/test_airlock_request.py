"""The helper a job imports to ask for data: what it writes on the channel,
what it refuses before writing, and how it ends a job or a session call."""

import json
import os
import subprocess
import sys

import pytest

SRC = os.path.join(os.environ["AIRLOCK_SOURCE_DIR"], "src", "requests")
sys.path.insert(0, SRC)
import airlock_request  # noqa: E402


def run_job(code, extra_env=None):
    """Runs `code` as a job would: the helper importable, the channel an
    inherited pipe named by AIRLOCK_REQUEST_FD. Returns (exit status, lines)."""
    r, w = os.pipe()
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC, "AIRLOCK_REQUEST_FD": str(w),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra_env or {})
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, pass_fds=(w,),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(w)
    with os.fdopen(r, "rb") as channel:
        data = channel.read()
    out, err = proc.communicate(timeout=60)
    return proc.returncode, data, out.decode(), err.decode()


def test_ask_writes_one_line_and_ends_the_job_with_status_0():
    status, data, out, err = run_job(
        "import airlock_request\n"
        "print('before')\n"
        "airlock_request.ask('sales_2025.csv', 'the report compares three years',\n"
        "                    description='same columns', params={'year': 2025, 'eu': True})\n"
        "print('after')\n")
    assert status == 0, err
    assert out == "before\n", "nothing runs after ask()"
    lines = data.decode().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == {"name": "sales_2025.csv", "why": "the report compares three years",
                                    "description": "same columns", "params": {"year": 2025, "eu": True}}


def test_add_sends_several_and_stop_ends_the_run():
    status, data, out, err = run_job(
        "import airlock_request\n"
        "airlock_request.add('a.csv', 'first')\n"
        "airlock_request.add('b.csv', 'second, caf\u00e9')\n"
        "print('still running')\n"
        "airlock_request.stop()\n"
        "print('not reached')\n")
    assert status == 0, err
    assert out == "still running\n"
    lines = [json.loads(l) for l in data.decode("utf-8").splitlines()]
    assert [l["name"] for l in lines] == ["a.csv", "b.csv"]
    assert lines[1]["why"] == "second, caf\u00e9"


def test_the_limit_from_the_environment_is_checked_before_sending():
    status, data, out, err = run_job(
        "import airlock_request\n"
        "airlock_request.add('a', 'x')\n"
        "try:\n"
        "    airlock_request.add('b', 'x')\n"
        "except airlock_request.RequestError as e:\n"
        "    print(e)\n",
        {"AIRLOCK_REQUEST_LIMIT": "1"})
    assert status == 0, err
    assert out == "at most 1 requests per run\n"
    assert len(data.splitlines()) == 1


def test_a_request_over_the_byte_limit_is_refused_locally():
    status, data, out, err = run_job(
        "import airlock_request\n"
        "try:\n"
        "    airlock_request.ask('a', 'x', description='d' * 200)\n"
        "except airlock_request.RequestError as e:\n"
        "    print(e)\n",
        {"AIRLOCK_REQUEST_BYTES": "100"})
    assert status == 0, err
    assert out == "the request is longer than 100 bytes\n"
    assert data == b""


@pytest.mark.parametrize("args,reason", [
    (("", "why"), "name:"),
    (("../x", "why"), "name:"),
    (("https://example.invalid/data", "why"), "name:"),
    (("a" * 65, "why"), "name:"),
    ((7, "why"), "name:"),
    (("a", ""), "why: must be 1-1000"),
    (("a", None), "why: required"),
    (("a", "w" * 1001), "why: must be 1-1000"),
    (("a", "ring\x07"), "why: control characters"),
    (("a", "x", "\x1b[2J"), "description: control characters"),
    (("a", "x", None, [1]), "params: must be a dict"),
    (("a", "x", None, {"k": {"deep": 1}}), "params.k: must be a string"),
    (("a", "x", None, {"bad key": 1}), "params: keys"),
    (("a", "x", None, {"k": float("nan")}), "params.k: must be a finite number"),
    (("a", "x", None, {f"k{i}": i for i in range(33)}), "params: at most 32 keys"),
])
def test_invalid_requests_are_refused_before_anything_is_sent(args, reason, monkeypatch):
    sent = []
    monkeypatch.setattr(airlock_request, "_write_line", sent.append)
    with pytest.raises(airlock_request.RequestError) as e:
        airlock_request.add(*args)
    assert reason in str(e.value)
    assert sent == []


def test_without_a_channel_add_says_so(monkeypatch):
    monkeypatch.delenv("AIRLOCK_REQUEST_FD", raising=False)
    airlock_request.set_sink(None)
    with pytest.raises(airlock_request.RequestError, match="AIRLOCK_REQUEST_FD is not set"):
        airlock_request.add("a", "x")


def test_a_closed_channel_is_a_request_error(monkeypatch):
    r, w = os.pipe()
    os.close(r)
    monkeypatch.setenv("AIRLOCK_REQUEST_FD", str(w))
    airlock_request.set_sink(None)
    import signal
    old = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        with pytest.raises(airlock_request.RequestError, match="channel is closed"):
            airlock_request.add("a", "x")
    finally:
        signal.signal(signal.SIGPIPE, old)
        os.close(w)


def test_in_a_session_stop_raises_data_requested_with_the_calls_requests():
    got = []
    airlock_request.set_sink(got.append)
    try:
        airlock_request.add("a.csv", "first")
        with pytest.raises(airlock_request.DataRequested) as e:
            airlock_request.ask("b.csv", "second", params={"n": 1})
        assert [r["name"] for r in e.value.requests] == ["a.csv", "b.csv"]
        assert got == e.value.requests
        assert "a.csv, b.csv" in str(e.value)
        with pytest.raises(airlock_request.DataRequested) as again:
            airlock_request.ask("c.csv", "third")
        assert [r["name"] for r in again.value.requests] == ["c.csv"], "each call starts afresh"
    finally:
        airlock_request.set_sink(None)


def test_answer_reports_what_the_kernel_set():
    airlock_request.set_answers({"r1": {"state": "refused", "reason": "not yours"}})
    try:
        assert airlock_request.answer("r1") == {"state": "refused", "reason": "not yours"}
        assert airlock_request.answer("r2") is None
        airlock_request.answer("r1")["state"] = "answered"
        assert airlock_request.answer("r1")["state"] == "refused", "a copy, not the kernel's dict"
    finally:
        airlock_request.set_answers({})
