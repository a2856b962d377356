// Messages between the host and the sandbox's init over a SOCK_SEQPACKET
// socket pair. Fixed-size, so both sides read them without allocation.
#pragma once

#include <cstdint>

namespace airlock::sandbox {

// A sandbox is prepared first (contained, init waiting) and started later:
//   host: kGo -> child: kReady ... host: kRun + command -> init: kStarted ... kExited
// The time between kReady and kRun is what a warm pool keeps in stock.
enum class MsgKind : uint32_t {
  kGo = 1,       // host -> child: ids are mapped, cgroup joined; continue
  kError = 2,    // child -> host: a containment step failed (step, value=errno)
  kStarted = 3,  // init -> host: the payload was forked (value = its pid inside)
  kExited = 4,   // init -> host: the payload ended (value = wait status)
  kReady = 5,    // init -> host: contained; waiting for the command
  kRun = 6,      // host -> init: the next message is the encoded command (value = its size);
                 // may carry the job's request channel (SCM_RIGHTS, kRequestFd)
  kSignal = 7,   // host -> init: send signal `value` to the payload's process group
};

struct Msg {
  MsgKind kind;
  int32_t value;
  char step[96];
};

// When the host's end of the socket closes, init exits, and with it every
// process of the sandbox: a sandbox never outlives whoever holds it.

// The fd number the sync socket has inside the sandbox's init.
inline constexpr int kSyncFd = 3;

// The fd number of a job's data request channel in its payload (the write
// end of a pipe the host reads; docs/data-requests.md). The host attaches it
// to kRun (SCM_RIGHTS), so a sandbox prepared ahead gets it too; init keeps
// no copy once the payload runs. Its number is the sync socket's, which the
// payload never has.
inline constexpr int kRequestFd = 3;

}  // namespace airlock::sandbox
