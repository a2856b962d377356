"""airlock_serve: the Python client of airlock serve (docs/sdk-python.md).

    from airlock_serve import Client
    client = Client("http://127.0.0.1:8470", key)
    job = client.run("print(6 * 7)", language="python")
    with client.session() as s:
        print(s.run("x = 6 * 7\\nx").value)
"""
from .client import OPERATIONS, Client
from .errors import *  # noqa: F401,F403  (the exception classes)
from .errors import ERRORS, AirlockError, ApiError
from ._events import Event, EventStream
from .jobs import Job
from .sessions import CallResult, Session

__version__ = "0.1.0"
