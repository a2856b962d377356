"""Fixtures of the Python SDK suite: a real `airlock serve` on loopback
(AIRLOCK_BINARY, set by tests/pysdk/tests.cmake), keys of two tenants, and
the TCP proxy that breaks connections."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("AIRLOCK_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SOURCE, "sdk", "python", "src"))

import airlock_service  # noqa: E402
from proxy import Proxy  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if not airlock_service.binary() or not os.access(airlock_service.binary(), os.X_OK):
        skip = pytest.mark.skip(reason="AIRLOCK_BINARY is not set to the built airlock")
        for item in items:
            item.add_marker(skip)


class Keys:
    pass


@pytest.fixture(scope="session")
def service():
    s = airlock_service.Service(extra_args=_keepalive_args())
    keys = Keys()
    keys.alpha = s.key("alpha")
    keys.alpha_reader = s.key("alpha", "read")
    keys.alpha_admin = s.key("alpha", "admin")
    keys.beta = s.key("beta")
    s.keys = keys
    s.start()
    yield s
    s.stop()


def _keepalive_args():
    """--event-keepalive-ms 200 when this airlock knows it (the SSE keep-alive)."""
    import subprocess

    out = subprocess.run([airlock_service.binary(), "serve", "--help"], capture_output=True, text=True)
    return ["--event-keepalive-ms", "200"] if "--event-keepalive-ms" in out.stdout + out.stderr else []


@pytest.fixture
def client(service):
    from airlock_serve import Client

    return Client(service.url, service.keys.alpha, timeout=60)


@pytest.fixture
def proxy(service):
    p = Proxy(service.port)
    yield p
    p.close()


def pytest_sessionfinish(session, exitstatus):
    # Leave nothing behind: pytest keeps its last temporary directories (the
    # venvs of test_install.py among them) unless they are removed here.
    import shutil

    factory = getattr(session.config, "_tmp_path_factory", None)
    base = getattr(factory, "_basetemp", None)
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)
        current = base.parent / "pytest-current"
        if current.is_symlink() and not current.exists():
            current.unlink()
