"""Ask the application for data (docs/data-requests.md).

Code in an airlock job or session cannot fetch what it lacks: it has no
credential and no route to the data. It can ask instead:

    import airlock_request
    airlock_request.ask("sales_2025.csv", "the report compares three years",
                        description="the 2025 export, same columns as the others",
                        params={"year": 2025})

In a job, ask() sends the request and ends the program (exit status 0): the
job ends `input_requested` and the application decides, with its own
identity and permissions, whether to upload the data and run a follow-up job
or to refuse. add() sends without stopping (several requests), stop() ends
the run like ask() does. In a session the kernel installs a sink
(set_sink): requests go to it, and stop() raises DataRequested, which ends
the call, not the session.

The request is only data: nothing reads, fetches or connects to what it
names. The channel is a file descriptor (AIRLOCK_REQUEST_FD) that carries
one JSON object per line; code in any language may write such lines itself.
"""

import json
import math
import os
import re

__all__ = ["ask", "add", "stop", "answer", "DataRequested", "RequestError"]

_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}\Z")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
MAX_WHY = 1000
MAX_DESCRIPTION = 2000
MAX_PARAMS = 32


class RequestError(ValueError):
    """The request breaks a rule of the protocol, or the channel is missing."""


class DataRequested(Exception):
    """Raised by ask()/stop() in a session: the call ends asking for data."""

    def __init__(self, requests):
        super().__init__("the code asks the application for data: " +
                         ", ".join(r["name"] for r in requests))
        self.requests = list(requests)


_sink = None      # a session's kernel: callable(request dict) -> None
_answers = {}     # a session's kernel: request id -> answer dict
_sent = []        # what this run (or session call) has sent


def _limit(variable, default):
    try:
        return max(0, int(os.environ.get(variable, default)))
    except ValueError:
        return default


def _text(field, value, max_chars, required):
    if value is None:
        if required:
            raise RequestError(f"{field}: required")
        return None
    if not isinstance(value, str):
        raise RequestError(f"{field}: must be a string")
    if (required and not value) or len(value) > max_chars:
        raise RequestError(f"{field}: must be {1 if required else 0}-{max_chars} characters")
    if _CONTROL.search(value):
        raise RequestError(f"{field}: control characters are not allowed")
    return value


def _request(name, why, description, params):
    if not isinstance(name, str) or not _NAME.match(name):
        raise RequestError("name: must be 1-64 characters of A-Z a-z 0-9 . _ -")
    req = {"name": name, "why": _text("why", why, MAX_WHY, True)}
    description = _text("description", description, MAX_DESCRIPTION, False)
    if description is not None:
        req["description"] = description
    if params is not None:
        if not isinstance(params, dict):
            raise RequestError("params: must be a dict")
        if len(params) > MAX_PARAMS:
            raise RequestError(f"params: at most {MAX_PARAMS} keys")
        for key, value in params.items():
            if not isinstance(key, str) or not _NAME.match(key):
                raise RequestError("params: keys must be 1-64 characters of A-Z a-z 0-9 . _ -")
            if isinstance(value, str):
                if _CONTROL.search(value):
                    raise RequestError(f"params.{key}: control characters are not allowed")
            elif isinstance(value, float) and not math.isfinite(value):
                raise RequestError(f"params.{key}: must be a finite number")
            elif not (value is None or isinstance(value, (bool, int, float))):
                raise RequestError(f"params.{key}: must be a string, number, boolean or None")
        req["params"] = dict(params)
    return req


def _write_line(line):
    fd_text = os.environ.get("AIRLOCK_REQUEST_FD", "")
    if not fd_text.isdigit():
        raise RequestError("no data request channel here (AIRLOCK_REQUEST_FD is not set)")
    fd = int(fd_text)
    view = memoryview(line)
    while view:
        try:
            n = os.write(fd, view)
        except OSError as e:
            raise RequestError(f"the data request channel is closed: {e.strerror}") from None
        view = view[n:]


def add(name, why, description=None, params=None):
    """Sends one request and returns; the run goes on."""
    req = _request(name, why, description, params)
    limit = _limit("AIRLOCK_REQUEST_LIMIT", 4)
    if len(_sent) >= limit:
        raise RequestError(f"at most {limit} requests per run")
    line = (json.dumps(req, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")
    data = line.encode("utf-8")
    max_bytes = _limit("AIRLOCK_REQUEST_BYTES", 4096)
    if len(data) - 1 > max_bytes:
        raise RequestError(f"the request is longer than {max_bytes} bytes")
    if _sink is not None:
        _sink(req)
    else:
        _write_line(data)
    _sent.append(req)


def stop():
    """Ends the run after the requests sent: exit status 0 in a job; in a
    session, DataRequested (the call ends, the session stays)."""
    if _sink is not None:
        sent = list(_sent)
        _sent.clear()
        raise DataRequested(sent)
    raise SystemExit(0)


def ask(name, why, description=None, params=None):
    """Sends one request and ends the run (see stop())."""
    add(name, why, description, params)
    stop()


def answer(request_id):
    """In a session: what became of an earlier request, {"state": "answered"}
    or {"state": "refused", "reason": ...}; None when the kernel knows of no
    answer (still open, or not a session)."""
    a = _answers.get(request_id)
    return dict(a) if a is not None else None


def set_sink(sink):
    """For a session's kernel: requests go to sink(request) instead of the
    channel, and stop() raises DataRequested. None restores the channel."""
    global _sink
    _sink = sink
    _sent.clear()


def set_answers(answers):
    """For a session's kernel: request id -> answer dict, for answer()."""
    _answers.clear()
    _answers.update(answers)
