#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "http/descriptor_gate.h"

namespace airlock::api {
namespace {

using Clock = std::chrono::steady_clock;

TEST(DescriptorGate, AConnectionThatWouldEatIntoTheReserveIsRefused) {
  uint64_t open = 700;
  int counts = 0;
  DescriptorGate gate(1024, 300, [&] {
    ++counts;
    return open;
  });
  auto t = Clock::now();
  EXPECT_TRUE(gate.admit(t));  // 700 + 300 <= 1024
  open = 724;
  EXPECT_TRUE(gate.admit(t + DescriptorGate::kRecount));  // recounted: exactly at the line
  open = 725;
  EXPECT_FALSE(gate.admit(t + 2 * DescriptorGate::kRecount));
  EXPECT_EQ(gate.refused(), 1u);
  // The jobs let go of descriptors: connections are taken again.
  open = 600;
  EXPECT_TRUE(gate.admit(t + 3 * DescriptorGate::kRecount));
  EXPECT_EQ(counts, 4);
}

TEST(DescriptorGate, BetweenCountsEachAcceptedConnectionCountsAsOneMore) {
  uint64_t open = 100;
  int counts = 0;
  DescriptorGate gate(1024, 900, [&] {
    ++counts;
    return open;
  });
  auto t = Clock::now();
  EXPECT_TRUE(gate.admit(t));                               // counted: 100
  for (int i = 0; i < 24; ++i) EXPECT_TRUE(gate.admit(t));  // estimates 101..124, no recount
  EXPECT_EQ(counts, 1);
  open = 130;                   // more than the estimate: near the line, so counted again
  EXPECT_FALSE(gate.admit(t));  // estimate 125 > 124 -> recount -> 130: refused
  EXPECT_EQ(counts, 2);
}

TEST(DescriptorGate, CountsThisProcesssDescriptors) {
  uint64_t before = count_open_descriptors();
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(count_open_descriptors(), before + 1);
  ::close(fd);
  EXPECT_EQ(count_open_descriptors(), before);
  EXPECT_GE(before, 3u);  // stdin, stdout, stderr at least
}

}  // namespace
}  // namespace airlock::api
