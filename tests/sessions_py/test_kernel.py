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
