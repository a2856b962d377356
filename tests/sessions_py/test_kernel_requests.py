"""Data requests in the session kernel (src/sessions/kernel.py): a call that
asks ends input_requested with its state kept; the lines a call sends are
passed on within the host's limits, whatever the code writes; answers reach
the next call. The host validates the lines (src/requests); here only what
the kernel passes on is checked."""
import json


def _asked(answer):
    return [json.loads(r["line"]) if r["line"] is not None else None for r in answer["requests"]]


def test_ask_ends_the_call_and_the_variables_stay(keeper):
    keeper.call("import airlock_request\nrows = 10")
    answer = keeper.call("airlock_request.ask('sales_2025.csv', 'the third year', params={'year': 2025})\n"
                         "rows = 0")
    assert answer["status"] == "input_requested", answer
    assert _asked(answer) == [{"name": "sales_2025.csv", "why": "the third year", "params": {"year": 2025}}]
    assert answer["requests_over"] == {"lines": 0, "bytes": 0}
    # The code after ask() did not run; what ran before is kept.
    assert keeper.call("rows")["value"] == "10"


def test_a_later_call_learns_the_answers(keeper):
    answers = {"r1": {"state": "answered"}, "r2": {"state": "refused", "reason": "not yours"},
               "r3": {"state": "open"}}
    answer = keeper.call("import airlock_request as a\n"
                         "(a.answer('r1'), a.answer('r2'), a.answer('r3'), a.answer('r9'))", answers=answers)
    assert answer["status"] == "ok", answer
    assert answer["value"] == "({'state': 'answered'}, {'state': 'refused', 'reason': 'not yours'}, None, None)"
    assert answer["requests"] == []


def test_add_without_stop_sends_and_the_call_ends_as_it_would(keeper):
    answer = keeper.call("import airlock_request\n"
                         "airlock_request.add('a.csv', 'first')\nairlock_request.add('b.csv', 'second')\n'done'")
    assert answer["status"] == "ok"  # the host makes this input_requested once it accepts one
    assert answer["value"] == "'done'"
    assert [r["name"] for r in _asked(answer)] == ["a.csv", "b.csv"]
    # Each call starts with nothing sent: the helper's own count starts again.
    again = keeper.call("import airlock_request\nfor i in range(4): airlock_request.add('c%d' % i, 'why')")
    assert again["status"] == "ok", again
    assert len(again["requests"]) == 4


def test_a_shell_call_asks_through_the_same_channel(keeper):
    answer = keeper.call('echo \'{"name": "users.csv", "why": "join"}\' >&"$AIRLOCK_REQUEST_FD"', kind="shell")
    assert answer["status"] == "ok", answer
    assert _asked(answer) == [{"name": "users.csv", "why": "join"}]


def test_a_flood_is_counted_not_kept_and_the_call_ends(keeper):
    # Hostile: 200000 lines straight to the fd (far past the pipe's buffer):
    # the call still ends, 4 lines are passed on and the rest only counted.
    answer = keeper.call("import os\nfd = int(os.environ['AIRLOCK_REQUEST_FD'])\n"
                         "line = b'{\"name\": \"x\", \"why\": \"y\"}\\n'\n"
                         "for _ in range(2000): os.write(fd, line * 100)\n'sent'", timeout=60)
    assert answer["status"] == "ok", answer
    assert len(answer["requests"]) == 4
    assert answer["requests_over"]["lines"] == 200000 - 4
    assert answer["requests_over"]["bytes"] == (200000 - 4) * (len('{"name": "x", "why": "y"}'))


def test_a_huge_line_is_measured_not_held(keeper):
    # Hostile: one 20 MB line; the kernel keeps its size only.
    answer = keeper.call("import os\nfd = int(os.environ['AIRLOCK_REQUEST_FD'])\n"
                         "chunk = b'A' * (1 << 20)\nfor _ in range(20): os.write(fd, chunk)\n"
                         "os.write(fd, b'\\n')\n'sent'", timeout=60)
    assert answer["status"] == "ok", answer
    assert answer["requests"] == [{"line": None, "bytes": 20 << 20}]


def test_lines_between_calls_count_for_no_call(keeper):
    # A background thread that writes after its call ended: its lines are
    # dropped, never given to the next call.
    keeper.call("import os, threading, time\nfd = int(os.environ['AIRLOCK_REQUEST_FD'])\n"
                "threading.Thread(target=lambda: (time.sleep(0.3), os.write(fd, b'{\"name\": \"late\", \"why\": \"w\"}\\n'))).start()")
    import time
    time.sleep(0.8)
    answer = keeper.call("1")
    assert answer["requests"] == [], answer
