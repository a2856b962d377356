"""Downloads whose sha256 is checked against the X-Content-SHA256 the
service sends (and, for a job's output, against its record's manifest):
the bytes are hashed as they arrive and a mismatch raises IntegrityError.
Into a file they go to a temporary name beside it first, renamed into
place only once the hash is right."""
import hashlib
import http.client
import os
import tempfile

from . import errors
from ._transport import _transport_error

_CHUNK = 1 << 16


def download(transport, path, *, query=None, dest=None, expected_sha256=None, timeout=None):
    """The file's bytes (dest None), or writes it to dest and returns dest."""
    conn, resp = transport.open("GET", path, query=query, timeout=timeout)
    sink = None
    try:
        announced = (resp.getheader("X-Content-SHA256") or "").strip().lower()
        if not announced:
            raise errors.IntegrityError(f"GET {path}: the answer has no X-Content-SHA256")
        if expected_sha256 and announced != expected_sha256.lower():
            raise errors.IntegrityError(
                f"GET {path}: the service announces sha256 {announced}, the record says {expected_sha256}")
        digest = hashlib.sha256()
        if dest is None:
            parts = []
            write = parts.append
        else:
            directory = os.path.dirname(os.path.abspath(dest))
            fd, tmp = tempfile.mkstemp(prefix=".airlock-", dir=directory)
            sink = (os.fdopen(fd, "wb"), tmp)
            write = sink[0].write
        try:
            while True:
                chunk = resp.read(_CHUNK)
                if not chunk:
                    break
                digest.update(chunk)
                write(chunk)
        except (OSError, http.client.HTTPException) as e:
            raise _transport_error(e, "GET", path, transport.timeout if timeout is None else timeout) from e
        got = digest.hexdigest()
        if got != announced:
            raise errors.IntegrityError(f"GET {path}: received bytes have sha256 {got}, "
                                        f"the service announced {announced}")
        if dest is None:
            return b"".join(parts)
        sink[0].close()
        os.replace(sink[1], dest)
        sink = None
        return dest
    finally:
        conn.close()
        if sink is not None:
            sink[0].close()
            os.unlink(sink[1])
