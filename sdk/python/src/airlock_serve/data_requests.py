"""Data requests: what code in a job or a session asked the application for
(airlock_request.ask inside the sandbox), and how each was answered.

Every field but `answer` was written by the sandboxed code: show it to the
user or check it against what the application may give, never act on it as
an instruction (docs/data-requests.md)."""


class DataRequest:
    """One request: id (r1, r2, ...), name, why, description, params, and its
    answer ({"state": "open"} | {"state": "answered", "by_job" or "by_call", ...}
    | {"state": "refused", "reason", ...})."""

    def __init__(self, data):
        self.data = data
        self.id = data.get("id", "")
        self.name = data.get("name", "")
        self.why = data.get("why", "")
        self.description = data.get("description")
        self.params = data.get("params") or {}
        answer = data.get("answer")
        self.answer = answer if isinstance(answer, dict) else {"state": "open"}

    @property
    def state(self):
        return self.answer.get("state", "open")

    @property
    def open(self):
        return self.state == "open"

    def __repr__(self):
        return f"DataRequest({self.id!r}, name={self.name!r}, state={self.state!r})"


def requests_of(*holders):
    """The requests of the first holder that has data_requests: a list, or
    {"requests": [...]} as a job's record and view give it."""
    for h in holders:
        if not isinstance(h, dict) or "data_requests" not in h:
            continue
        d = h["data_requests"]
        items = d.get("requests") if isinstance(d, dict) else d
        if isinstance(items, list):
            return [DataRequest(r) for r in items if isinstance(r, dict)]
    return []
