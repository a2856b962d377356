"""`pip install sdk/python` into a fresh venv with no network at all (a
network namespace with only loopback), then one job through the installed
package against a real airlock serve in the same namespace."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import HERE, SOURCE


def _in_empty_netns(script, **kw):
    # unshare --net: a new network namespace, whose only device is lo.
    return subprocess.run(["unshare", "--net", "--", "/bin/bash", "-c", "set -e\nip link set lo up\n" + script],
                          capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture
def venv(tmp_path):
    if subprocess.run([sys.executable, "-c", "import ensurepip"], capture_output=True).returncode:
        pytest.skip("python3-venv is not installed (scripts/test-setup/40-pysdk.sh)")
    v = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(v)], check=True, timeout=300)
    return v


def _copy_sdk(tmp_path):
    src = tmp_path / "sdk-python"
    shutil.copytree(os.path.join(SOURCE, "sdk", "python"), src,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "dist", "*.egg-info"))
    return src


def test_pip_installs_the_sdk_without_network_and_it_runs_a_job(venv, tmp_path):
    src = _copy_sdk(tmp_path)
    env = dict(os.environ, PYTHONPATH="", PIP_NO_CACHE_DIR="1")
    r = _in_empty_netns(f"""
ip -o link show | awk '{{print $2}}'
{venv}/bin/pip install {src}
cd /
AIRLOCK_BINARY={os.environ['AIRLOCK_BINARY']} {venv}/bin/python {HERE}/install_check.py {venv}
""", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "lo:"  # nothing but loopback to reach
    assert "Successfully installed airlock-serve-client-0.1.0" in r.stdout
    assert f"installed-sdk-ran succeeded 42 {venv}/lib/" in r.stdout


def test_a_backend_from_pypi_could_not_be_installed_here(venv, tmp_path):
    # The control: the usual setuptools build requirement needs the network,
    # which this namespace does not have, so the in-tree backend is what
    # makes the offline install work.
    src = _copy_sdk(tmp_path)
    py = (src / "pyproject.toml").read_text()
    py = py.replace('requires = []', 'requires = ["setuptools>=61"]')
    py = py.replace('build-backend = "airlock_build"\nbackend-path = ["build_backend"]',
                    'build-backend = "setuptools.build_meta"')
    (src / "pyproject.toml").write_text(py)
    r = _in_empty_netns(f"{venv}/bin/pip install --retries 0 --timeout 3 {src}",
                        env=dict(os.environ, PIP_NO_CACHE_DIR="1"))
    assert r.returncode != 0
    assert "setuptools>=61" in r.stdout + r.stderr


def test_the_wheel_has_metadata_and_a_record_of_every_file(tmp_path):
    sys.path.insert(0, os.path.join(SOURCE, "sdk", "python", "build_backend"))
    try:
        import airlock_build
    finally:
        sys.path.pop(0)
    import base64
    import hashlib
    import zipfile

    name = airlock_build.build_wheel(str(tmp_path))
    assert name == "airlock_serve_client-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as z:
        names = set(z.namelist())
        record = z.read("airlock_serve_client-0.1.0.dist-info/RECORD").decode().splitlines()
        assert "airlock_serve/client.py" in names and "airlock_serve/py.typed" in names
        assert "Name: airlock-serve-client" in z.read("airlock_serve_client-0.1.0.dist-info/METADATA").decode()
        listed = set()
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            listed.add(path)
            if path.endswith("RECORD"):
                continue
            data = z.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={want}" and int(size) == len(data)
        assert listed == names
