#include "jobs/session_kernel.h"

namespace airlock::jobs {

const std::string& kernel_source() {
  static const std::string source = R"PY(
import ast, base64, io, json, os, sys, time, traceback

_MARK = "\x1eairlock-kernel "
_channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8", errors="replace")
_ns = {"__name__": "__main__", "__builtins__": __builtins__}

def _send(message):
    _channel.write(_MARK + json.dumps(message) + "\n")
    _channel.flush()

def _figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    out = []
    for num in plt.get_fignums():
        buf = io.BytesIO()
        plt.figure(num).savefig(buf, format="png")
        out.append(base64.b64encode(buf.getvalue()).decode())
    plt.close("all")
    return out

def _run(request):
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    status, result, html, error = "ok", None, None, None
    started = time.monotonic()
    sys.stdout, sys.stderr = out, err
    try:
        tree = ast.parse(request.get("code", ""), "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), _ns)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), _ns)
            if value is not None:
                _ns["_"] = value
                result = repr(value)
                if hasattr(value, "_repr_html_"):
                    try:
                        html = value._repr_html_()
                    except Exception:
                        html = None
    except KeyboardInterrupt:
        status, error = "interrupted", "KeyboardInterrupt"
    except SystemExit as e:
        status, error = "error", "SystemExit(%r): a session's kernel does not exit; close the session" % (e.code,)
    except BaseException as e:
        status = "error"
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<cell>":
            tb = tb.tb_next
        error = "".join(traceback.format_exception(type(e), e, tb))
    finally:
        sys.stdout, sys.stderr = saved
    try:
        figures = _figures()
    except Exception as e:
        figures, err = [], io.StringIO(err.getvalue() + "figures: %s\n" % e)
    _send({"id": request.get("id"), "status": status, "stdout": out.getvalue(), "stderr": err.getvalue(),
           "result": result, "html": html, "error": error, "figures": figures,
           "ms": round((time.monotonic() - started) * 1000, 3)})

_send({"id": "ready"})
_stdin = sys.stdin.buffer
while True:
    try:
        line = _stdin.readline()
    except KeyboardInterrupt:
        continue  # an interrupt between calls
    if not line:
        break
    try:
        request = json.loads(line)
    except ValueError:
        _send({"id": None, "status": "error", "error": "not a JSON request"})
        continue
    try:
        _run(request)
    except KeyboardInterrupt:  # landed outside the cell's own try
        _send({"id": request.get("id"), "status": "interrupted", "error": "KeyboardInterrupt"})
)PY";
  return source;
}

}  // namespace airlock::jobs
