// Child side: the sandbox's filesystem. A fresh tmpfs becomes the root; the
// image, inputs and devices are bound into it; the host-made tmpfs mounts are
// attached; a fresh /proc with sensitive paths masked; then pivot_root, and
// the whole tree read-only except the writable mounts.
#pragma once

#include "sandbox/child_step.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

Step build_root(const SandboxSpec& spec);   // cwd ends at the new root
Step mount_proc(const SandboxSpec& spec);   // before the pivot (see the .cc)
Step pivot_into_root();                     // old root detached, cwd "/"
Step seal_readonly(const SandboxSpec& spec);

}  // namespace airlock::sandbox
