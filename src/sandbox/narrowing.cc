#include "sandbox/narrowing.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace airlock::sandbox {
namespace {

// Landlock rights (linux/landlock.h; newer than some installed headers).
constexpr uint64_t kWriteFile = 1ULL << 1;
constexpr uint64_t kWriteRights = kWriteFile | (1ULL << 4) /*REMOVE_DIR*/ |
                                  (1ULL << 5) /*REMOVE_FILE*/ | (1ULL << 6) /*MAKE_CHAR*/ |
                                  (1ULL << 7) /*MAKE_DIR*/ | (1ULL << 8) /*MAKE_REG*/ |
                                  (1ULL << 9) /*MAKE_SOCK*/ | (1ULL << 10) /*MAKE_FIFO*/ |
                                  (1ULL << 11) /*MAKE_BLOCK*/ | (1ULL << 12) /*MAKE_SYM*/;
constexpr uint64_t kRefer = 1ULL << 13;     // ABI 2
constexpr uint64_t kTruncate = 1ULL << 14;  // ABI 3

struct RulesetAttr {  // the ABI 1 layout; later fields stay 0
  uint64_t handled_access_fs;
};
struct __attribute__((packed)) PathBeneath {
  uint64_t allowed_access;
  int32_t parent_fd;
};

// Static: the payload is a fork of init, which never allocates.
sock_filter g_layer[BPF_MAXINSNS];

// Only `writable` may be written: every write right is handled, and granted
// beneath each writable directory (file rights only on a writable file).
bool restrict_writes(char* const* writable) {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return false;
  uint64_t handled = kWriteRights | (abi >= 2 ? kRefer : 0) | (abi >= 3 ? kTruncate : 0);
  RulesetAttr attr{handled};
  int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0));
  if (ruleset < 0) return false;
  bool ok = true;
  for (char* const* path = writable; ok && *path != nullptr; ++path) {
    int fd = ::open(*path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
      ok = errno == ENOENT;  // not in this sandbox: nothing to allow
      continue;
    }
    struct stat st {};
    ok = ::fstat(fd, &st) == 0;
    PathBeneath rule{S_ISDIR(st.st_mode) ? handled : handled & (kWriteFile | kTruncate), fd};
    if (ok)
      ok = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0;
    ::close(fd);
  }
  if (ok) ok = ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  int saved = errno;
  ::close(ruleset);
  errno = saved;
  return ok;
}

// One byte with room for one fd: the message that carries the listener.
struct FdMessage {
  char byte = 'L';
  iovec iov{};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  FdMessage() {
    iov = {&byte, 1};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

bool send_fd(int sock, int fd) {
  FdMessage m;
  msghdr& msg = m.msg;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return ::sendmsg(sock, &msg, MSG_NOSIGNAL) == 1;
}

}  // namespace

bool narrows(const CommandView& c) { return c.layer_count > 0 || c.restrict_writes; }

bool narrow_payload(const CommandView& c, int gate_sock) {
  if (c.restrict_writes && !restrict_writes(c.writable)) return false;
  if (c.layer_count == 0) return true;
  if (c.layer_count > BPF_MAXINSNS) {
    errno = EINVAL;
    return false;
  }
  std::memcpy(g_layer, c.layer, c.layer_count * sizeof(sock_filter));
  sock_fprog prog{static_cast<unsigned short>(c.layer_count), g_layer};
  long listener =
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (listener < 0) return false;
  bool sent = send_fd(gate_sock, static_cast<int>(listener));
  int saved = errno;
  ::close(static_cast<int>(listener));
  errno = saved;
  return sent;
}

int receive_exec_gate(int gate_sock) {
  FdMessage m;
  msghdr& msg = m.msg;
  ssize_t n;
  do n = ::recvmsg(gate_sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  cmsghdr* c = n == 1 ? CMSG_FIRSTHDR(&msg) : nullptr;
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int)))
    return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

bool answer_exec_gate(int listener, int* exec_budget) {
  seccomp_notif req;
  std::memset(&req, 0, sizeof(req));  // the kernel insists
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
    return errno == EINTR || errno == ENOENT;  // ENOENT: the caller died meanwhile
  seccomp_notif_resp resp;
  std::memset(&resp, 0, sizeof(resp));
  resp.id = req.id;
  bool is_exec = req.data.nr == SYS_execve || req.data.nr == SYS_execveat;
  if (is_exec && *exec_budget > 0) {
    // No argument is read: the decision is only "the first one", so the
    // usual race of CONTINUE (memory changed after the check) does not apply.
    --*exec_budget;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  } else {
    resp.error = -EPERM;
  }
  (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  return true;
}

}  // namespace airlock::sandbox
