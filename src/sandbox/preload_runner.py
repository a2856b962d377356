# The runner of a preloaded job (docs/fast-start.md, "The preloaded interpreter"), compiled
# into airlock (src/sandbox/preload_python.cc; CMake embeds this file) and loaded by the
# preloaded interpreter as the module _airlock_preload. In the payload, a fork of that
# interpreter, run(argv, env) must behave like the interpreter's own start-up: sys.argv,
# sys.path[0], a fresh __main__, the exit status, the traceback. Tested by
# tests/preload_py/test_runner.py.
import os, sys

def _trim(tb, filename):
    t = tb
    while t is not None and t.tb_frame.f_code.co_filename != filename:
        t = t.tb_next
    return t if t is not None else tb

def _finish(status):
    # What interpreter shutdown does that a program can see: wait for
    # non-daemon threads, run atexit functions, flush stdio. The rest of
    # finalization (tearing down every preloaded module) is skipped: it costs
    # tens of milliseconds and nobody can observe it. Like python3's own
    # shutdown, threads are waited for only when threading was imported (a
    # program without it has no threads to wait for, and importing it here
    # would cost the job its import).
    import atexit
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:
            pass
    atexit._run_exitfuncs()
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            status = status or 120
    os._exit(status)

def _exit_status(e):
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    print(e.code, file=sys.stderr)
    return 1

def run(argv, env):
    import builtins, types
    os.environ.clear()
    for item in env:
        name, _, value = item.partition(b"=")
        os.environb[name] = value
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # the global RandomState was seeded in the parent
    args = [os.fsdecode(a) for a in argv]
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    del sys.modules["_airlock_preload"]
    filename = None
    # What PYTHONPATH would have added at start-up (preloadable() lets only
    # the data request helper's directory through), after sys.path[0].
    # The interpreter may have looked for them before the sandbox existed (a
    # zygote started with the same variable): forget what it found then.
    extra_path = [d for d in os.environ.get("PYTHONPATH", "").split(":") if d]
    for d in extra_path:
        sys.path_importer_cache.pop(d, None)
    extra_path = [d for d in extra_path if d not in sys.path]
    try:
        if args[1] == "-c":
            sys.argv = ["-c"] + args[3:]
            sys.path.insert(0, "")
            sys.path[1:1] = extra_path
            filename = "<string>"
            code = compile(args[2], filename, "exec")
        elif args[1] == "-m":
            sys.argv = [args[2]] + args[3:]
            sys.path.insert(0, os.getcwd())
            sys.path[1:1] = extra_path
            import runpy
            runpy._run_module_as_main(args[2], alter_argv=True)
            _finish(0)
        else:
            filename = args[1]
            sys.argv = args[1:]
            try:
                with open(filename, "rb") as f:
                    source = f.read()
            except OSError as e:
                print("%s: can't open file %r: [Errno %d] %s" % (args[0], filename, e.errno, e.strerror),
                      file=sys.stderr)
                _finish(2)
            sys.path.insert(0, os.path.dirname(os.path.realpath(filename)))
            sys.path[1:1] = extra_path
            main.__file__ = filename
            main.__cached__ = None
            code = compile(source, filename, "exec")
        exec(code, main.__dict__)
    except SystemExit as e:
        _finish(_exit_status(e))
    except BaseException as e:
        tb = _trim(e.__traceback__, filename) if filename else e.__traceback__.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        if isinstance(e, KeyboardInterrupt):  # like python3: die by the signal
            import signal
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        _finish(1)
    _finish(0)
