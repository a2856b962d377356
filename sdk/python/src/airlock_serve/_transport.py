"""HTTP for the client: one connection per request (http.client), the API
key as a Bearer token, JSON in and out, errors turned into typed exceptions,
and 429 answers (and 503 answers with Retry-After) retried after their Retry-After, a bounded
number of times.
"""
import http.client
import json
import os
import socket
import ssl
import time
import urllib.parse

from . import errors

_MAX_ERROR_BODY = 1 << 20  # of an error answer, read at most


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case names
        self.body = body

    def json(self):
        return json.loads(self.body) if self.body else None


def _lower_headers(message):
    return {k.lower(): v for k, v in message.items()}


class Transport:
    def __init__(self, url, key, *, timeout, max_retries, max_retry_wait, on_retry=None, ssl_context=None):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"url: want http://host:port or https://host:port, got {url!r}")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = parsed.port
        self.prefix = parsed.path.rstrip("/")
        self._key = key
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.on_retry = on_retry
        self._ssl = ssl_context

    def url_for(self, path, query=None):
        target = self.prefix + path
        if query:
            items = [(k, v) for k, v in query.items() if v is not None]
            if items:
                target += "?" + urllib.parse.urlencode(items)
        return target

    def _connect(self, timeout):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self._ssl or ssl.create_default_context())
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _headers(self, extra):
        h = {"Accept": "application/json", "User-Agent": "airlock-serve-client/0.1"}
        if self._key:
            h["Authorization"] = f"Bearer {self._key}"
        h.update(extra or {})
        return h

    def open(self, method, path, *, query=None, body=None, headers=None, timeout=None, ok=(200, 201)):
        """Sends a request and returns (connection, response) with the body unread.
        Raises the typed error of an error answer; retries a 429, and a 503 with Retry-After."""
        timeout = self.timeout if timeout is None else timeout
        if hasattr(body, "read"):
            body = body.read()  # once: a retry sends the same bytes
        attempt = 0
        while True:
            payload, extra = _encode(body)
            all_headers = self._headers({**extra, **(headers or {})})
            conn = self._connect(timeout)
            try:
                conn.request(method, self.url_for(path, query), body=payload, headers=all_headers)
                resp = conn.getresponse()
            except BaseException as e:
                conn.close()
                _close_payload(payload)
                if isinstance(e, (OSError, http.client.HTTPException)):
                    raise _transport_error(e, method, path, timeout) from e
                raise
            _close_payload(payload)
            if resp.status in ok:
                return conn, resp
            try:
                data = resp.read(_MAX_ERROR_BODY)
            except (OSError, http.client.HTTPException) as e:
                raise _transport_error(e, method, path, timeout) from e
            finally:
                conn.close()
            err = _error_from(resp.status, _lower_headers(resp.headers), data)
            if err.retryable and attempt < self.max_retries:
                attempt += 1
                wait = errors.parse_retry_after(err.headers.get("retry-after"))
                wait = min(self.max_retry_wait, 2 ** (attempt - 1) if wait is None else wait)
                if self.on_retry:
                    self.on_retry(err, attempt, wait)
                time.sleep(wait)
                continue
            raise err

    def request(self, method, path, *, query=None, body=None, headers=None, timeout=None, ok=(200, 201)):
        conn, resp = self.open(method, path, query=query, body=body, headers=headers, timeout=timeout, ok=ok)
        try:
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise _transport_error(e, method, path, self.timeout if timeout is None else timeout) from e
        finally:
            conn.close()
        return Response(resp.status, _lower_headers(resp.headers), data)

    def json(self, method, path, **kw):
        return self.request(method, path, **kw).json()


def _encode(body):
    """(payload, headers) for http.client: bytes, a file opened afresh from a
    path at each attempt (streamed), or JSON."""
    if body is None:
        return None, {}
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body), {"Content-Type": "application/octet-stream"}
    if isinstance(body, str):
        return body.encode(), {"Content-Type": "application/octet-stream"}
    if isinstance(body, os.PathLike):
        f = open(body, "rb")
        return f, {"Content-Type": "application/octet-stream", "Content-Length": str(os.fstat(f.fileno()).st_size)}
    return json.dumps(body).encode(), {"Content-Type": "application/json"}


def _close_payload(payload):
    # The only file objects sent are those _encode opened from a path.
    if hasattr(payload, "read"):
        payload.close()


def _error_from(status, headers, data):
    code, message = "", data.decode("utf-8", "replace")[:500]
    try:
        parsed = json.loads(data)
        code = parsed["error"]["code"]
        message = parsed["error"]["message"]
    except (ValueError, KeyError, TypeError):
        pass
    if not isinstance(code, str) or not isinstance(message, str):
        code, message = "", repr(message)[:500]
    return errors.error_for(status, code, message, headers)


def _transport_error(e, method, path, timeout):
    """The SDK's error for an OSError or HTTPException of the connection."""
    if isinstance(e, (socket.timeout, TimeoutError)):
        return errors.AirlockTimeout(f"{method} {path}: no answer within {timeout} s")
    return errors.ConnectionFailed(f"{method} {path}: {e!r}")
