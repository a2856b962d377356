"""The preloaded job's runner (src/sandbox/preload_runner.py) behaves like python3's own start.

Each case starts a child /usr/bin/python3 that loads the runner the way the preloaded
interpreter does (compiled under the name '<airlock runner>', registered as the module
_airlock_preload, the warm-up defined beside it) and calls run(argv, env) with bytes, as the
payload of a preloaded sandbox does. Exit status, output, sys.argv, sys.path[0], the
environment, tracebacks and what runs at exit are compared with what python3 does.
"""
import os
import subprocess
import sys
import textwrap

SOURCE_DIR = os.environ.get("AIRLOCK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
RUNNER = os.path.join(SOURCE_DIR, "src", "sandbox", "preload_runner.py")
WARM_UP = os.path.join(SOURCE_DIR, "src", "sandbox", "preload_warm_up.py")

# The child: what preload_python.cc's preload_code() and runner_call() do, with the
# argv and environment taken from this process's arguments (after "--", "ENV" items
# before it).
CHILD = textwrap.dedent(
    """
    import sys, types
    runner, warm_up = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    cut = rest.index("--")
    env = [e.encode() for e in rest[:cut]]
    argv = [a.encode() for a in rest[cut + 1:]]
    exec(compile(open(warm_up, "rb").read(), "<airlock warm-up>", "exec"), {})
    mod = types.ModuleType("_airlock_preload")
    exec(compile(open(runner, "rb").read(), "<airlock runner>", "exec"), mod.__dict__)
    sys.modules["_airlock_preload"] = mod
    import _airlock_preload
    _airlock_preload.run(argv, env)
    """
)


def run(argv, env=("PATH=/usr/bin:/bin", "LANG=C.UTF-8"), cwd=None):
    cmd = ["/usr/bin/python3", "-c", CHILD, RUNNER, WARM_UP, *env, "--", *argv]
    # The child's own environment is plain (no PYTHONUNBUFFERED from whoever runs the tests).
    plain = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=60, env=plain)


def test_c_code_gets_argv_and_an_empty_path_entry_like_python3():
    code = "import sys; print(sys.argv); print(repr(sys.path[0]))"
    got = run(["python3", "-c", code, "a", "b"])
    assert got.returncode == 0, got.stderr
    want = subprocess.run(["/usr/bin/python3", "-c", code, "a", "b"], capture_output=True, text=True)
    assert got.stdout == want.stdout == "['-c', 'a', 'b']\n''\n"


def test_exit_statuses_follow_system_exit_as_python3():
    assert run(["python3", "-c", "raise SystemExit(3)"]).returncode == 3
    assert run(["python3", "-c", "raise SystemExit(None)"]).returncode == 0
    assert run(["python3", "-c", "import sys; sys.exit(256 + 7)"]).returncode == 7
    text = run(["python3", "-c", "raise SystemExit('bye')"])
    assert text.returncode == 1
    assert text.stderr == "bye\n"


def test_an_uncaught_exception_shows_the_jobs_frames_only():
    got = run(["python3", "-c", "def f():\n    raise ValueError('no')\nf()"])
    assert got.returncode == 1
    assert "ValueError: no" in got.stderr
    assert 'File "<string>", line 3' in got.stderr
    assert "airlock runner" not in got.stderr and "preload_runner" not in got.stderr


def test_a_script_gets_its_path_as_argv0_its_directory_on_sys_path_and_file(tmp_path):
    script = tmp_path / "job.py"
    script.write_text("import sys\nprint(sys.argv)\nprint(sys.path[0])\nprint(__file__)\nprint(__name__)\n")
    got = run(["python3", str(script), "x"])
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines() == [str([str(script), "x"]), str(tmp_path), str(script), "__main__"]


def test_a_missing_script_is_exit_two_with_python3s_message(tmp_path):
    got = run(["python3", str(tmp_path / "nope.py")])
    assert got.returncode == 2
    assert "can't open file" in got.stderr and "No such file or directory" in got.stderr


def test_a_module_runs_as_main_from_the_working_directory(tmp_path):
    (tmp_path / "tool.py").write_text("import sys\nprint(__name__, sys.argv)\n")
    got = run(["python3", "-m", "tool", "--flag"], cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith("__main__ [")
    assert got.stdout.rstrip().endswith("'--flag']")


def test_the_environment_is_exactly_the_jobs():
    got = run(["python3", "-c", "import os; print(sorted(os.environ))"], env=("A=1", "LANG=C.UTF-8"))
    assert got.returncode == 0, got.stderr
    assert got.stdout == "['A', 'LANG']\n"


def test_atexit_functions_and_non_daemon_threads_run_before_the_exit():
    code = textwrap.dedent(
        """
        import atexit, threading, time
        atexit.register(lambda: print("atexit ran", flush=True))
        def late():
            time.sleep(0.2)
            print("thread finished", flush=True)
        threading.Thread(target=late).start()
        raise SystemExit(5)
        """
    )
    got = run(["python3", "-c", code])
    assert got.returncode == 5
    assert got.stdout == "thread finished\natexit ran\n"


def test_a_program_that_never_imported_threading_ends_without_importing_it():
    # As python3's own shutdown: threads are waited for only when threading was imported.
    code = "import atexit, sys; atexit.register(lambda: print('threading' in sys.modules))"
    got = run(["python3", "-c", code])
    assert got.returncode == 0, got.stderr
    assert got.stdout == "False\n"
    want = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
    assert want.stdout == "False\n"


def test_output_that_cannot_be_flushed_is_an_error_status():
    # stdout closed by the job: the final flush fails, and the status says so.
    got = run(["python3", "-c", "import os, sys; print('x', end=''); os.close(1)"])
    assert got.returncode == 120


def test_the_warm_up_defines_a_function_that_skips_without_the_data_stack():
    namespace = {}
    exec(compile(open(WARM_UP, "rb").read(), "<airlock warm-up>", "exec"), namespace)
    assert callable(namespace["_airlock_warm_up"])
    saved = {m: sys.modules.pop(m) for m in ("pandas", "matplotlib.pyplot") if m in sys.modules}
    try:
        assert namespace["_airlock_warm_up"]() is None  # nothing imported, nothing done
    finally:
        sys.modules.update(saved)
