// The sandbox's pid 1. It tells the host the sandbox is ready, waits for the
// job's command, forks the job's process (the payload), reaps every orphan,
// forwards signals the host asks for, tells the host how the payload ended,
// and exits, which makes the kernel kill whatever else is left in the pid
// namespace. It also exits when the host's end of the sync socket closes.
#pragma once

#include "sandbox/spec.h"

namespace airlock::sandbox {

[[noreturn]] void run_init(const SandboxSpec& spec);

}  // namespace airlock::sandbox
