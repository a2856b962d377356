"""The session kernel (src/sessions/kernel.py), exec'd and forked by the keeper."""


def test_state_persists_and_the_last_expression_is_the_value(keeper):
    assert keeper.call("x = 41")["status"] == "ok"
    answer = keeper.call("print('hi')\nx + 1")
    assert answer["status"] == "ok", answer
    assert answer["value"] == "42"
    assert answer["stdout"] == "hi\n"


def test_an_error_carries_its_traceback_and_the_state_survives(keeper):
    keeper.call("kept = 'yes'")
    answer = keeper.call("def f():\n    raise ValueError('boom')\nf()")
    assert answer["status"] == "error"
    assert "ValueError: boom" in answer["error"]
    assert 'File "<cell>"' in answer["error"]
    assert "kernel.py" not in answer["error"] and "<airlock kernel>" not in answer["error"], answer["error"]
    assert keeper.call("kept")["value"] == "'yes'"


def test_a_shell_call_keeps_its_working_directory_and_exports(keeper):
    answer = keeper.call("mkdir -p sub && cd sub && export AIRLOCK_T=7", kind="shell")
    assert answer["status"] == "ok", answer
    answer = keeper.call('echo "$AIRLOCK_T $(basename "$PWD")"', kind="shell")
    assert answer["stdout"] == "7 sub\n"
    assert keeper.call("exit 3", kind="shell")["exit_code"] == 3


def test_system_exit_does_not_end_the_kernel(keeper):
    answer = keeper.call("import sys\nsys.exit(4)")
    assert answer["status"] == "error"
    assert "SystemExit(4)" in answer["error"]
    assert keeper.call("1 + 1")["value"] == "2"


def test_a_request_that_is_not_json_is_answered_as_an_error(keeper):
    keeper.proc.stdin.write(b"{not json\n")
    keeper.proc.stdin.flush()
    answer = keeper.wait_for("answer")
    assert answer["status"] == "error" and answer["error"] == "not a JSON request"
    assert keeper.call("'still here'")["value"] == "'still here'"


def test_a_signal_handler_that_prints_and_flushes_never_hangs_the_kernel(keeper):
    # flush() sends under the kernel's own locks; a handler that runs while
    # this thread holds one (in the middle of a flush, or of the answer) and
    # flushes again must not wait for itself.
    code = ("import signal\n"
            "signal.signal(signal.SIGALRM, lambda *a: print('tick', flush=True))\n"
            "signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)\n"
            "for i in range(3000):\n"
            "    print('line', i, flush=True)\n"
            "n = 0\n"
            "for i in range(20000):\n"
            "    n += 1\n")
    answer = keeper.call(code, timeout=20)
    assert answer["status"] == "ok", answer
    out = answer["stdout"]
    while "tick\n" in out:  # a handler's print may land inside another print
        out = out.replace("tick\n", "")
    assert out == "".join("line %d\n" % i for i in range(3000))
    # The timer is still firing while the next calls are answered.
    for _ in range(50):
        assert keeper.call("1 + 1", timeout=20)["value"] == "2"
    keeper.call("signal.setitimer(signal.ITIMER_REAL, 0)")
