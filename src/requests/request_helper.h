// The Python helper code in a sandbox imports to ask for data
// (`import airlock_request`): src/requests/airlock_request.py, compiled in by
// CMake (request_helper.cc.in) and put in the sandbox read-only by the host.
#pragma once

#include <string>

namespace airlock::requests {

// Where every sandbox has the module, whatever its image: a read-only file
// in the sandbox's own root (not the image's), on PYTHONPATH.
inline constexpr const char* kHelperDir = "/run/airlock/python";
// The module's file name inside its directory, and its source.
inline constexpr const char* kHelperModuleFile = "airlock_request.py";
const std::string& helper_source();

}  // namespace airlock::requests
