#include "images/image_ref.h"

#include <gtest/gtest.h>

using airlock::images::check_image_name;
using airlock::images::format_image_ref;
using airlock::images::is_image_digest;
using airlock::images::parse_image_ref;

namespace {
const std::string kDigest = "sha256:" + std::string(64, 'a');
}

TEST(ImageRef, NameAlone) {
  auto ref = parse_image_ref("python-data");
  ASSERT_TRUE(ref) << ref.error().what;
  EXPECT_EQ(ref->name, "python-data");
  EXPECT_EQ(ref->digest, "");
  EXPECT_EQ(format_image_ref(*ref), "python-data");
}

TEST(ImageRef, Pinned) {
  auto ref = parse_image_ref("minimal@" + kDigest);
  ASSERT_TRUE(ref) << ref.error().what;
  EXPECT_EQ(ref->name, "minimal");
  EXPECT_EQ(ref->digest, kDigest);
  EXPECT_EQ(format_image_ref(*ref), "minimal@" + kDigest);
}

TEST(ImageRef, NamesThatAreNotImageNames) {
  struct Case {
    std::string name, reason;
  };
  for (const Case& c : std::vector<Case>{
           {"", "empty"},
           {"Python", "lower-case"},
           {"-x", "must start"},
           {".hidden", "must start"},
           {"../etc", "must start"},
           {"a/b", "may contain only"},
           {"a b", "may contain only"},
           {std::string(64, 'a'), "longer than 63"},
       }) {
    auto ref = parse_image_ref(c.name);
    ASSERT_FALSE(ref) << c.name;
    EXPECT_NE(ref.error().what.find(c.reason), std::string::npos)
        << c.name << ": " << ref.error().what;
  }
  EXPECT_TRUE(check_image_name(std::string(63, 'a')));
  EXPECT_TRUE(check_image_name("0.1_x-y"));
}

TEST(ImageRef, DigestsThatAreNotDigests) {
  for (std::string digest : std::vector<std::string>{
           "", "sha256:", "sha256:" + std::string(63, 'a'), "sha256:" + std::string(65, 'a'),
           "sha256:" + std::string(64, 'A'), "md5:" + std::string(64, 'a'),
           "sha256:" + std::string(63, 'a') + "g"}) {
    EXPECT_FALSE(is_image_digest(digest)) << digest;
    auto ref = parse_image_ref("minimal@" + digest);
    ASSERT_FALSE(ref) << digest;
    EXPECT_NE(ref.error().what.find("64 lower-case hex"), std::string::npos) << ref.error().what;
  }
}

TEST(ImageRef, HostCannotBePinned) {
  EXPECT_TRUE(parse_image_ref("host"));
  auto ref = parse_image_ref("host@" + kDigest);
  ASSERT_FALSE(ref);
  EXPECT_NE(ref.error().what.find("cannot be pinned"), std::string::npos);
}

TEST(ImageRef, ErrorShowsTerminalControlsInert) {
  auto ref = parse_image_ref("bad\x1b]0;title\x07name");
  ASSERT_FALSE(ref);
  EXPECT_EQ(ref.error().what.find('\x1b'), std::string::npos) << ref.error().what;
  EXPECT_NE(ref.error().what.find("\\x1b"), std::string::npos) << ref.error().what;
}
