// The Python of the preloaded interpreter, kept as .py files
// (src/sandbox/preload_runner.py, preload_warm_up.py, tested in
// tests/preload_py) and compiled in by CMake (preload_sources.cc.in).
#pragma once

namespace airlock::sandbox {

const char* preload_runner_source();   // the module _airlock_preload: run(argv, env)
const char* preload_warm_up_source();  // defines _airlock_warm_up()

}  // namespace airlock::sandbox
