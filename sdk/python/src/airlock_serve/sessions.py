"""Sessions: a sandbox that stays, with a Python kernel and a shell that keep
their state between calls, a /workspace with files, and snapshots."""
import base64
import math
import time

from . import errors
from .data_requests import requests_of


class CallResult:
    """How a session call ended: what it printed, the value of its last
    expression, the traceback if it raised, and its figures as PNG bytes."""

    def __init__(self, view):
        self.view = view
        result = view.get("result") or {}
        self.id = view.get("id")
        self.state = view.get("state")
        self.status = view.get("status") or result.get("status")
        self.stdout = result.get("stdout", "")
        self.stderr = result.get("stderr", "")
        self.value = result.get("value", "")
        self.html = result.get("html", "")
        self.error = result.get("error", "")
        self.exit_code = result.get("exit_code")
        self.cwd = result.get("cwd")
        self.ms = result.get("ms")
        self.truncated = result.get("truncated") or {}
        self.figures = [base64.b64decode(f) for f in result.get("figures") or [] if isinstance(f, str)]
        # What the call asked the application for (status input_requested).
        self.data_requests = requests_of(view, result)

    @property
    def input_requested(self):
        return self.status == "input_requested"

    @property
    def traceback(self):
        return self.error

    @property
    def ok(self):
        return self.status == "ok"

    def __repr__(self):
        return f"CallResult({self.id!r}, status={self.status!r}, value={self.value[:40]!r})"


class Session:
    """An open session. Use it as a context manager: leaving the block closes it."""

    def __init__(self, client, data):
        self._client = client
        self.data = data
        self.id = data["id"]

    state = property(lambda self: self.data.get("state"))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.close()
        except errors.AirlockError:
            if exc_type is None:
                raise  # else the block's own exception matters more

    def refresh(self):
        self.data = self._client.get_session(self.id)
        return self

    def close(self):
        """Closes the session; returns its closed view with the record."""
        self.data = self._client.close_session(self.id)
        return self.data

    @property
    def record(self):
        return self.data.get("record")

    @property
    def data_requests(self):
        """Every data request of the session so far (as last read: refresh()), each with its answer."""
        return requests_of(self.data, self.record or {})

    def run(self, code, *, kind="python", timeout_s=None, timeout=None, on_output=None, answers=None):
        """Runs one call and waits for it to end; returns its CallResult.

        `timeout_s` is the call's own timeout in the sandbox (the session's
        policy.timeout_s unless given); `timeout` bounds the client's wait
        (default: the call's timeout plus the client's request timeout).
        `on_output(event)` gets each stdout/stderr event as it comes.
        `answers`: ids of this session's data requests whose data this call
        provides (written into the session first). A call whose code asked
        for data ends with status "input_requested" and its data_requests."""
        limit = timeout_s
        if limit is None:
            limit = ((self.data.get("request") or {}).get("policy") or {}).get("timeout_s", 60)
        if timeout is None:
            timeout = float(limit) + self._client.timeout
        deadline = time.monotonic() + timeout
        if on_output is not None:
            view = self._client.submit_call(self.id, code, kind=kind, timeout_s=timeout_s, answers=answers)
            for ev in self._client.call_events(self.id, view["id"], timeout=deadline - time.monotonic()):
                if ev.kind in ("stdout", "stderr"):
                    on_output(ev)
                elif ev.kind == "result":
                    return CallResult(ev.data)
            view = self._client.get_call(self.id, view["id"])
        else:
            view = self._client.submit_call(self.id, code, kind=kind, timeout_s=timeout_s,
                                            wait_s=_wait_s(deadline), answers=answers)
        while view.get("state") != "finished":
            if time.monotonic() >= deadline:
                raise errors.AirlockTimeout(f"session {self.id}: call {view.get('id')} did not end within {timeout} s")
            wait_s = _wait_s(deadline)
            if wait_s == 0:  # less than a second left: poll gently
                time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
            view = self._client.get_call(self.id, view["id"], wait_s=wait_s)
        return CallResult(view)

    def submit(self, code, *, kind="python", timeout_s=None, answers=None):
        """Submits a call without waiting; returns its view (see events())."""
        return self._client.submit_call(self.id, code, kind=kind, timeout_s=timeout_s, answers=answers)

    def refuse(self, request_id, reason):
        """Refuses one of the session's data requests with a reason (recorded);
        code in a later call reads it with airlock_request.answer(request_id)."""
        return self._client.refuse_session_request(self.id, request_id, reason)

    def events(self, exec_id, last_event_id=None, timeout=None):
        return self._client.call_events(self.id, exec_id, last_event_id=last_event_id, timeout=timeout)

    def calls(self):
        return self._client.list_calls(self.id)

    def call(self, exec_id, wait_s=None):
        return CallResult(self._client.get_call(self.id, exec_id, wait_s=wait_s))

    def interrupt(self):
        self.data = self._client.interrupt_session(self.id)
        return self

    def restart(self):
        self.data = self._client.restart_session(self.id)
        return self

    # /workspace
    def write_file(self, path, data):
        """Writes bytes, a str, or a local file (os.PathLike) to /workspace/path."""
        return self._client.write_session_file(self.id, path, data)

    def read_file(self, path, dest=None):
        """A file's bytes (or written to dest), its sha256 checked."""
        return self._client.read_session_file(self.id, path, dest=dest)

    def list_files(self, path=None):
        return self._client.list_session_files(self.id, path)

    def delete_file(self, path):
        return self._client.delete_session_file(self.id, path)

    def snapshot(self):
        """Snapshots /workspace; returns {digest, size_bytes, entries, ...}."""
        return self._client.snapshot_session(self.id)

    def __repr__(self):
        return f"Session({self.id!r}, state={self.state!r})"


def _wait_s(deadline):
    return max(0, min(300, math.floor(deadline - time.monotonic())))
