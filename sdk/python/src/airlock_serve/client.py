"""The client of airlock serve's HTTP API: one method per operation of
docs/openapi.json (OPERATIONS names them), plus run() and sessions."""
import os
import urllib.parse
import uuid

from . import errors
from ._download import download
from ._events import EventStream
from ._transport import Transport
from .jobs import Job
from .sessions import Session

# Every operationId of docs/openapi.json, to the Client method that calls it.
OPERATIONS = {
    "getHealth": "health",
    "getMetrics": "metrics",
    "getOpenApi": "openapi",
    "uploadFile": "upload",
    "createJob": "create_job",
    "listJobs": "list_jobs",
    "getJob": "get_job",
    "cancelJob": "cancel_job",
    "streamJobEvents": "job_events",
    "downloadOutput": "download_output",
    "publishOutput": "publish_output",
    "refuseJobDataRequest": "refuse_job_request",
    "getUsage": "usage",
    "getPools": "pools",
    "runRetention": "run_retention",
    "openSession": "open_session",
    "listSessions": "list_sessions",
    "getSession": "get_session",
    "closeSession": "close_session",
    "interruptSession": "interrupt_session",
    "restartSession": "restart_session",
    "submitSessionCall": "submit_call",
    "listSessionCalls": "list_calls",
    "getSessionCall": "get_call",
    "streamSessionCallEvents": "call_events",
    "writeSessionFile": "write_session_file",
    "listSessionFiles": "list_session_files",
    "deleteSessionFile": "delete_session_file",
    "readSessionFile": "read_session_file",
    "snapshotSession": "snapshot_session",
    "refuseSessionDataRequest": "refuse_session_request",
    "listSnapshots": "list_snapshots",
    "getSnapshot": "get_snapshot",
    "deleteSnapshot": "delete_snapshot",
}


def _q(part):
    return urllib.parse.quote(part, safe="")


