// What `airlock --version` prints: "airlock 0.1.0 (commit 0123456789ab)",
// the version of CMake's project() and the git commit the binary was built
// at (left out when the build had no git work tree). Generated at build
// time by cmd/airlock/version.cmake.
#pragma once

const char* airlock_version_text();
