"""The session keeper (src/sessions/keeper.py): a kernel that dies is replaced
and reported under the keeper's secret; in fork mode each kernel is a fork of
the keeper that holds nothing of it: not its secret, not its RNG state."""
import hashlib

import pytest

from harness import Keeper


def test_a_dead_kernel_is_reported_under_the_secret_and_replaced_empty(keeper):
    keeper.call("x = 1")
    answer = keeper.call("import os\nos._exit(3)")
    assert answer["status"] == "kernel_exited"
    assert answer["event"]["tag"] == keeper.secret
    assert answer["event"]["reason"] == "the kernel exited with status 3"
    keeper.wait_for("ready")
    assert "NameError" in keeper.call("x")["error"]


def test_flushed_output_is_sent_by_the_kernel_before_it_dies(keeper):
    # The pump reads the code's output pipe while the code writes; the code
    # fills the channel so that the pump holds a piece when os._exit comes.
    # flush() returns only once the piece has gone, so every byte arrives,
    # tagged as the call's own (the keeper's leftovers would carry no id).
    code = "import os\nfor i in range(8):\n    print(chr(97 + i) * 100000, flush=True)\nos._exit(3)"
    expected = "".join(chr(97 + i) * 100000 + "\n" for i in range(8))
    for _ in range(3):
        answer = keeper.call(code)
        assert answer["status"] == "kernel_exited"
        assert len(answer["stdout"]) == len(expected)
        assert answer["stdout"] == expected
        keeper.wait_for("ready")


@pytest.mark.parametrize("fork", [False, True])
def test_a_forked_kernel_starts_with_what_the_keeper_imported(tmp_path, fork):
    k = Keeper(tmp_path, fork=fork, preamble="import fractions\n")
    try:
        k.wait_for("ready")
        # exec: a fresh python3; fork: the keeper's interpreter, imports and all.
        assert k.call("import sys\n'fractions' in sys.modules")["value"] == repr(fork)
        assert k.call("__name__")["value"] == "'__main__'"
    finally:
        k.close()


# The kernel looks for the secret in all of its own memory without ever
# holding it: it searches for the first half and checks the hash of the 16
# bytes after each hit. It first finds a value it assembled itself the same
# way, so a search that finds nothing is a search that works.
_SCAN = r'''
import hashlib, re
def scan(head, tail_sha):
    hits = 0
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            if not fields[1].startswith("r") or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]")):
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except OSError:
                continue
            start = 0
            while True:
                at = data.find(head, start)
                if at < 0:
                    break
                if hashlib.sha256(data[at + 16:at + 32]).hexdigest() == tail_sha:
                    hits += 1
                start = at + 1
    return hits
planted = b"PLANTED-0123456-" + bytes(reversed(b"-7654321DETNALP-"))
(scan(b"PLANTED-0123456-", "%s") > 0, scan(%r, "%s"))
'''


def test_a_forked_kernel_never_holds_the_keepers_secret(tmp_path):
    secret = "5ec7e7a11c0ffee05ec7e7a11c0ffee0"
    planted_sha = hashlib.sha256(bytes(reversed(b"-7654321DETNALP-"))).hexdigest()
    secret_sha = hashlib.sha256(secret[16:].encode()).hexdigest()
    k = Keeper(tmp_path, fork=True, secret=secret)
    try:
        k.wait_for("ready")
        answer = k.call(_SCAN % (planted_sha, secret[:16].encode(), secret_sha), timeout=120)
        assert answer["status"] == "ok", answer
        assert answer["value"] == "(True, 0)", "the scan works and finds no secret: " + answer["value"]
        # ... and the keeper still has it: its lines carry it.
        k.call("import os\nos._exit(0)")
        assert k.events[-1]["event"] == "kernel_exited" and k.events[-1]["tag"] == secret
    finally:
        k.close()


def test_each_forked_kernel_draws_its_own_random_state(tmp_path):
    pytest.importorskip("numpy")
    # The keeper (like the preloaded interpreter) seeded both generators.
    k = Keeper(tmp_path, fork=True, preamble="import numpy, random\nnumpy.random.seed(1)\nrandom.seed(1)\n")
    draw = "import numpy, random\n(float(numpy.random.random()), random.random())"
    try:
        k.wait_for("ready")
        first = k.call(draw)["value"]
        k.call("import os\nos._exit(0)")
        k.wait_for("ready")
        second = k.call(draw)["value"]
    finally:
        k.close()
    import numpy, random
    numpy.random.seed(1)
    random.seed(1)
    seeded = repr((float(numpy.random.random()), random.random()))
    assert first != second, "two kernels of one keeper drew the same numbers"
    assert seeded not in (first, second), "a kernel drew the keeper's own sequence"
