#include "sandbox/python_embed.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cwchar>

namespace airlock::sandbox {

Result<std::string> python_version(const std::string& python) {
  char resolved[PATH_MAX];
  if (::realpath(python.c_str(), resolved) == nullptr) return fail_errno("find " + python);
  std::string name = resolved;
  name = name.substr(name.rfind('/') + 1);  // "python3.11"
  if (name.rfind("python3.", 0) != 0 || name.size() < 9 ||
      name.find_first_not_of("0123456789", 8) != std::string::npos)
    return fail(python + " is not a CPython 3 interpreter (" + name + ")");
  return name.substr(6);
}

Result<EmbeddedPython> EmbeddedPython::start(const std::string& library, const std::string& program) {
  // RTLD_GLOBAL: extension modules (numpy's .so files) resolve the C API from it.
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) return fail("load " + library + ": " + ::dlerror());
  auto sym = [&](const char* name) { return ::dlsym(lib, name); };
  auto decode = reinterpret_cast<wchar_t* (*)(const char*, size_t*)>(sym("Py_DecodeLocale"));
  auto set_program = reinterpret_cast<void (*)(const wchar_t*)>(sym("Py_SetProgramName"));
  auto initialize = reinterpret_cast<void (*)(int)>(sym("Py_InitializeEx"));
  EmbeddedPython py;
  py.run_ = reinterpret_cast<RunFn>(sym("PyRun_SimpleStringFlags"));
  py.before_fork_ = reinterpret_cast<VoidFn>(sym("PyOS_BeforeFork"));
  py.after_fork_parent_ = reinterpret_cast<VoidFn>(sym("PyOS_AfterFork_Parent"));
  py.after_fork_child_ = reinterpret_cast<VoidFn>(sym("PyOS_AfterFork_Child"));
  if (!decode || !set_program || !initialize || !py.run_ || !py.before_fork_ ||
      !py.after_fork_parent_ || !py.after_fork_child_)
    return fail(library + " lacks a function of the Python C API airlock uses");
  // Kept for the life of the process, as Py_SetProgramName requires.
  static wchar_t* program_name = nullptr;
  program_name = decode(program.c_str(), nullptr);
  if (program_name == nullptr) return fail("decode the program name " + program);
  set_program(program_name);
  initialize(1);  // with Python's signal handlers, as python3 itself has them
  return py;
}

bool EmbeddedPython::run(const std::string& code) const { return run_(code.c_str(), nullptr) == 0; }

}  // namespace airlock::sandbox
