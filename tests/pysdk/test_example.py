"""examples/agent/python/analyst.py against a real airlock serve: three
session turns, the chart back as PNG bytes, the same summary as the job
example (examples/analyst.py)."""
import os
import struct
import subprocess

from conftest import SOURCE


def test_the_analyst_example_runs_in_three_turns(service, tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "examples", "agent", "python", "analyst.py"),
                        "--url", service.url, "--out", str(out)],
                       env=dict(os.environ, AIRLOCK_API_KEY=service.keys.alpha), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    png = (out / "chart.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])  # IHDR: figsize (7, 4) at 100 dpi
    assert (width, height) == (700, 400)
    summary = (out / "summary.csv").read_text().splitlines()
    assert summary[0] == "region,revenue_jan,revenue_feb,revenue_total"
    assert "turn 3, the answer: " in r.stdout and "top region" in r.stdout
    assert "3 calls in its record" in r.stdout


def test_the_example_agrees_with_the_job_example(service, tmp_path):
    # The job example run directly on the host gives the same summary.csv.
    host = tmp_path / "host"
    subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "examples", "analyst.py")], check=True, timeout=300,
                   env=dict(os.environ, AIRLOCK_INPUTS=os.path.join(SOURCE, "examples"), AIRLOCK_OUTPUT=str(host),
                            MPLBACKEND="Agg"), capture_output=True)
    out = tmp_path / "out"
    subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "examples", "agent", "python", "analyst.py"),
                    "--url", service.url, "--out", str(out)], check=True, timeout=300,
                   env=dict(os.environ, AIRLOCK_API_KEY=service.keys.alpha), capture_output=True)
    assert (out / "summary.csv").read_text() == (host / "summary.csv").read_text()


def test_the_quick_start_of_the_docs_runs(service, tmp_path, monkeypatch):
    import re
    import shutil

    with open(os.path.join(SOURCE, "docs", "sdk-python.md")) as f:
        code = re.search(r"## Quick start\n\n```python\n(.*?)```", f.read(), re.S).group(1)
    code = code.replace('Client("http://127.0.0.1:8470", key)', "Client(URL, key)")
    shutil.copy(os.path.join(SOURCE, "examples", "sales_jan.csv"), tmp_path / "sales.csv")
    monkeypatch.chdir(tmp_path)
    scope = {"key": service.keys.alpha, "URL": service.url}
    exec(compile(code, "docs/sdk-python.md", "exec"), scope)
    assert scope["job"].outcome == "succeeded" and scope["csv"].startswith(b",0\n")
    assert (tmp_path / "chart.png").read_bytes().startswith(b"\x89PNG")
    assert scope["digest"].startswith("sha256:")


def test_the_data_requests_example(service):
    r = subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "examples", "agent", "python", "data_requests.py"),
                        "--url", service.url],
                       env=dict(os.environ, AIRLOCK_API_KEY=service.keys.alpha), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout
    assert ": input_requested" in lines
    assert "the code asks for 'sales_feb'" in lines
    assert "follow-up job " in lines and ": succeeded: jan=" in lines and "total=" in lines
    assert "request refused: not in the catalogue of this application" in lines
    assert "February minus January = " in lines
