// When the warm pool's refill waits for a running job (pool/refill_hold.h).
#include <gtest/gtest.h>

#include "pool/refill_hold.h"

namespace airlock::jobs {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kMax{100};

TEST(RefillHold, WaitsWhileAJobRunsAndTheClassStillHasASandbox) {
  EXPECT_TRUE(hold_back_refill({.ready = 3, .running = 1, .waited = milliseconds(0), .cpus = 2}, kMax));
  EXPECT_TRUE(hold_back_refill({.ready = 1, .running = 3, .waited = milliseconds(99), .cpus = 4}, kMax));
  EXPECT_TRUE(hold_back_refill({.ready = 1, .running = 1, .waited = milliseconds(0), .cpus = 1}, kMax));
}

TEST(RefillHold, AsManyJobsAsCpusRefillAtOnce) {
  // A steady load: holding back would only empty the class.
  EXPECT_FALSE(hold_back_refill({.ready = 3, .running = 2, .waited = milliseconds(0), .cpus = 2}, kMax));
  EXPECT_FALSE(hold_back_refill({.ready = 3, .running = 5, .waited = milliseconds(0), .cpus = 4}, kMax));
  EXPECT_FALSE(hold_back_refill({.ready = 3, .running = 2, .waited = milliseconds(0), .cpus = 1}, kMax));
}

TEST(RefillHold, AnEmptyClassRefillsAtOnce) {
  // Its next job would otherwise start cold, doing the same work on its own path.
  EXPECT_FALSE(hold_back_refill({.ready = 0, .running = 4, .waited = milliseconds(0)}, kMax));
}

TEST(RefillHold, NoJobRunningRefillsAtOnce) {
  EXPECT_FALSE(hold_back_refill({.ready = 2, .running = 0, .waited = milliseconds(0)}, kMax));
}

TEST(RefillHold, TheHoldIsBounded) {
  // A long job does not keep its class short for its whole run.
  EXPECT_FALSE(hold_back_refill({.ready = 2, .running = 1, .waited = milliseconds(100)}, kMax));
  EXPECT_FALSE(hold_back_refill({.ready = 2, .running = 1, .waited = milliseconds(5000)}, kMax));
}

TEST(RefillHold, ZeroTurnsTheHoldOff) {
  EXPECT_FALSE(hold_back_refill({.ready = 2, .running = 1, .waited = milliseconds(0)}, milliseconds(0)));
}

}  // namespace
}  // namespace airlock::jobs
