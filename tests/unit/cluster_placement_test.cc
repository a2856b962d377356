// Which worker gets a new session (cluster/placement.h).
#include "cluster/placement.h"

#include <gtest/gtest.h>

namespace airlock::cluster {
namespace {

NodeLoad worker(std::string id, int slots, int sessions, std::string state = "up") {
  return {std::move(id), "worker", std::move(state), slots, sessions};
}

TEST(Placement, MostFreeSlotsWins) {
  EXPECT_EQ(place_session({worker("w1", 4, 3), worker("w2", 4, 1), worker("w3", 8, 6)}), "w2");
  EXPECT_EQ(place_session({worker("w1", 4, 0), worker("w2", 8, 3)}), "w2");  // 5 free beats 4
}

TEST(Placement, TiesGoToTheSmallestIdWhateverTheOrder) {
  EXPECT_EQ(place_session({worker("w3", 4, 1), worker("w1", 4, 1), worker("w2", 4, 1)}), "w1");
  EXPECT_EQ(place_session({worker("w2", 4, 1), worker("w10", 4, 1)}), "w10");  // by id text
}

TEST(Placement, OnlyUpWorkersWithAFreeSlot) {
  EXPECT_EQ(place_session({worker("w1", 4, 4), worker("w2", 4, 0, "draining"), worker("w3", 9, 0, "lost"),
                           worker("w4", 9, 0, "left"), {"a1", "api", "up", 99, 0}, worker("w5", 0, 0)}),
            std::nullopt);
  EXPECT_EQ(place_session({worker("w1", 4, 5)}), std::nullopt);  // over its slots (a stale count)
  EXPECT_EQ(place_session({}), std::nullopt);
  EXPECT_EQ(place_session({worker("w1", 4, 4), worker("w2", 4, 3, "draining"), worker("w3", 2, 1)}), "w3");
}

TEST(Placement, ExcludedNodesAreSkipped) {
  EXPECT_EQ(place_session({worker("w1", 8, 0), worker("w2", 4, 0)}, {"w1"}), "w2");
  EXPECT_EQ(place_session({worker("w1", 8, 0)}, {"w1"}), std::nullopt);
}

}  // namespace
}  // namespace airlock::cluster
