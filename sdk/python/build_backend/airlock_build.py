"""A PEP 517 build backend for this SDK that needs only the standard library.

pip builds a project in an isolated environment and first installs what
[build-system] requires; with `requires = []` and this backend in the tree
(`backend-path`), nothing is downloaded, so `pip install sdk/python` works on
a machine without network. It makes a pure-Python wheel (a zip with the
package, METADATA, WHEEL and RECORD), an editable wheel (a .pth file naming
src/) and an sdist, from the [project] table of pyproject.toml.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import time
import tomllib
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TAG = "py3-none-any"


def _project():
    with open(os.path.join(_ROOT, "pyproject.toml"), "rb") as f:
        data = tomllib.load(f)
    project = data["project"]
    package = data["tool"]["airlock-build"]["package"]
    return project, package


def _dist_name(name):
    # The file-name form of a distribution name (PEP 427, PEP 503).
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata(project):
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3')}",
    ]
    for dep in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    readme = project.get("readme")
    body = ""
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(_ROOT, readme), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _wheel_file():
    return f"Wheel-Version: 1.0\nGenerator: airlock_build\nRoot-Is-Purelib: true\nTag: {_TAG}\n"


def _date_time():
    # Reproducible entries: SOURCE_DATE_EPOCH if set, else the zip epoch.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return time.gmtime(max(int(epoch), 315532800))[:6]
    return (1980, 1, 1, 0, 0, 0)


def _package_files(package):
    base = os.path.join(_ROOT, "src")
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(base, package)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(dirpath, name)
            out.append((os.path.relpath(full, base).replace(os.sep, "/"), full))
    return out


def _write_wheel(wheel_directory, entries):
    """entries: [(archive name, bytes)]; adds the dist-info files and RECORD."""
    project, _ = _project()
    stem = f"{_dist_name(project['name'])}-{project['version']}"
    info = f"{stem}.dist-info"
    entries = list(entries) + [
        (f"{info}/METADATA", _metadata(project).encode()),
        (f"{info}/WHEEL", _wheel_file().encode()),
    ]
    record = []
    for name, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    filename = f"{stem}-{_TAG}.whl"
    when = _date_time()
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            zi = zipfile.ZipInfo(name, when)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project, _ = _project()
    info = f"{_dist_name(project['name'])}-{project['version']}.dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(project))
    with open(os.path.join(metadata_directory, info, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _, package = _project()
    entries = []
    for name, full in _package_files(package):
        with open(full, "rb") as f:
            entries.append((name, f.read()))
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    project, _ = _project()
    pth = os.path.join(_ROOT, "src") + "\n"
    return _write_wheel(wheel_directory, [(f"{_dist_name(project['name'])}.pth", pth.encode())])


def build_sdist(sdist_directory, config_settings=None):
    project, package = _project()
    stem = f"{_dist_name(project['name'])}-{project['version']}"
    files = ["pyproject.toml", "build_backend/airlock_build.py"]
    if project.get("readme"):
        files.append(project["readme"])
    files += ["src/" + name for name, _ in _package_files(package)]
    filename = f"{stem}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in files:
            with open(os.path.join(_ROOT, rel), "rb") as f:
                data = f.read()
            ti = tarfile.TarInfo(f"{stem}/{rel}")
            ti.size = len(data)
            ti.mode = 0o644
            ti.mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
            tar.addfile(ti, io.BytesIO(data))
        pkg_info = _metadata(project).encode()
        ti = tarfile.TarInfo(f"{stem}/PKG-INFO")
        ti.size = len(pkg_info)
        ti.mode = 0o644
        tar.addfile(ti, io.BytesIO(pkg_info))
    return filename
