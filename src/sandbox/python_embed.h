// The image's Python interpreter, loaded into this process (dlopen of its
// libpython) so that a preloaded interpreter is airlock code and Python in one
// process: airlock's clone and containment steps run in it, and the job's
// payload is a fork that continues in Python. Only the handful of C API calls
// needed, looked up by name: no Python headers at build time.
#pragma once

#include <string>

#include "base/result.h"

namespace airlock::sandbox {

class EmbeddedPython {
 public:
  // `library`: e.g. "libpython3.11.so.1.0"; `program`: what sys.executable
  // should be, e.g. "/usr/bin/python3".
  static Result<EmbeddedPython> start(const std::string& library, const std::string& program);

  // Runs `code` in __main__; false if it raised (the traceback went to stderr).
  // SystemExit ends the process (Python's own handling).
  bool run(const std::string& code) const;

  // Around a fork, exactly what os.fork() does.
  void before_fork() const { before_fork_(); }
  void after_fork_parent() const { after_fork_parent_(); }
  void after_fork_child() const { after_fork_child_(); }

 private:
  using VoidFn = void (*)();
  using RunFn = int (*)(const char*, void*);
  EmbeddedPython() = default;
  RunFn run_ = nullptr;
  VoidFn before_fork_ = nullptr, after_fork_parent_ = nullptr, after_fork_child_ = nullptr;
};

// "3.11" for the interpreter `python` links to (e.g. /usr/bin/python3 ->
// python3.11), or an error if it is not a CPython 3.
Result<std::string> python_version(const std::string& python);
// Its shared library: "libpython3.11.so.1.0".
inline std::string libpython_of(const std::string& version) { return "libpython" + version + ".so.1.0"; }

}  // namespace airlock::sandbox
