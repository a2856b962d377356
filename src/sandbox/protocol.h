// Messages between the host and the sandbox's init over a SOCK_SEQPACKET
// socket pair. Fixed-size, so both sides read them without allocation.
#pragma once

#include <cstdint>

namespace airlock::sandbox {

enum class MsgKind : uint32_t {
  kGo = 1,       // host -> child: ids are mapped, cgroup joined; continue
  kError = 2,    // child -> host: a containment step failed (step, value=errno)
  kStarted = 3,  // child -> host: the payload was forked (value = its pid inside)
  kExited = 4,   // child -> host: the payload ended (value = wait status)
};

struct Msg {
  MsgKind kind;
  int32_t value;
  char step[96];
};

// The fd number the sync socket has inside the sandbox's init.
inline constexpr int kSyncFd = 3;

}  // namespace airlock::sandbox
