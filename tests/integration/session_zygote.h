// The preloaded interpreter for session tests: one per test process, started
// on first use (seconds: it imports pandas and pyplot) and stopped at exit.
// SESSION_START=preloaded makes the whole session suite open its sessions
// from it (tests/CMakeLists.txt runs the suite both ways).
#pragma once

#include "sandbox/zygote.h"

namespace airlock::testing {

// The shared zygote; a failure to start it fails the calling test.
sandbox::Zygote* session_zygote();
// True when SESSION_START=preloaded.
bool sessions_preloaded();

}  // namespace airlock::testing
