// A profile's narrowing, applied in the sandbox (sandbox/profile.h): the
// payload, forked by init, confines itself just before it starts (Landlock
// over the writable paths, then the profile's seccomp layer), and init
// answers the layer's user notifications: the payload's first exec may
// proceed, every later one fails with EPERM. Both halves run in init's
// address space after fork: no allocation.
#pragma once

#include "sandbox/command.h"

namespace airlock::sandbox {

// True when `command` narrows the payload (a layer or restricted writes).
bool narrows(const CommandView& command);

// Payload side. Applies Landlock and the layer, and sends the layer's
// listener fd to init over `gate_sock`. False (errno set) on failure: the
// payload must then not start.
bool narrow_payload(const CommandView& command, int gate_sock);

// Init side: receives the listener the payload sent (-1 if none came) and
// answers one notification (execs left: `exec_budget`, decremented when one
// is let through). Returns false when the listener is finished (every task
// under the layer has gone): stop polling it.
int receive_exec_gate(int gate_sock);
bool answer_exec_gate(int listener, int* exec_budget);

}  // namespace airlock::sandbox
