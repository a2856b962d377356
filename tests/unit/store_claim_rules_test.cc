// The store's pure queue rules: warm image lists and the warm preference.
#include <gtest/gtest.h>

#include "store/claim_rules.h"

namespace airlock::store {
namespace {

TEST(StoreClaimRules, WarmImagesRoundTripAndACommaIsRefused) {
  std::vector<std::string> images{"python:3.12", "node:22@sha256:ab"};
  EXPECT_EQ(join_images(images), "python:3.12,node:22@sha256:ab");
  EXPECT_EQ(split_images(join_images(images)), images);
  EXPECT_TRUE(split_images("").empty());
  EXPECT_EQ(split_images(",a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(check_node_fields("n1", images));
  auto comma = check_node_fields("n1", {"a,b"});
  ASSERT_FALSE(comma);
  EXPECT_EQ(comma.error().kind, ErrorKind::kInvalid);
  EXPECT_FALSE(check_node_fields("n1", {""}));
  EXPECT_FALSE(check_node_fields("", {}));
}

TEST(StoreClaimRules, AYoungJobWarmElsewhereIsLeftToThatNode) {
  std::vector<std::string> mine{"node:22"};
  std::set<std::string> others{"python:3.12"};
  std::string image = "python:3.12@sha256:" + std::string(64, 'f');
  WarmCheck c{.job_image = image, .created_ms = 1000, .now_ms = 1100,
              .prefer_warm_ms = 200, .mine = &mine, .others = &others};
  EXPECT_TRUE(leave_to_warm_node(c));
  c.now_ms = 1200;  // waited prefer_warm_ms: anyone takes it
  EXPECT_FALSE(leave_to_warm_node(c));
  c.now_ms = 1100;
  mine.push_back("python:3.12");  // warm here too: no reason to wait
  EXPECT_FALSE(leave_to_warm_node(c));
  mine.pop_back();
  c.job_image = "ruby:3";  // warm nowhere
  EXPECT_FALSE(leave_to_warm_node(c));
  c.job_image = "";  // no image (host jobs)
  EXPECT_FALSE(leave_to_warm_node(c));
  c.job_image = "python:3.12";  // a warm entry with a digest matches by name too
  others = {"python:3.12@sha256:00"};
  EXPECT_TRUE(leave_to_warm_node(c));
  c.prefer_warm_ms = 0;  // preference off
  EXPECT_FALSE(leave_to_warm_node(c));
}

}  // namespace
}  // namespace airlock::store
