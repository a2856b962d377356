#include "sandbox/preload_python.h"

#include <cstdio>

#include "requests/request_helper.h"

namespace airlock::sandbox {
namespace {

// The runner module. It must behave like the interpreter's own start-up:
// sys.argv, sys.path[0], a fresh __main__, the exit status, the traceback.
constexpr const char* kRunner = R"PY(
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
    # tens of milliseconds and nobody can observe it.
    import atexit, threading
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
    extra_path = [d for d in os.environ.get("PYTHONPATH", "").split(":") if d]
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
)PY";

// First use of pandas and matplotlib loads more (parsers, the Agg canvas,
// fonts, tight_layout's renderer): done once here on made-up data, so each
// job does not pay it again. No job's data is ever in the interpreter.
constexpr const char* kWarmUp = R"PY(
def _airlock_warm_up():
    import io, sys
    if "pandas" not in sys.modules or "matplotlib.pyplot" not in sys.modules:
        return
    try:
        import pandas, matplotlib.pyplot as plt
        df = pandas.read_csv(io.StringIO("k,v\na,1.5\nb,2\n"))
        s = pandas.concat([df.groupby("k")["v"].sum().rename("x")], axis=1).fillna(0.0)
        s["t"] = s.sum(axis=1)
        s.to_csv(io.StringIO(), float_format="%.2f")
        s.to_json(io.StringIO())
        ax = s.plot.bar(figsize=(3, 2), rot=0)
        ax.set_title("t")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.legend(["a", "b"])
        plt.tight_layout()
        plt.savefig(io.BytesIO(), format="png", dpi=50)
        plt.close("all")
        # Cached fonts keep their files open; a job's sandbox has none of our
        # descriptors, so the cache must not outlive the warm-up.
        import matplotlib.font_manager
        matplotlib.font_manager._get_font.cache_clear()
    except Exception as e:
        print("airlock zygote: warm-up skipped:", e, file=sys.stderr)
)PY";

void append_bytes_literal(std::string& out, const char* s) {
  out += "b\"";
  char hex[5];
  for (; *s; ++s) {
    std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(*s));
    out += hex;
  }
  out += '"';
}

void append_list(std::string& out, const char* const* items) {
  out += '[';
  for (; *items != nullptr; ++items) {
    append_bytes_literal(out, *items);
    out += ',';
  }
  out += ']';
}

bool is_python(const std::string& argv0, const std::string& minor) {
  std::string name = argv0;
  for (const char* dir : {"/usr/bin/", "/bin/"})
    if (name.rfind(dir, 0) == 0) name = name.substr(std::string(dir).size());
  return name == "python3" || name == "python" + minor;
}

}  // namespace

std::string preload_code(const std::vector<std::string>& modules) {
  std::string code = kWarmUp;
  code += "def _airlock_setup(modules):\n"
                     "    import gc, sys, types\n"
                     "    mod = types.ModuleType('_airlock_preload')\n"
                     "    exec(compile(";
  append_bytes_literal(code, kRunner);
  code += ", '<airlock runner>', 'exec'), mod.__dict__)\n"
          "    sys.modules['_airlock_preload'] = mod\n"
          "    for name in modules:\n"
          "        __import__(name)\n"
          "    _airlock_warm_up()\n"
          "    sys.stdout.flush()\n"
          "    sys.stderr.flush()\n"
          "    gc.collect()\n"
          "    gc.freeze()\n"
          "_airlock_setup([";
  for (const auto& m : modules) {
    append_bytes_literal(code, m.c_str());
    code += ".decode(),";
  }
  code += "])\ndel _airlock_setup\n";
  return code;
}

std::string runner_call(const char* const* argv, const char* const* env) {
  std::string code = "import _airlock_preload\n_airlock_preload.run(";
  append_list(code, argv);
  code += ", ";
  append_list(code, env);
  code += ")\n";
  return code;
}

bool preloadable(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const std::string& minor) {
  if (argv.size() < 2 || !is_python(argv[0], minor)) return false;
  // The interpreter started long before the job: a PYTHON* variable would
  // not take effect. Only the fixed PYTHONPATH (the data request helper's
  // directory) is applied by the runner itself.
  const std::string helper_path = std::string("PYTHONPATH=") + requests::kHelperDir;
  for (const auto& e : env)
    if (e.rfind("PYTHON", 0) == 0 && e != helper_path) return false;
  const std::string& first = argv[1];
  if (first == "-c" || first == "-m") return argv.size() >= 3;
  return !first.empty() && first[0] != '-';
}

}  // namespace airlock::sandbox
