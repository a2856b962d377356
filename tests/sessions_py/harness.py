"""Runs the session keeper and kernel (src/sessions/keeper.py, kernel.py) as the
sandbox runs them, `python3 -c KEEPER KERNEL [fork]`, outside any sandbox, and
speaks their protocol (session_kernel.h) to them."""
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.environ.get("AIRLOCK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SOURCES = os.path.join(ROOT, "src", "sessions")
MARK = b"\x1eairlock-kernel "


def source(name):
    with open(os.path.join(SOURCES, name)) as f:
        return f.read()


def kernel_source():
    """kernel.py as the host sends it (session_python.cc.in): the data request
    helper's source first, as a string the kernel loads into sys.modules."""
    with open(os.path.join(ROOT, "src", "requests", "airlock_request.py")) as f:
        helper = f.read()
    return "_AIRLOCK_REQUEST_PY = " + json.dumps(helper) + "\n" + source("kernel.py")


def _children_of(pid):
    kids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == pid:
            kids.append(int(name))
    return kids


class Keeper:
    def __init__(self, workdir, fork=False, preamble="", secret="0123456789abcdef" * 2):
        self.secret = secret
        argv = [sys.executable, "-c", preamble + source("keeper.py"), kernel_source()]
        if fork:
            argv.append("fork")
        # The kernel makes its shell state directory with mkdtemp: inside a
        # sandbox that is the sandbox's own /tmp; here it is a directory this
        # harness removes at close, so no run leaves one in the host's /tmp.
        self.tmpdir = tempfile.mkdtemp(prefix="keeper-tmp-")
        env = dict(os.environ, TMPDIR=self.tmpdir)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=str(workdir), env=env)
        self.proc.stdin.write((secret + "\n").encode())
        self.proc.stdin.flush()
        self._buf = b""
        self._calls = 0
        self.events = []

    def close(self):
        # Ends only what this harness started, by pid: the keeper is stopped
        # first (so it starts no new kernel), then its kernel, then itself.
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGSTOP)
            for kid in _children_of(self.proc.pid):
                os.kill(kid, signal.SIGKILL)
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            f.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def next_event(self, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line, self._buf = self._buf[:nl], self._buf[nl + 1:]
                if line.startswith(MARK):
                    event = json.loads(line[len(MARK):])
                    self.events.append(event)
                    return event
                continue  # raw output: not protocol
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no event from the keeper; stderr: %r" % self.stderr_so_far())
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise EOFError("the keeper ended; stderr: %r" % self.stderr_so_far())
                self._buf += chunk

    def stderr_so_far(self):
        os.set_blocking(self.proc.stderr.fileno(), False)
        try:
            return self.proc.stderr.read() or b""
        except (BlockingIOError, TypeError):
            return b""

    def wait_for(self, kind, timeout=30):
        while True:
            event = self.next_event(timeout)
            if event.get("event") == kind:
                return event

    def call(self, code, kind="python", timeout=30, requests=None, answers=None):
        """One call: its answer with the parts folded in, its output, and the
        data request lines it sent ("requests": [{"line", "bytes"}])."""
        self._calls += 1
        cid, nonce = "call-%d" % self._calls, "nonce%d" % self._calls
        caps = {"value": 1 << 20, "html": 1 << 20, "error": 1 << 20, "figures": 8 << 20}
        request = {"id": cid, "nonce": nonce, "kind": kind, "code": code, "caps": caps,
                   "requests": requests or {"count": 4, "bytes": 4096}, "answers": answers or {}}
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        parts, output, asked = {}, [], []
        while True:
            event = self.next_event(timeout)
            if event.get("event") == "kernel_exited":
                return {"status": "kernel_exited", "event": event, "stdout": "".join(output)}
            if event.get("id") != cid:
                continue
            assert event.get("tag") == nonce, event
            if event["event"] == "part":
                parts[event["field"]] = parts.get(event["field"], "") + event["text"]
            elif event["event"] == "output" and event["stream"] == "stdout":
                output.append(event["text"])
            elif event["event"] == "request":
                asked.append({"line": event.get("line"), "bytes": event.get("bytes")})
            elif event["event"] == "answer":
                event.update(parts)
                event["stdout"] = "".join(output)
                event["requests"] = asked
                return event
