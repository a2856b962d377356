"""Server-Sent Events of airlock serve, resumed across dropped connections.

A job's stream (GET /v1/jobs/{id}/events) and a session call's stream
(GET /v1/sessions/{id}/execs/{exec}/events) send `stdout` and `stderr`
events whose id is the number of output bytes sent so far, then one final
event (`end` for a job, `result` with id `done` for a call). The service
sends the comment `: keep-alive` after a quiet interval; a stream on which
nothing at all arrives for three intervals is taken as dead. Either way, a
broken stream is opened again with Last-Event-ID set to the last offset
seen, and events that end at or before it are dropped, so each byte of
output is yielded exactly once.
"""
import http.client
import json
import time

from . import errors


class Event:
    """One event: `kind` is stdout, stderr or the final event's name; `data` its JSON."""

    __slots__ = ("kind", "id", "data")

    def __init__(self, kind, id, data):
        self.kind = kind
        self.id = id
        self.data = data

    @property
    def text(self):
        return self.data.get("text", "") if isinstance(self.data, dict) else ""

    def __repr__(self):
        return f"Event({self.kind!r}, id={self.id!r}, data={self.data!r})"


_KEEPALIVE = object()


def parse_sse(readline):
    """Yields Events, and _KEEPALIVE for each comment, from a readline() of bytes."""
    kind, ident, data = "", None, []
    while True:
        raw = readline()
        if not raw:
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line == "":
            if data or kind:
                text = "\n".join(data)
                try:
                    payload = json.loads(text) if text else {}
                except ValueError:
                    payload = {"raw": text}
                yield Event(kind or "message", ident, payload)
            kind, ident, data = "", None, []
            continue
        if line.startswith(":"):
            yield _KEEPALIVE
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            kind = value
        elif field == "id":
            ident = value


class EventStream:
    """Iterates the events of one stream, reconnecting as described above.

    `keepalive_s` is the service's keep-alive interval (its
    event_keepalive_ms); `max_reconnects` bounds the reconnections in a row
    that bring nothing new; `timeout` bounds the whole iteration."""

    def __init__(self, transport, path, final_event, *, last_event_id=None, keepalive_s=15.0,
                 max_reconnects=5, timeout=None, on_reconnect=None):
        self._t = transport
        self._path = path
        self._final = final_event
        # The byte offset reached; "done" (a call's final id) means everything was delivered.
        self._done_already = str(last_event_id) == "done"
        self.position = 0 if self._done_already or not last_event_id else int(last_event_id)
        self.keepalive_s = keepalive_s
        self.max_reconnects = max_reconnects
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._on_reconnect = on_reconnect
        self.reconnects = 0
        self.finished = False

    def _left(self):
        if self._deadline is None:
            return None
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise errors.AirlockTimeout(f"GET {self._path}: the stream did not end within its timeout")
        return left

    def __iter__(self):
        failures = 0
        while not self.finished:
            left = self._left()
            dead_after = 3 * self.keepalive_s if left is None else min(3 * self.keepalive_s, left)
            headers = {"Accept": "text/event-stream"}
            if self._done_already:
                headers["Last-Event-ID"] = "done"
            elif self.position:
                headers["Last-Event-ID"] = str(self.position)
            conn = None
            try:
                conn, resp = self._t.open("GET", self._path, headers=headers, timeout=dead_after, ok=(200, 204))
                if resp.status == 204:  # the final event was already delivered
                    self.finished = True
                    return
                for ev in parse_sse(resp.readline):
                    self._left()  # keep-alives keep the socket busy: the deadline is checked here too
                    if ev is _KEEPALIVE:
                        continue
                    if ev.kind in ("stdout", "stderr"):
                        ev = self._new_part(ev)
                        if ev is None:
                            continue
                        failures = 0
                        yield ev
                    elif ev.kind == self._final:
                        self.finished = True
                        yield ev
                        return
                    else:
                        yield ev
            except (errors.AirlockTimeout, errors.ConnectionFailed, OSError, http.client.HTTPException) as e:
                last_error = e
            else:
                last_error = errors.ConnectionFailed(f"GET {self._path}: the stream ended before its final event")
            finally:
                if conn is not None:
                    conn.close()
            if self.finished:
                return
            self._left()
            failures += 1
            if failures > self.max_reconnects:
                raise errors.StreamError(
                    f"GET {self._path}: {failures} connections in a row brought nothing new "
                    f"(last: {last_error})") from last_error
            self.reconnects += 1
            if self._on_reconnect:
                self._on_reconnect(self.position, last_error)
            time.sleep(min(0.05 * 2 ** failures, 2.0))

    def _new_part(self, ev):
        """The part of an output event not yet delivered, or None."""
        try:
            end = int(ev.id)
            begin = int(ev.data.get("offset", end))
        except (TypeError, ValueError):
            return ev
        if end <= self.position:
            return None
        if begin < self.position:
            cut = self.position - begin
            ev.data = dict(ev.data, offset=self.position,
                           text=ev.text.encode("utf-8")[cut:].decode("utf-8", "replace"))
        self.position = end
        return ev
