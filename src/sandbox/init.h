// The sandbox's pid 1. It forks the job's process (the payload), reaps every
// orphan, tells the host how the payload ended, and exits, which makes the
// kernel kill whatever else is left in the pid namespace.
#pragma once

#include "sandbox/spec.h"

namespace airlock::sandbox {

[[noreturn]] void run_init(const SandboxSpec& spec);

}  // namespace airlock::sandbox
