"""Exceptions of the SDK: one class per error code of the API, and a few of
the client's own (timeouts, dead streams, a download whose hash is wrong).

Every error the service answers is {"error": {"code", "message"}} with an
HTTP status; `error_for` turns it into the class of that code, or, for a
code this SDK does not know yet, into the class of its status.
"""


class AirlockError(Exception):
    """Anything this SDK raises."""


class ApiError(AirlockError):
    """The service answered an error. `status`, `code` and `message` are what it said."""

    status = 0
    code = ""

    def __init__(self, status, code, message, headers=None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})

    @property
    def retryable(self):
        """Nothing was done and the service said when to try again: a 429, or a 503 with Retry-After."""
        if self.status == 429:
            return True
        return self.status == 503 and parse_retry_after(self.headers.get("retry-after")) is not None


# 400
class BadRequest(ApiError):
    """A field of the request is wrong (the message names it)."""


class BadJson(BadRequest):
    """The body was not JSON."""


class BadName(BadRequest):
    """A file name was refused."""


class BadPath(BadRequest):
    """A session path was refused, or it passes through a symlink or mount."""


class InputRejected(BadRequest):
    """An input file or a policy.allow entry was refused."""


class TypeNotAllowed(BadRequest):
    """The detected type of a file is not among the policy's types."""


# 401, 403, 404
class Unauthenticated(ApiError):
    """No key, or an unknown or revoked one."""


class Forbidden(ApiError):
    """The key lacks the scope the route needs."""


class ForbiddenOrigin(Forbidden):
    """/mcp refused a request whose Origin or Host is not loopback (DNS rebinding protection)."""


class WorkerNode(Forbidden):
    """A worker node of a cluster answers only what an API node forwards: send requests to an API node."""


class NotFound(ApiError):
    """No such object for this tenant (another tenant's objects answer the same)."""


# 409
class Conflict(ApiError):
    """The object is not in a state that allows this."""


class Busy(Conflict):
    """16 calls already wait in the session."""


class NotFinished(Conflict):
    """The job has not finished."""


class NotPublishable(Conflict):
    """Only outputs of a job that succeeded can be published."""


class SessionClosed(Conflict):
    """The session is closed or closing (the message names the reason)."""


class Starting(Conflict):
    """The session's sandbox is still starting."""


class NotAFile(Conflict):
    """A directory, fifo or other non-regular file where a file is expected."""


class NotADirectory(Conflict):
    """A part of the path is not a directory."""


class AlreadyAnswered(Conflict):
    """A job's or a session's data request was answered or refused already."""


class NotInputRequested(Conflict):
    """The job did not end input_requested: it has no requests to answer or refuse."""


# 413, 422, 431
class TooLarge(ApiError):
    """Over a size limit of the policy, or the workspace is full."""


class BodyTooLarge(TooLarge):
    """The request body is over the service's max_upload_mb."""


class StorageQuota(TooLarge):
    """Beyond the tenant's storage quota."""


class SnapshotRefused(ApiError):
    """The snapshot is over a limit or the quota, or the tree changed under the walk."""


class HeaderTooLarge(ApiError):
    """The request's header was too large."""


# 429
class TooManyRequests(ApiError):
    """The service is full for now. `retry_after` is its hint in seconds (or None)."""

    @property
    def retry_after(self):
        return parse_retry_after(self.headers.get("retry-after"))


class Overloaded(TooManyRequests):
    """The job queue, or the tenant's share of it, is full."""


class TooManySessions(TooManyRequests):
    """The service's or the tenant's sessions are all open."""


# 5xx
class ServerError(ApiError):
    """The service failed."""


class InternalError(ServerError):
    """An internal error of the service."""


class SandboxError(ServerError):
    """airlock could not make or run the sandbox (never the code's fault)."""


class Unavailable(ServerError):
    """The service is stopping or cannot serve now."""


class Stopping(Unavailable):
    """The service is stopping."""


class NoWorker(Unavailable):
    """No worker node of the cluster has a free session slot now; try again."""


class StoreUnavailable(Unavailable):
    """The service's store cannot be reached now; it is retried after its Retry-After."""


class NodeUnreachable(ServerError):
    """The API node could not reach the worker node that holds the session or job (502)."""


class NodeTimeout(ServerError):
    """The worker node that holds the session or job did not answer in time (504)."""


class InsufficientStorage(ServerError):
    """The service's disk is full; nothing was stored, try again later."""


# The client's own.
class AirlockTimeout(AirlockError, TimeoutError):
    """A request, a wait or a stream took longer than its timeout."""


class ConnectionFailed(AirlockError, ConnectionError):
    """The service could not be reached, or the connection broke."""


class StreamError(AirlockError):
    """An event stream could not be resumed (after max_reconnects attempts without progress)."""


class IntegrityError(AirlockError):
    """A download's bytes do not have the sha256 the service announced."""


# Every code the API answers (src/service, src/api, src/http and src/sessions), to its class.
ERRORS = {
    "bad_request": BadRequest,
    "bad_json": BadJson,
    "bad_name": BadName,
    "bad_path": BadPath,
    "input_rejected": InputRejected,
    "type_not_allowed": TypeNotAllowed,
    "unauthenticated": Unauthenticated,
    "forbidden": Forbidden,
    "forbidden_origin": ForbiddenOrigin,
    "worker_node": WorkerNode,
    "not_found": NotFound,
    "busy": Busy,
    "not_finished": NotFinished,
    "not_publishable": NotPublishable,
    "session_closed": SessionClosed,
    "starting": Starting,
    "not_a_file": NotAFile,
    "not_a_directory": NotADirectory,
    "already_answered": AlreadyAnswered,
    "not_input_requested": NotInputRequested,
    "too_large": TooLarge,
    "body_too_large": BodyTooLarge,
    "storage_quota": StorageQuota,
    "snapshot_refused": SnapshotRefused,
    "header_too_large": HeaderTooLarge,
    "overloaded": Overloaded,
    "too_many_sessions": TooManySessions,
    "internal": InternalError,
    "sandbox_error": SandboxError,
    "unavailable": Unavailable,
    "stopping": Stopping,
    "no_worker": NoWorker,
    "store_unavailable": StoreUnavailable,
    "node_unreachable": NodeUnreachable,
    "node_timeout": NodeTimeout,
    "insufficient_storage": InsufficientStorage,
}

_BY_STATUS = {
    400: BadRequest,
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    422: SnapshotRefused,
    429: TooManyRequests,
    431: HeaderTooLarge,
    503: Unavailable,
    507: InsufficientStorage,
}


def error_for(status, code, message, headers=None):
    cls = ERRORS.get(code)
    if cls is None:
        cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, code, message, headers)


def parse_retry_after(value):
    """Retry-After as seconds: a number of seconds or an HTTP date; None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        import email.utils
        import time

        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None
