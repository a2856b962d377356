import pytest

from harness import Keeper


@pytest.fixture(params=["exec", "fork"])
def keeper(request, tmp_path):
    k = Keeper(tmp_path, fork=request.param == "fork")
    k.wait_for("ready")
    yield k
    k.close()
