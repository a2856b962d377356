#include "sandbox/preload_python.h"

#include <cstdio>

#include "requests/request_helper.h"
#include "sandbox/preload_sources.h"

namespace airlock::sandbox {
namespace {

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
  std::string code = preload_warm_up_source();
  code += "def _airlock_setup(modules):\n"
                     "    import gc, sys, types\n"
                     "    mod = types.ModuleType('_airlock_preload')\n"
                     "    exec(compile(";
  append_bytes_literal(code, preload_runner_source());
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
