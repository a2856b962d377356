// Profiles only narrow `standard`: checked from the profile data and from the
// seccomp programs the builder makes, run here by a small classic-BPF
// interpreter (no kernel, no root) over every syscall number and a spread of
// argument values.
#include "sandbox/profile.h"

#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/sha256.h"
#include "sandbox/command.h"
#include "sandbox/seccomp_filter.h"

namespace airlock::sandbox {
namespace {

struct Data {  // struct seccomp_data
  int nr;
  uint32_t arch;
  uint64_t ip;
  uint64_t args[6];
};

// Runs a seccomp program the way the kernel does; the return value is the
// action with its data. Fails the test on an instruction it does not know.
uint32_t run_bpf(const SeccompProgram& p, const Data& d) {
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  unsigned char bytes[sizeof(Data)];
  std::memcpy(bytes, &d, sizeof(d));
  for (size_t pc = 0; pc < p.instructions.size(); ++pc) {
    const sock_filter& i = p.instructions[pc];
    auto load = [&](uint32_t off) {
      AIRLOCK_CHECK(off + 4 <= sizeof(bytes));
      uint32_t v;
      std::memcpy(&v, bytes + off, 4);
      return v;
    };
    auto jump = [&](bool taken) { pc += taken ? i.jt : i.jf; };
    switch (i.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        a = load(i.k);
        break;
      case BPF_LD | BPF_MEM:
        a = mem[i.k];
        break;
      case BPF_LDX | BPF_MEM:
        x = mem[i.k];
        break;
      case BPF_LD | BPF_IMM:
        a = i.k;
        break;
      case BPF_ST:
        mem[i.k] = a;
        break;
      case BPF_STX:
        mem[i.k] = x;
        break;
      case BPF_MISC | BPF_TAX:
        x = a;
        break;
      case BPF_MISC | BPF_TXA:
        a = x;
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= i.k;
        break;
      case BPF_ALU | BPF_OR | BPF_K:
        a |= i.k;
        break;
      case BPF_JMP | BPF_JA:
        pc += i.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        jump(a == i.k);
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        jump(a > i.k);
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        jump(a >= i.k);
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        jump((a & i.k) != 0);
        break;
      case BPF_JMP | BPF_JEQ | BPF_X:
        jump(a == x);
        break;
      case BPF_JMP | BPF_JGT | BPF_X:
        jump(a > x);
        break;
      case BPF_JMP | BPF_JGE | BPF_X:
        jump(a >= x);
        break;
      case BPF_RET | BPF_K:
        return i.k;
      case BPF_RET | BPF_A:
        return a;
      default:
        ADD_FAILURE() << "unknown BPF instruction 0x" << std::hex << i.code;
        return 0;
    }
  }
  ADD_FAILURE() << "the program fell off its end";
  return 0;
}

// The kernel's precedence: the lower the value of the action, the stricter
// (KILL_PROCESS < KILL_THREAD < TRAP < ERRNO < USER_NOTIF < TRACE < LOG < ALLOW).
int strictness(uint32_t ret) {
  uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
  if (action == SECCOMP_RET_KILL_PROCESS) return 0;
  return static_cast<int>(action >> 16) + 1;
}
// Stacked filters: the kernel runs all and applies the strictest answer.
uint32_t stacked(uint32_t base, uint32_t layer) {
  return strictness(layer) < strictness(base) ? layer : base;
}

const SeccompProgram& job_filter() {
  static const SeccompProgram p = [] {
    auto built = build_job_filter();
    AIRLOCK_CHECK(built.has_value());
    return *built;
  }();
  return p;
}

SeccompProgram layer_of(const Profile& p) {
  auto built = build_layer_filter(p.layer);
  EXPECT_TRUE(built) << built.error().message();
  return built ? *built : SeccompProgram{};
}

Data call(int nr, std::array<uint64_t, 6> args = {}) {
  Data d{nr, AUDIT_ARCH_X86_64, 0, {}};
  std::copy(args.begin(), args.end(), d.args);
  return d;
}

uint32_t verdict(const SeccompProgram& layer, const Data& d) {
  return layer.instructions.empty() ? SECCOMP_RET_ALLOW : run_bpf(layer, d);
}

TEST(Profile, StandardIsTodaysBoundaryAndTheDefault) {
  const Profile& s = standard_profile();
  EXPECT_EQ(s.name, "standard");
  EXPECT_EQ(all_profiles().front().name, "standard");
  EXPECT_TRUE(s.layer.empty());
  EXPECT_FALSE(s.restrict_writes);
  EXPECT_TRUE(s.network);
  EXPECT_TRUE(layer_of(s).instructions.empty());
  EXPECT_EQ(find_profile("compute")->name, "compute");
  EXPECT_EQ(find_profile("Compute"), nullptr);
  EXPECT_EQ(find_profile(""), nullptr);
  EXPECT_EQ(profile_names(), "standard, compute");
}

// The claim of the issue: every profile's syscall set, mounts and limits are
// within standard's.
TEST(Profile, EveryProfileIsWithinStandard) {
  const Profile& s = standard_profile();
  std::set<std::string> standard_writable(s.writable.begin(), s.writable.end());
  const std::array<uint64_t, 9> samples = {0,
                                           1,
                                           AF_UNIX,
                                           AF_INET,
                                           AF_INET6,
                                           AF_NETLINK,
                                           CLONE_THREAD | CLONE_VM | CLONE_SIGHAND | SIGCHLD,
                                           SIGCHLD,
                                           0xffffffffffffffffULL};
  for (const Profile& p : all_profiles()) {
    SCOPED_TRACE(p.name);
    // Mounts: what stays writable is a subset; network and sessions only lost.
    for (const auto& w : p.writable)
      EXPECT_TRUE(standard_writable.count(w)) << w << " is not writable in standard";
    EXPECT_TRUE(!p.network || s.network);
    EXPECT_TRUE(!p.sessions || s.sessions);
    EXPECT_TRUE(p.restrict_writes || p.writable == s.writable);
    // Limits: a profile has no rlimit, cgroup or size of its own (they come
    // from the job's policy, capped by the tenant); its environment sets only
    // variables, never a limit.
    for (const auto& [name, value] : p.env)
      EXPECT_TRUE(name == "HOME" || name == "MPLCONFIGDIR") << name;
    // Syscalls: standard with the layer stacked is never less strict than
    // standard, for every syscall number, each argument sample, and a foreign ABI.
    // The kernel's stacking guarantees this much for any layer; what can go
    // wrong is the layer itself, so it must also be exactly its data: a
    // syscall the profile names unconditionally never passes, one it does
    // not name always does (the effective set is standard's minus the rules).
    SeccompProgram layer = layer_of(p);
    std::set<int> named, always;
    for (const LayerRule& r : p.layer) {
      int nr = seccomp_syscall_resolve_name(r.syscall.c_str());
      ASSERT_GE(nr, 0) << r.syscall;
      named.insert(nr);
      if (r.arg < 0) always.insert(nr);
    }
    for (int nr = 0; nr < 480; ++nr) {
      for (uint64_t v : samples) {
        Data d = call(nr, {v, v, v, v, v, v});
        uint32_t base = run_bpf(job_filter(), d), own = verdict(layer, d);
        EXPECT_LE(strictness(stacked(base, own)), strictness(base)) << "syscall " << nr;
        EXPECT_TRUE(named.count(nr) || own == SECCOMP_RET_ALLOW)
            << "syscall " << nr << " is not in the profile";
        EXPECT_TRUE(!always.count(nr) || own != SECCOMP_RET_ALLOW)
            << "syscall " << nr << " passes the layer";
      }
    }
    Data i386 = call(SYS_getpid);
    i386.arch = AUDIT_ARCH_I386;
    EXPECT_EQ(verdict(layer, i386) & SECCOMP_RET_ACTION_FULL,
              p.layer.empty() ? SECCOMP_RET_ALLOW : SECCOMP_RET_KILL_PROCESS);
  }
}

TEST(Profile, ComputeLayerDoesWhatItsDataSays) {
  SeccompProgram layer = layer_of(*find_profile("compute"));
  ASSERT_FALSE(layer.instructions.empty());
  const uint32_t eperm = SECCOMP_RET_ERRNO | EPERM, enosys = SECCOMP_RET_ERRNO | ENOSYS;
  for (uint64_t family : {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET})
    EXPECT_EQ(run_bpf(layer, call(SYS_socket, {family, SOCK_STREAM})), eperm) << family;
  for (int nr : {SYS_connect, SYS_bind, SYS_listen, SYS_accept, SYS_accept4, SYS_fork, SYS_vfork})
    EXPECT_EQ(run_bpf(layer, call(nr)), eperm) << nr;
  EXPECT_EQ(run_bpf(layer, call(SYS_socketpair, {AF_UNIX, SOCK_STREAM})), SECCOMP_RET_ALLOW);
  // pthread_create's flags; fork's; a thread flag hidden above the low 32 bits.
  const uint64_t pthread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                           CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |
                           CLONE_CHILD_CLEARTID;
  EXPECT_EQ(run_bpf(layer, call(SYS_clone, {pthread})), SECCOMP_RET_ALLOW);
  EXPECT_EQ(run_bpf(layer, call(SYS_clone, {SIGCHLD})), eperm);
  EXPECT_EQ(run_bpf(layer, call(SYS_clone, {CLONE_VM | CLONE_VFORK | SIGCHLD})), eperm);
  EXPECT_EQ(run_bpf(layer, call(SYS_clone, {(uint64_t{CLONE_THREAD} << 32) | SIGCHLD})), eperm);
  EXPECT_EQ(run_bpf(layer, call(SYS_clone3)), enosys);
  EXPECT_EQ(run_bpf(layer, call(SYS_execve)), SECCOMP_RET_USER_NOTIF);
  EXPECT_EQ(run_bpf(layer, call(SYS_execveat, {1023, 0, 0, 0, 0x1000})), SECCOMP_RET_USER_NOTIF);
  for (int nr : {SYS_read, SYS_write, SYS_mmap, SYS_futex, SYS_openat, SYS_sendmsg})
    EXPECT_EQ(run_bpf(layer, call(nr)), SECCOMP_RET_ALLOW) << nr;
}

TEST(Profile, DigestIsTheSha256OfItsCanonicalJson) {
  std::set<std::string> digests;
  for (const Profile& p : all_profiles()) {
    std::string json = profile_json(p);
    EXPECT_EQ(profile_digest(p), "sha256:" + Sha256::of(json));
    EXPECT_EQ(profile_digest(p).size(), 7u + 64u);
    EXPECT_NE(json.find("\"name\":\"" + p.name + "\""), std::string::npos) << json;
    EXPECT_EQ(json.find(' '), std::string::npos) << "not canonical: " << json;
    digests.insert(profile_digest(p));
  }
  EXPECT_EQ(digests.size(), all_profiles().size());
  // A change of the data changes the digest.
  Profile changed = *find_profile("compute");
  changed.writable.push_back("/workspace");
  EXPECT_NE(profile_digest(changed), profile_digest(*find_profile("compute")));
}

TEST(Profile, ComputeRefusesNetworkDestinations) {
  EXPECT_EQ(profile_refusal(standard_profile(), true), "");
  EXPECT_EQ(profile_refusal(*find_profile("compute"), false), "");
  std::string why = profile_refusal(*find_profile("compute"), true);
  EXPECT_NE(why.find("allows no network"), std::string::npos) << why;
  EXPECT_NE(why.find("gateway"), std::string::npos) << why;
}

TEST(Profile, ApplyPutsTheNarrowingIntoTheCommand) {
  Command c{{"python3"}, {"PATH=/usr/bin", "HOME=/workspace"}, "/workspace", {}};
  ASSERT_TRUE(apply_profile(standard_profile(), {}, c));
  EXPECT_TRUE(c.layer.empty());
  EXPECT_FALSE(c.restrict_writes);
  EXPECT_EQ(c.env, (std::vector<std::string>{"PATH=/usr/bin", "HOME=/workspace"}));

  Command d{{"python3"}, {"PATH=/usr/bin", "HOME=/workspace"}, "/workspace", {}};
  ASSERT_TRUE(apply_profile(*find_profile("compute"), {}, d));
  EXPECT_FALSE(d.layer.empty());
  EXPECT_TRUE(d.restrict_writes);
  EXPECT_EQ(d.writable, find_profile("compute")->writable);
  EXPECT_NE(std::find(d.env.begin(), d.env.end(), "HOME=/tmp"), d.env.end());
  EXPECT_EQ(std::count_if(d.env.begin(), d.env.end(),
                          [](const std::string& e) { return e.starts_with("HOME="); }),
            1);

  // The user's own variable wins over the profile's default.
  Command e{{"python3"}, {"HOME=/output"}, "/workspace", {}};
  ASSERT_TRUE(apply_profile(*find_profile("compute"), {{"HOME", "/output"}}, e));
  EXPECT_NE(std::find(e.env.begin(), e.env.end(), "HOME=/output"), e.env.end());
}

}  // namespace
}  // namespace airlock::sandbox
