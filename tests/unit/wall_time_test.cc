// The billed wall time of a job (jobs/wall_time.h): whole milliseconds rounded
// up, never 0 for a job that ran.
#include "jobs/wall_time.h"

#include <gtest/gtest.h>

using airlock::jobs::billed_wall_ms;
using namespace std::chrono_literals;

TEST(BilledWallMs, APayloadShorterThanAMillisecondIsBilledOne) {
  EXPECT_EQ(billed_wall_ms(1ns), 1u);
  EXPECT_EQ(billed_wall_ms(350us), 1u);
  EXPECT_EQ(billed_wall_ms(999'999ns), 1u);
  // A clock read twice in one tick, or read backwards: the job still ran.
  EXPECT_EQ(billed_wall_ms(0ns), 1u);
  EXPECT_EQ(billed_wall_ms(-5ns), 1u);
}

TEST(BilledWallMs, PartsOfAMillisecondAreRoundedUp) {
  EXPECT_EQ(billed_wall_ms(1ms), 1u);
  EXPECT_EQ(billed_wall_ms(1ms + 1ns), 2u);
  EXPECT_EQ(billed_wall_ms(1500us), 2u);
  EXPECT_EQ(billed_wall_ms(2s), 2000u);
  EXPECT_EQ(billed_wall_ms(std::chrono::hours(24) + 1us), 86'400'001u);
}
