// The pool's "none" answer over a real socketpair: the client gets the kind
// the pool gave (kUnavailable means "wait for a refill"), never a kind it
// guessed from the text, and a forged or garbled answer is never a reason to
// wait.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/unique_fd.h"
#include "base/wire.h"
#include "pool/handover.h"
#include "sandbox/cgroup.h"
#include "sys/fd_passing.h"

namespace airlock::jobs {
namespace {

struct Pair {
  UniqueFd pool, client;
  Pair() {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    pool = UniqueFd(sv[0]);
    client = UniqueFd(sv[1]);
  }
};

// Never used for a "none" answer (nothing to reopen); a path that does not exist.
std::unique_ptr<sandbox::CgroupBackend> no_cgroups() {
  return sandbox::make_cgroup_v2_backend("/nonexistent-airlock-test-root");
}

Error answer_of(const std::string& message) {
  Pair p;
  EXPECT_TRUE(sys::send_with_fds(p.pool.get(), message, {}));
  auto cgroups = no_cgroups();
  auto got = receive_prepared(p.client.get(), *cgroups);
  EXPECT_FALSE(got);
  return got ? Error{} : got.error();
}

TEST(PoolHandover, AnEmptyClassIsUnavailableWithThePoolsReason) {
  Error e = answer_of(none_reply(
      Error{"the warm pool's class is empty right now (k)", 0, ErrorKind::kUnavailable}));
  EXPECT_EQ(e.kind, ErrorKind::kUnavailable);
  EXPECT_EQ(e.what, "the warm pool's class is empty right now (k)");
}

TEST(PoolHandover, AnUnknownClassAndABadRequestAreNotWorthWaitingFor) {
  Error none =
      answer_of(none_reply(Error{"the warm pool keeps no class k", 0, ErrorKind::kNotFound}));
  EXPECT_EQ(none.kind, ErrorKind::kNotFound);
  Error bad = answer_of(none_reply(Error{"a malformed request", 0, ErrorKind::kInvalid}));
  EXPECT_EQ(bad.kind, ErrorKind::kInvalid);
}

TEST(PoolHandover, TheKindComesFromTheWireNotFromTheText) {
  // Text that once meant "wait" ("empty right now"), with a not-found kind.
  Error e = answer_of(none_reply(Error{"empty right now", 0, ErrorKind::kNotFound}));
  EXPECT_EQ(e.kind, ErrorKind::kNotFound);
}

TEST(PoolHandover, GarbledNoneAnswersAreMalformedNotUnavailable) {
  wire::Writer unknown;  // a kind number this build does not know
  unknown.str("none");
  unknown.str("?");
  unknown.u32(9999);
  EXPECT_EQ(answer_of(unknown.take()).kind, ErrorKind::kInternal);
  wire::Writer old;  // the old answer without a kind
  old.str("none");
  old.str("the warm pool's class is empty right now (k)");
  Error e = answer_of(old.take());
  EXPECT_EQ(e.kind, ErrorKind::kInternal);
  EXPECT_EQ(e.what, "the warm pool sent a malformed answer");
  wire::Writer extra;  // trailing bytes
  extra.str("none");
  extra.str("x");
  extra.u32(static_cast<uint32_t>(ErrorKind::kUnavailable));
  extra.u32(0);
  EXPECT_EQ(answer_of(extra.take()).kind, ErrorKind::kInternal);
}

TEST(PoolHandover, ASandboxOfAnInterpreterThisBuildDoesNotKnowIsMalformed) {
  wire::Writer w;  // 0: exec'd, 1: the data stack's, 2: the standard library's interpreter
  w.str("sandbox");
  w.str("0123456789abcdef");
  w.str("host/python net=lo");
  w.u32(3);
  Error e = answer_of(w.take());
  EXPECT_EQ(e.kind, ErrorKind::kInternal);
  EXPECT_EQ(e.what, "the warm pool sent a malformed answer");
}

}  // namespace
}  // namespace airlock::jobs
