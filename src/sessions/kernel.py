# The Python kernel of a session (session_kernel.h): started by the keeper
# (keeper.py) with fd 3 its channel to the host, fds 4 and 5 the read ends of
# its own stdout and stderr pipes, fd 0 the host's requests, one JSON a line.
# Either exec'd as `python3 -c KERNEL` or run in a fork of the keeper.
import ast, base64, codecs, fcntl, io, json, os, select, signal, subprocess, sys, tempfile
import termios, threading, time, traceback, types

_MARK = "\x1eairlock-kernel "
_PART = 32768  # characters of a field per part line: far below the host's line limit
try:
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: see the keeper's _undumpable()
except Exception:
    pass
_channel, _out_r, _err_r = 3, 4, 5  # set up by the keeper: see _spawn()
for _fd in (_channel, _out_r, _err_r):
    os.set_inheritable(_fd, False)
_requests = os.fdopen(os.dup(0), "rb")
_devnull = os.open("/dev/null", os.O_RDONLY)
os.dup2(_devnull, 0)
os.close(_devnull)
os.set_blocking(_out_r, False)
os.set_blocking(_err_r, False)
sys.stdin = open(0, "r", closefd=False)

class _Delivered(io.TextIOWrapper):
    """sys.stdout and sys.stderr: every write goes to the pipe at once, and
    flush() returns only when what was written has reached the host, so
    print(..., flush=True) followed by os._exit or a crash loses nothing."""

    def flush(self):
        super().flush()
        # At exit the pump may be frozen holding its lock; a handler that ran
        # inside a delivery or a send would wait for its own thread.
        if not sys.is_finalizing() and not getattr(_holds, "count", 0):
            _deliver()

sys.stdout = _Delivered(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                        errors="backslashreplace", write_through=True)
sys.stderr = _Delivered(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                        errors="backslashreplace", write_through=True)
_ns = {"__name__": "__main__", "__builtins__": __builtins__}
# Data requests (docs/sessions.md): the code writes one JSON line per request
# to this pipe (AIRLOCK_REQUEST_FD; airlock_request does it); the pump keeps
# what the running call sent, within the host's limits, and the host decides.
_req_r, _req_w = os.pipe()
os.set_blocking(_req_r, False)
os.environ["AIRLOCK_REQUEST_FD"] = str(_req_w)
_send_lock = threading.Lock()
_pump_lock = threading.Lock()
_holds = threading.local()  # .count: how many of the two locks above this thread holds

class _Holding:
    """`with _Holding(lock)`: the lock, counted in _holds from just before it
    is taken until just after it is released. A signal handler of the code
    that runs while this thread holds one and flushes output skips the
    delivery (its text goes by the pump) instead of waiting for itself."""

    def __init__(self, lock):
        self.lock = lock

    def __enter__(self):
        _holds.count = getattr(_holds, "count", 0) + 1
        try:
            self.lock.acquire()
        except BaseException:
            _holds.count -= 1
            raise

    def __exit__(self, *exc):
        self.lock.release()
        _holds.count -= 1
_current = [None, None]  # the running call's id and nonce

def _send(message, sent=None):
    data = memoryview((_MARK + json.dumps(message) + "\n").encode())
    # No KeyboardInterrupt between the first and last byte of a line.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with _Holding(_send_lock):
            while data:
                data = data[os.write(_channel, data):]
            if sent is not None:
                sent.append(True)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

def _send_once(message):
    # Sends `message` exactly once, whenever an interrupt lands.
    sent = []
    while not sent:
        try:
            _send(message, sent)
        except KeyboardInterrupt:
            pass

