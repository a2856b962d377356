// The Python side of the preloaded interpreter, as source text run inside it:
// the preload (import the data stack once, then freeze the heap so forks share
// it), and the runner each job's payload calls to become `python3 SCRIPT`,
// `python3 -c CODE` or `python3 -m MODULE` with the job's argv and environment.
#pragma once

#include <string>
#include <vector>

namespace airlock::sandbox {

// Code that imports `modules` and defines the runner module.
std::string preload_code(const std::vector<std::string>& modules);

// Code that runs a job: argv as given to the sandbox (argv[0] is the
// interpreter) and NAME=VALUE environment. Bytes are escaped, so any content
// is safe to embed.
std::string runner_call(const char* const* argv, const char* const* env);

// True when `argv` is a form the runner supports: PYTHON [-c CODE | -m MODULE | SCRIPT] ARGS...
// where PYTHON is `python3` or `python3.<minor>` (`/usr/bin/...` or `/bin/...` or bare),
// and `env` sets no PYTHON* variable (those change how an interpreter starts)
// but PYTHONPATH=requests::kHelperDir, which the runner applies itself.
bool preloadable(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const std::string& minor_version /* e.g. "3.11" */);

}  // namespace airlock::sandbox
