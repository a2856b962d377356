// The containment sequence, run by the sandbox child right after clone.
#pragma once

#include "sandbox/child_setup.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

// Never returns: on success it becomes the sandbox's init (which forks and
// execs the payload); on failure it reports the failed step and exits.
[[noreturn]] void contain_and_run(const SandboxSpec& spec, const ChildFds& fds);

}  // namespace airlock::sandbox
