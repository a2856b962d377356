# The keeper of a session's sandbox (session_kernel.h): run as
# `python3 -c KEEPER KERNEL [fork]`. It runs the kernel (KERNEL, Python source)
# as its child and starts a fresh one whenever it dies; it routes the host's
# signals to it. With "fork" the keeper is itself a fork of the preloaded
# interpreter (sandbox/zygote.h) and each kernel is a fork of the keeper that
# runs KERNEL in place (the data stack already imported), instead of an exec
# of a new python3.
import ctypes, fcntl, json, mmap, os, signal, sys, time

_MARK = "\x1eairlock-kernel "
_KERNEL = sys.argv[1]
_FORK = len(sys.argv) > 2 and sys.argv[2] == "fork"
_kernel = [0]

def _undumpable():
    # PR_SET_DUMPABLE 0: no other process of the sandbox's user may read this
    # one's memory (/proc/PID/mem) or open its fds (/proc/PID/fd).
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass

_SECRET_MAX = 256
# The secret lives only in this page, which a fork sees as zeros
# (MADV_WIPEONFORK): a kernel forked from the keeper never holds it, exactly
# like a kernel exec'd from it.
_secret = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # WIPEONFORK: private only
try:
    _secret.madvise(getattr(mmap, "MADV_WIPEONFORK", 18))  # 18: Linux's value; Python 3.11 lacks the name
except OSError:
    if _FORK:  # a kernel forked from here would hold the secret: do not start at all
        raise
_secret_len = 0

def _read_secret():
    # The host's first line on stdin, read a byte at a time straight into the
    # page (no Python object holds it), so that nothing meant for the kernel
    # is taken either.
    global _secret_len
    view = memoryview(_secret)
    n = 0
    while n < _SECRET_MAX:
        if os.readv(0, [view[n:n + 1]]) != 1:
            break
        if view[n] == 0x0A:
            break
        n += 1
    view.release()
    _secret_len = n

_undumpable()
_read_secret()

def _send(message):
    # One writev: a line of the keeper is never split by another writer.
    text = json.dumps(message)
    head = (_MARK + text[:-1] + (', ' if len(message) else '') + '"tag": "').encode()
    view = memoryview(_secret)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGUSR1})
    try:
        parts = [head, view[:_secret_len], b'"}\n']
        total = sum(len(p) for p in parts)
        written = os.writev(1, parts)
        if written != total:  # a full pipe: the rest byte by byte (not atomic then)
            data = b"".join(bytes(p) for p in parts)[written:]
            while data:
                data = data[os.write(1, data):]
    finally:
        view.release()
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

def _session_members(sid):
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 3 and fields[0] != "Z" and int(fields[3]) == sid:
            pids.append(int(name))
    return pids

def _kill_session(sid):
    for _ in range(200):
        pids = _session_members(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)

def _on_interrupt(sig, frame):
    if _kernel[0]:
        try:
            os.killpg(_kernel[0], signal.SIGINT)
        except OSError:
            pass

def _on_restart(sig, frame):
    if _kernel[0]:
        _kill_session(_kernel[0])

def _describe(status):
    if os.WIFSIGNALED(status):
        return "the kernel was killed by signal %d" % os.WTERMSIG(status)
    return "the kernel exited with status %d" % os.waitstatus_to_exitcode(status)

def _run_forked_kernel():
    # In the forked child: the kernel in a fresh __main__, the keeper's
    # handlers undone. `random` reseeds itself at a fork; numpy's global
    # generator does not, so each kernel draws its own seed.
    import types
    for sig in (signal.SIGINT, signal.SIGUSR1):
        signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()
    # The interpreter's start-up found the user's site directory under the
    # preloaded interpreter's HOME; a python3 started now would look under
    # this session's HOME (/workspace/.local/...: a restored snapshot's
    # installs), so look again.
    import site
    site.USER_BASE = site.USER_SITE = None
    site.ENABLE_USER_SITE = site.check_enableusersite()
    user_site = site.getusersitepackages()
    if site.ENABLE_USER_SITE and os.path.isdir(user_site) and user_site not in sys.path:
        site.addsitedir(user_site)
    import builtins
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.argv = ["-c"]
    code = compile(_KERNEL, "<airlock kernel>", "exec")
    exec(code, main.__dict__)

def _spawn():
    # The kernel's fd 1 and 2 are pipes it pumps itself (fds 4 and 5 are
    # their read ends, fd 3 the channel to the host). The keeper keeps the
    # read ends too, to send what a dead kernel left unread.
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 127
        try:
            os.setsid()
            fds = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (out_w, err_w, 1, out_r, err_r)]
            for target, fd in enumerate(fds, 1):
                os.dup2(fd, target)
            os.closerange(6, 1 << 16)  # the keeper's own pipes of earlier kernels, copies of the above
            if _FORK:
                _run_forked_kernel()
                status = 0
            else:
                os.execv(sys.executable, [sys.executable, "-c", _KERNEL])
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            os._exit(status)
    os.close(out_w)
    os.close(err_w)
    return pid, out_r, err_r

def _send_leftovers(fd, stream):
    os.set_blocking(fd, False)
    data = b""
    while len(data) < (1 << 20):
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    os.close(fd)
    if data:
        _send({"event": "output", "id": None, "stream": stream, "text": data.decode("utf-8", "replace")})

signal.signal(signal.SIGINT, _on_interrupt)
signal.signal(signal.SIGUSR1, _on_restart)
quick_deaths = 0
while True:
    started = time.monotonic()
    pid, out_r, err_r = _spawn()
    _kernel[0] = pid
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    _kernel[0] = 0
    _kill_session(pid)
    _send_leftovers(out_r, "stdout")
    _send_leftovers(err_r, "stderr")
    _send({"event": "kernel_exited", "reason": _describe(status)})
    quick_deaths = quick_deaths + 1 if time.monotonic() - started < 1 else 0
    if quick_deaths >= 3:
        time.sleep(1)
