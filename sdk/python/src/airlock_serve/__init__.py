"""airlock_serve: the Python client of airlock serve (docs/sdk-python.md).

    from airlock_serve import Client
    client = Client("http://127.0.0.1:8470", key)
    job = client.run("print(6 * 7)", language="python")
    with client.session() as s:
        print(s.run("x = 6 * 7\\nx").value)
"""
from ._events import Event, EventStream
from .client import OPERATIONS, Client
from .errors import (
    AirlockError, ApiError, BadRequest, BadJson, BadName, BadPath, InputRejected, TypeNotAllowed,
    Unauthenticated, Forbidden, ForbiddenOrigin, NotFound, Conflict, Busy, NotFinished, NotPublishable,
    SessionClosed, Starting, NotAFile, NotADirectory, AlreadyAnswered, NotInputRequested, WorkerNode, NoWorker, NodeUnreachable, NodeTimeout, TooLarge, BodyTooLarge, StorageQuota,
    SnapshotRefused, HeaderTooLarge, TooManyRequests, Overloaded, TooManySessions, ServerError,
    InternalError, SandboxError, Unavailable, Stopping, InsufficientStorage, AirlockTimeout,
    ConnectionFailed, StreamError, IntegrityError,
)
from .errors import ERRORS
from .data_requests import DataRequest
from .jobs import Job
from .sessions import CallResult, Session

__version__ = "0.1.0"
__all__ = [
    "OPERATIONS", "ERRORS", "Client", "Job", "Session", "CallResult", "DataRequest", "Event", "EventStream",
    "AirlockError", "ApiError", "BadRequest", "BadJson", "BadName", "BadPath", "InputRejected",
    "TypeNotAllowed", "Unauthenticated", "Forbidden", "ForbiddenOrigin", "NotFound", "Conflict", "Busy", "NotFinished",
    "NotPublishable", "SessionClosed", "Starting", "NotAFile", "NotADirectory", "AlreadyAnswered", "NotInputRequested", "WorkerNode", "NoWorker", "NodeUnreachable", "NodeTimeout", "TooLarge",
    "BodyTooLarge", "StorageQuota", "SnapshotRefused", "HeaderTooLarge", "TooManyRequests",
    "Overloaded", "TooManySessions", "ServerError", "InternalError", "SandboxError", "Unavailable",
    "Stopping", "InsufficientStorage", "AirlockTimeout", "ConnectionFailed", "StreamError",
    "IntegrityError",
]