class _Requests:
    """The request lines of one call: at most `count` kept, each only if it
    has at most `size` bytes (a longer one is measured, never held); the
    lines past `count` are only counted. Blank lines are not requests."""

    def __init__(self, count=0, size=0):
        self.count, self.size = count, size
        self.kept = []  # (text or None when over size, bytes)
        self.over_lines = self.over_bytes = 0
        self._line, self._length = bytearray(), 0

    def feed(self, data):
        start = 0
        while start < len(data):
            nl = data.find(b"\n", start)
            end = len(data) if nl < 0 else nl
            if self._length + end - start <= self.size:
                self._line += data[start:end]
            self._length += end - start
            if nl < 0:
                return
            self._end_line()
            start = nl + 1

    def finish(self):
        if self._length:
            self._end_line()  # a last line without its newline

    def _end_line(self):
        n, text = self._length, None
        if n <= self.size:
            text = bytes(self._line).decode("utf-8", "replace")
        self._line, self._length = bytearray(), 0
        if n == 0:
            return
        if len(self.kept) < self.count:
            self.kept.append((text, n))
        else:
            self.over_lines += 1
            self.over_bytes += n

_collecting = [None]  # the running call's _Requests; None between calls (lines then are dropped)

def _read_requests():
    while True:
        try:
            data = os.read(_req_r, 65536)
        except BlockingIOError:
            return
        if not data:
            return
        if _collecting[0] is not None:
            _collecting[0].feed(data)

_streams = {_out_r: ("stdout", codecs.getincrementaldecoder("utf-8")("replace")),
            _err_r: ("stderr", codecs.getincrementaldecoder("utf-8")("replace"))}

def _forward(fd, most=65536):
    # One read of the code's output pipe `fd`, sent to the host. Called with
    # _pump_lock held and SIGINT blocked: a piece read is always a piece sent
    # (unless the whole kernel dies in between, which only the pump risks).
    name, decoder = _streams[fd]
    try:
        data = os.read(fd, most)
    except BlockingIOError:
        return 0
    text = decoder.decode(data)
    if text:
        _send({"event": "output", "id": _current[0], "tag": _current[1], "stream": name, "text": text})
    return len(data)

def _pump():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    poller = select.poll()
    for fd in _streams:
        poller.register(fd, select.POLLIN)
    poller.register(_req_r, select.POLLIN)
    while True:
        poller.poll()
        with _Holding(_pump_lock):
            _read_requests()
            for fd in _streams:
                _forward(fd)

def _deliver():
    # Sends what the code wrote before this call, in the caller's thread.
    # Taking the lock waits out a piece the pump holds; then what is still in
    # the pipes (no more: a subprocess may go on writing) is sent here.
    # Without this, os._exit right after a flushed print could kill the pump
    # between reading a piece and sending it, and lose that piece.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with _Holding(_pump_lock):
            for fd in _streams:
                left = _unread(fd)
                while left > 0:
                    n = _forward(fd, left)
                    if n == 0:
                        break
                    left -= n
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

def _unread(fd):
    buf = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int.from_bytes(buf, sys.byteorder)

def _drain():
    # Everything the call wrote is sent before its answer (unless its
    # leftovers keep writing: then at most half a second is waited for).
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        with _Holding(_pump_lock):
            if _unread(_out_r) == 0 and _unread(_err_r) == 0 and _unread(_req_r) == 0:
                return
        time.sleep(0.001)

def _figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    out = []
    try:
        for num in plt.get_fignums():
            buf = io.BytesIO()
            plt.figure(num).savefig(buf, format="png")
            out.append(base64.b64encode(buf.getvalue()).decode())
    finally:
        plt.close("all")
    return out

def _send_parts(answer, caps):
    # The big fields go as parts under the host's caps (the host keeps no
    # more than its caps whatever comes; this only spares the pipe).
    base = {"event": "part", "id": answer["id"], "tag": answer["tag"]}
    truncated = []
    for key, field in (("result", "value"), ("html", "html"), ("error", "error")):
        text = answer.pop(key, None)
        if not isinstance(text, str) or not text:
            continue
        cap = caps.get(field, 0)
        if len(text) > cap:
            text = text[:cap]
            truncated.append(field)
        for i in range(0, len(text), _PART):
            _send_once(dict(base, field=field, text=text[i:i + _PART]))
    room = caps.get("figures", 0)
    for index, figure in enumerate(answer.pop("figures", None) or []):
        if len(figure) > room:
            truncated.append("figures")
            continue
        room -= len(figure)
        for i in range(0, len(figure), _PART):
            _send_once(dict(base, field="figure", index=index, text=figure[i:i + _PART]))
    answer["truncated"] = truncated