class Client:
    """A client of one airlock serve, authenticated with one API key.

    timeout: seconds any request may wait for the service (connect, each
      read); calls that wait on the service side (wait_s) get that much more.
    max_retries, max_retry_wait: a 429 answer, and a 503 with Retry-After, is retried after its
      Retry-After (at most max_retry_wait seconds each), max_retries times.
    keepalive_s: the service's event_keepalive_ms in seconds; an event
      stream silent for three intervals is reconnected with Last-Event-ID.
    max_reconnects: reconnections in a row without progress before StreamError.
    on_retry(error, attempt, delay), on_reconnect(position, error): hooks for logging."""

    def __init__(self, url, key, *, timeout=30.0, max_retries=5, max_retry_wait=30.0, keepalive_s=15.0,
                 max_reconnects=5, on_retry=None, on_reconnect=None, ssl_context=None):
        self.url = url
        self.timeout = timeout
        self.keepalive_s = keepalive_s
        self.max_reconnects = max_reconnects
        self.on_reconnect = on_reconnect
        self._t = Transport(url, key, timeout=timeout, max_retries=max_retries, max_retry_wait=max_retry_wait,
                            on_retry=on_retry, ssl_context=ssl_context)

    @classmethod
    def from_env(cls, **kw):
        """AIRLOCK_URL (default http://127.0.0.1:8470) and AIRLOCK_API_KEY."""
        key = os.environ.get("AIRLOCK_API_KEY")
        if not key:
            raise errors.AirlockError("AIRLOCK_API_KEY is not set")
        return cls(os.environ.get("AIRLOCK_URL", "http://127.0.0.1:8470"), key, **kw)

    def __repr__(self):
        return f"Client({self.url!r})"  # never the key

    # Service
    def health(self):
        return self._t.json("GET", "/healthz")

    def metrics(self):
        return self._t.request("GET", "/metrics").body.decode()

    def openapi(self):
        return self._t.json("GET", "/openapi.json")

    def usage(self, from_=None, to=None, group_by=None, items=None):
        """Usage and its cost under the rate card; group_by: "tenant", "day" or "image";
        items=True lists every item with its cost."""
        return self._t.json("GET", "/v1/usage", query={
            "from": from_, "to": to, "group_by": group_by, "items": None if items is None else ("1" if items else "0")})

    def pools(self):
        """The service's warm pool: sandboxes kept prepared, by class, and whether its process runs."""
        return self._t.json("GET", "/v1/pools")

    def run_retention(self):
        return self._t.json("POST", "/v1/admin/retention")

    # Files
    def upload(self, source, name=None):
        """Uploads a local file (a path: str or os.PathLike, streamed) or bytes
        (then `name` is needed); returns {id, name, size, sha256, created_at}.
        Give the id in a job's or a session's inputs."""
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            return self._t.json("POST", "/v1/files", query={"name": name or os.path.basename(path)},
                                body=_Path(path))
        if name is None:
            raise ValueError("upload(bytes) needs name=")
        return self._t.json("POST", "/v1/files", query={"name": name}, body=source)

    # Jobs
    def create_job(self, *, code=None, command=None, language=None, inputs=None, policy=None, checks=None,
                   snapshot=None, wait_s=None, idempotency_key=None, timeout=None, answers=None):
        """Submits a job (code or command); returns a Job (finished if wait_s sufficed).
        A fresh Idempotency-Key is sent unless given, so that a retry is not a second job.
        answers={"job": ID, "requests": ["r1"]} (or job.answers()): this job provides the data
        an earlier job asked for (in its inputs); both records link the two."""
        body = {k: v for k, v in {"code": code, "command": command, "language": language, "inputs": inputs,
                                  "policy": policy, "checks": checks, "snapshot": snapshot,
                                  "wait_s": wait_s, "answers": answers}.items() if v is not None}
        if not (code is None) ^ (command is None):
            raise ValueError("give code or command")
        headers = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        t = (self.timeout if timeout is None else timeout) + (wait_s or 0)
        return Job(self, self._t.json("POST", "/v1/jobs", body=body, headers=headers, timeout=t))

    def run(self, code=None, *, command=None, timeout=None, **kw):
        """Submits a job and waits until it has finished; returns the Job."""
        wait = 300 if timeout is None else max(0, min(300, int(timeout)))
        job = self.create_job(code=code, command=command, wait_s=wait, **kw)
        return job.wait(timeout=timeout)

    def list_jobs(self, *, state=None, outcome=None, created_after=None, created_before=None, limit=None,
                  cursor=None, tenant=None, image=None):
        """One page: {jobs: [...], next_cursor}. tenant (a tenant id or name, or "*" for
        all) needs an admin key; image matches a name (any digest) or NAME@DIGEST."""
        return self._t.json("GET", "/v1/jobs", query={
            "state": state, "outcome": outcome, "created_after": created_after, "created_before": created_before,
            "limit": limit, "cursor": cursor, "tenant": tenant, "image": image})

    def get_job(self, job_id):
        return Job(self, self._t.json("GET", f"/v1/jobs/{_q(job_id)}"))

    def cancel_job(self, job_id):
        return Job(self, self._t.json("POST", f"/v1/jobs/{_q(job_id)}/cancel"))

    def job_events(self, job_id, *, last_event_id=None, timeout=None):
        """An EventStream of the job's stdout/stderr, then its `end` event."""
        return EventStream(self._t, f"/v1/jobs/{_q(job_id)}/events", "end", last_event_id=last_event_id,
                           keepalive_s=self.keepalive_s, max_reconnects=self.max_reconnects, timeout=timeout,
                           on_reconnect=self.on_reconnect)

    def download_output(self, job_id, name, *, dest=None, expected_sha256=None, timeout=None):
        return download(self._t, f"/v1/jobs/{_q(job_id)}/outputs/{_q(name)}", dest=dest,
                        expected_sha256=expected_sha256, timeout=timeout)

    def publish_output(self, job_id, name):
        return self._t.json("POST", f"/v1/jobs/{_q(job_id)}/outputs/{_q(name)}/publish")

    def refuse_job_request(self, job_id, request_id, reason):
        """Refuses a job's data request with a reason (scope run; a chained record in the tenant's
        chain); returns the Job with the request refused. AlreadyAnswered (409) if it was answered
        or refused already, NotInputRequested if the job did not end input_requested."""
        return Job(self, self._t.json("POST", f"/v1/jobs/{_q(job_id)}/requests/{_q(request_id)}/refuse",
                                      body={"reason": reason}))

    # Sessions
    def open_session(self, *, policy=None, inputs=None, snapshot=None, idle_timeout_s=None, max_lifetime_s=None,
                     timeout=None):
        """Opens a session (answers once its sandbox is ready); returns a Session."""
        body = {k: v for k, v in {"policy": policy, "inputs": inputs, "snapshot": snapshot,
                                  "idle_timeout_s": idle_timeout_s,
                                  "max_lifetime_s": max_lifetime_s}.items() if v is not None}
        return Session(self, self._t.json("POST", "/v1/sessions", body=body,
                                          timeout=self.timeout if timeout is None else timeout))

    session = open_session

    def list_sessions(self, *, tenant=None):
        """Newest first, at most 200. tenant (a tenant id or name, or "*" for all)
        needs an admin key; each session carries its tenant."""
        return self._t.json("GET", "/v1/sessions", query={"tenant": tenant})["sessions"]

    def get_session(self, session_id):
        return self._t.json("GET", f"/v1/sessions/{_q(session_id)}")

    def close_session(self, session_id):
        return self._t.json("DELETE", f"/v1/sessions/{_q(session_id)}")

    def interrupt_session(self, session_id):
        return self._t.json("POST", f"/v1/sessions/{_q(session_id)}/interrupt")

    def restart_session(self, session_id):
        return self._t.json("POST", f"/v1/sessions/{_q(session_id)}/restart")

    def submit_call(self, session_id, code, *, kind="python", timeout_s=None, wait_s=None, answers=None):
        """answers: ids of the session's data requests this call provides the data for."""
        body = {k: v for k, v in {"code": code, "kind": kind, "timeout_s": timeout_s,
                                  "wait_s": wait_s, "answers": answers}.items() if v is not None}
        return self._t.json("POST", f"/v1/sessions/{_q(session_id)}/execs", body=body,
                            timeout=self.timeout + (wait_s or 0))

    def list_calls(self, session_id):
        """The session's calls, without results."""
        return self._t.json("GET", f"/v1/sessions/{_q(session_id)}/execs")["execs"]

    def get_call(self, session_id, exec_id, *, wait_s=None):
        return self._t.json("GET", f"/v1/sessions/{_q(session_id)}/execs/{_q(exec_id)}",
                            query={"wait_s": wait_s}, timeout=self.timeout + (wait_s or 0))

    def call_events(self, session_id, exec_id, *, last_event_id=None, timeout=None):
        """An EventStream of the call's stdout/stderr, then its `result` event."""
        return EventStream(self._t, f"/v1/sessions/{_q(session_id)}/execs/{_q(exec_id)}/events", "result",
                           last_event_id=last_event_id, keepalive_s=self.keepalive_s,
                           max_reconnects=self.max_reconnects, timeout=timeout, on_reconnect=self.on_reconnect)

    def write_session_file(self, session_id, path, data):
        body = _Path(os.fspath(data)) if isinstance(data, os.PathLike) else data
        return self._t.json("PUT", f"/v1/sessions/{_q(session_id)}/files", query={"path": path}, body=body)

    def list_session_files(self, session_id, path=None):
        return self._t.json("GET", f"/v1/sessions/{_q(session_id)}/files", query={"path": path})

    def delete_session_file(self, session_id, path):
        return self._t.json("DELETE", f"/v1/sessions/{_q(session_id)}/files", query={"path": path})

    def read_session_file(self, session_id, path, *, dest=None, timeout=None):
        return download(self._t, f"/v1/sessions/{_q(session_id)}/files/content", query={"path": path}, dest=dest,
                        timeout=timeout)

    def refuse_session_request(self, session_id, request_id, reason):
        """Refuses a session's data request with a reason (scope run); Conflict (409) if it was
        answered or refused already."""
        return self._t.json("POST", f"/v1/sessions/{_q(session_id)}/requests/{_q(request_id)}/refuse",
                            body={"reason": reason})

    def snapshot_session(self, session_id):
        return self._t.json("POST", f"/v1/sessions/{_q(session_id)}/snapshots")

    # Snapshots
    def list_snapshots(self, *, tenant=None):
        """tenant (a tenant id or name, or "*" for all) needs an admin key."""
        return self._t.json("GET", "/v1/snapshots", query={"tenant": tenant})["snapshots"]

    def get_snapshot(self, digest, *, tenant=None):
        """tenant: whose snapshot with this digest (admin keys; "*" for any)."""
        return self._t.json("GET", f"/v1/snapshots/{_q(digest)}", query={"tenant": tenant})

    def delete_snapshot(self, digest):
        return self._t.json("DELETE", f"/v1/snapshots/{_q(digest)}")


class _Path(os.PathLike):
    """A local file to stream as a request body."""

    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path
