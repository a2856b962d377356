"""A job of airlock serve: one command or program in a fresh sandbox."""
import time

from . import errors
from .data_requests import requests_of


class Job:
    """The job as last read (`data`, the API's JSON), with what can be done to it."""

    def __init__(self, client, data):
        self._client = client
        self.data = data

    id = property(lambda self: self.data["id"])
    state = property(lambda self: self.data.get("state"))
    outcome = property(lambda self: self.data.get("outcome"))
    record = property(lambda self: self.data.get("record") or {})
    finished = property(lambda self: self.state == "finished")

    @property
    def stdout(self):
        return _stream_text(self.record.get("stdout"))

    @property
    def stderr(self):
        return _stream_text(self.record.get("stderr"))

    @property
    def outputs(self):
        """The output manifest: name, size, sha256, type, verdict (and reason) of each."""
        return self.record.get("outputs") or []

    @property
    def input_requested(self):
        """The code asked the application for data and ended (outcome input_requested)."""
        return self.outcome == "input_requested"

    @property
    def data_requests(self):
        """The job's data requests (DataRequest), each with its answer; [] if it asked nothing."""
        return requests_of(self.data, self.record)

    @property
    def refused_requests(self):
        """Requests the service did not read (over the limits): [{reason, bytes}]."""
        d = self.record.get("data_requests")
        return (d.get("refused") or []) if isinstance(d, dict) else []

    def answers(self, *request_ids):
        """The `answers` of a follow-up job that provides these requests' data
        (default: every open request): client.run(..., answers=job.answers())."""
        ids = list(request_ids) or [r.id for r in self.data_requests if r.open]
        return {"job": self.id, "requests": ids}

    def refuse(self, request_id, reason):
        """Refuses one of the job's requests with a reason (recorded); returns self, as the service now shows it."""
        self.data = self._client.refuse_job_request(self.id, request_id, reason).data
        return self

    def refresh(self):
        self.data = self._client.get_job(self.id).data
        return self

    def events(self, last_event_id=None, timeout=None):
        """Live stdout/stderr events, then the final `end` event (see EventStream)."""
        return self._client.job_events(self.id, last_event_id=last_event_id, timeout=timeout)

    def wait(self, timeout=None):
        """Waits until the job has finished (AirlockTimeout after `timeout` seconds); returns self."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.finished:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise errors.AirlockTimeout(f"job {self.id} did not finish within {timeout} s")
            for _ in self.events(timeout=left):
                pass
            self.refresh()
        return self

    def cancel(self):
        self.data = self._client.cancel_job(self.id).data
        return self

    def output(self, name, dest=None):
        """An accepted output's bytes (or written to dest), its sha256 checked
        against X-Content-SHA256 and the record's manifest."""
        expected = next((o.get("sha256") for o in self.outputs if o.get("name") == name), None)
        return self._client.download_output(self.id, name, dest=dest, expected_sha256=expected)

    def publish(self, name):
        return self._client.publish_output(self.id, name)

    def __repr__(self):
        return f"Job({self.id!r}, state={self.state!r}, outcome={self.outcome!r})"


def _stream_text(field):
    """The text of a record's stdout/stderr ({text, encoding}); base64 ones decoded (bytes as UTF-8, replaced)."""
    if not field:
        return ""
    if isinstance(field, str):
        return field
    if field.get("encoding") == "base64":
        import base64

        return base64.b64decode(field.get("text", "")).decode("utf-8", "replace")
    return field.get("text", "")