_DataRequested = ()  # airlock_request.DataRequested once the helper is loaded: except () catches nothing
_helper = [None]

def _sink(request):
    # What airlock_request.add() sends in a session goes down the same pipe
    # as a shell call's lines: the host judges them all alike.
    data = memoryview((json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
    while data:
        data = data[os.write(_req_w, data):]

def _load_request_helper():
    # airlock_request from the source the host embedded (_AIRLOCK_REQUEST_PY,
    # defined before this file), in sys.modules before any call: no file,
    # mount or PYTHONPATH needed. With the sink set, ask() and stop() end the
    # call (DataRequested, caught below) instead of the program.
    global _DataRequested
    source = globals().get("_AIRLOCK_REQUEST_PY")
    if not isinstance(source, str):
        return
    module = types.ModuleType("airlock_request")
    module.__file__ = "<airlock_request>"
    try:
        exec(compile(source, "<airlock_request>", "exec"), module.__dict__)
        module.set_sink(_sink)
        _DataRequested = module.DataRequested
    except Exception:
        sys.stderr.write("airlock_request could not be loaded:\n" + traceback.format_exc())
        return
    _helper[0] = module
    sys.modules["airlock_request"] = module

def _begin_requests(limits, answers):
    # Each call starts with nothing sent, the host's limits, and what the
    # application answered so far (answer() gives None for an open request).
    count, size = _whole(limits.get("count")), _whole(limits.get("bytes"))
    os.environ["AIRLOCK_REQUEST_LIMIT"], os.environ["AIRLOCK_REQUEST_BYTES"] = str(count), str(size)
    module = _helper[0]
    if module is not None:
        try:
            module.set_sink(_sink)
            module.set_answers({k: v for k, v in answers.items()
                                if isinstance(k, str) and isinstance(v, dict) and v.get("state") != "open"})
        except Exception:
            sys.stderr.write("airlock_request: " + traceback.format_exc())
    with _Holding(_pump_lock):
        _collecting[0] = _Requests(count, size)

def _run_python(code, answer):
    try:
        tree = ast.parse(code, "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), _ns)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), _ns)
            if value is not None:
                _ns["_"] = value
                answer["result"] = repr(value)
                if hasattr(value, "_repr_html_"):
                    try:
                        answer["html"] = value._repr_html_()
                    except Exception:
                        pass
    except KeyboardInterrupt:
        answer.update(status="interrupted", error="KeyboardInterrupt")
    except _DataRequested:
        answer.update(status="input_requested")
    except SystemExit as e:
        answer.update(status="error",
                      error="SystemExit(%r): a session's kernel does not exit; close the session" % (e.code,))
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<cell>":
            tb = tb.tb_next
        answer.update(status="error", error="".join(traceback.format_exception(type(e), e, tb)))
    try:
        answer["figures"] = _figures()
    except Exception as e:
        sys.stderr.write("figures: %s\n" % e)

_SHELL = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
_WRAPPER = 'eval "$1"\n__airlock_rc=$?\n{ printf "%s\\0" "$PWD"; env -0; } >"$2" 2>/dev/null\nexit $__airlock_rc\n'
_shell_state = {"cwd": os.getcwd(), "env": dict(os.environ)}
_state_dir = tempfile.mkdtemp(prefix="airlock-shell-")

def _stop_shell(proc):
    # SIGINT to the command's process group, SIGKILL to whatever is left of
    # it a second later (or at once on a second interrupt).
    try:
        os.killpg(proc.pid, signal.SIGINT)
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                break
            time.sleep(0.01)
    except (KeyboardInterrupt, OSError):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            pass

def _load_shell_state(path):
    with open(path, "rb") as f:
        parts = f.read().split(b"\0")
    if len(parts) < 2:
        return
    env = {}
    for item in parts[1:]:
        name, sep, value = item.partition(b"=")
        if sep and name and name not in (b"_", b"SHLVL"):
            env[os.fsdecode(name)] = os.fsdecode(value)
    _shell_state["cwd"] = os.fsdecode(parts[0])
    _shell_state["env"] = env

def _run_shell(code, answer):
    state = os.path.join(_state_dir, "state")
    try:
        os.unlink(state)
    except FileNotFoundError:
        pass
    cwd = _shell_state["cwd"]
    if not os.path.isdir(cwd):
        cwd = os.getcwd()
    env = dict(_shell_state["env"], AIRLOCK_REQUEST_FD=str(_req_w))  # a shell call asks as a job does
    proc = subprocess.Popen([_SHELL, "-c", _WRAPPER, "sh", code, state], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, process_group=0, pass_fds=(_req_w,))
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        rc = _stop_shell(proc)
        answer.update(status="interrupted", error="KeyboardInterrupt")
    try:
        _load_shell_state(state)
    except OSError:
        pass
    rc = 128 - rc if rc < 0 else rc
    answer.update(exit_code=rc, cwd=_shell_state["cwd"])
    if rc != 0 and answer["status"] == "ok":
        answer.update(status="error", error="exit status %d" % rc)

def _whole(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

def _send_requests(answer, asked):
    # Each kept request as a line of its own, before the answer; the host
    # validates them (src/requests) and counts the rest from requests_over.
    for text, size in asked.kept:
        _send_once({"event": "request", "id": answer["id"], "tag": answer["tag"], "line": text, "bytes": size})
    answer["requests_over"] = {"lines": asked.over_lines, "bytes": asked.over_bytes}

def _run(request):
    answer = {"event": "answer", "id": request.get("id"), "tag": request.get("nonce"), "status": "ok",
              "result": None, "html": None, "error": None, "figures": [], "exit_code": 0, "cwd": None}
    code = request.get("code")
    code = code if isinstance(code, str) else ""
    caps = request.get("caps")
    caps = caps if isinstance(caps, dict) else {}
    limits = request.get("requests")
    limits = limits if isinstance(limits, dict) else {}
    answers = request.get("answers")
    _begin_requests(limits, answers if isinstance(answers, dict) else {})
    _current[0], _current[1] = answer["id"], answer["tag"]
    _send({"event": "started", "id": answer["id"], "tag": answer["tag"]})
    started = time.monotonic()
    try:
        if request.get("kind") == "shell":
            _run_shell(code, answer)
        else:
            _run_python(code, answer)
    finally:
        answer["ms"] = round((time.monotonic() - started) * 1000, 3)
        _drain()
        _current[0] = _current[1] = None
        with _Holding(_pump_lock):
            _read_requests()
            asked, _collecting[0] = _collecting[0], None
    asked.finish()
    _send_requests(answer, asked)
    _send_parts(answer, caps)
    _send_once(answer)

def _parse(line):
    while True:  # an interrupt meant for the previous call must not lose this one
        try:
            request = json.loads(line)
            return request if isinstance(request, dict) else None
        except ValueError:
            return None
        except KeyboardInterrupt:
            pass

_load_request_helper()
threading.Thread(target=_pump, daemon=True).start()
_send_once({"event": "ready"})
while True:
    try:
        line = _requests.readline()
    except KeyboardInterrupt:
        continue  # an interrupt between calls
    if not line:
        break
    request = _parse(line)
    if request is None:
        _send_once({"event": "answer", "id": None, "status": "error", "error": "not a JSON request"})
        continue
    try:
        _run(request)
    except KeyboardInterrupt:  # landed outside the call's own try
        _current[0] = _current[1] = None
        _send_once({"event": "answer", "id": request.get("id"), "tag": request.get("nonce"),
                    "status": "interrupted", "error": "KeyboardInterrupt"})
