#include "sandbox/command.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace airlock::sandbox {
namespace {

std::vector<std::string> strings(char** list) {
  std::vector<std::string> out;
  for (; *list != nullptr; ++list) out.emplace_back(*list);
  return out;
}

TEST(Command, RoundTripsArgvEnvCandidatesAndCwd) {
  Command c{{"python3", "-c", "", "print(1)"}, {"PATH=/usr/bin", "A="}, "/workspace/sub",
            {"/usr/bin/python3", "/bin/python3"}};
  auto encoded = encode_command(c);
  ASSERT_TRUE(encoded) << encoded.error().what;
  std::string buf = *encoded;
  char* slots[64];
  CommandView view;
  ASSERT_TRUE(decode_command(buf.data(), buf.size(), slots, 64, &view));
  EXPECT_EQ(strings(view.argv), c.argv);  // the empty argument survives
  EXPECT_EQ(strings(view.env), c.env);
  EXPECT_EQ(strings(view.candidates), c.exec_candidates);
  EXPECT_STREQ(view.cwd, "/workspace/sub");
}

TEST(Command, RefusesWhatCannotBeSent) {
  EXPECT_FALSE(encode_command({{}, {}, "/workspace", {}}));
  auto nul = encode_command({{std::string("a\0b", 3)}, {}, "/workspace", {}});
  ASSERT_FALSE(nul);
  EXPECT_NE(nul.error().what.find("NUL"), std::string::npos);
  EXPECT_FALSE(encode_command({{"x"}, {}, "relative", {}}));
  auto big = encode_command({{"x"}, {"BIG=" + std::string(kMaxCommandBytes, 'x')}, "/workspace", {}});
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().what.find("at most"), std::string::npos);
  std::vector<std::string> many(kMaxCommandStrings, "a");
  EXPECT_FALSE(encode_command({many, {}, "/workspace", {}}));
}

TEST(Command, DecodeRefusesEveryTruncationAndCorruption) {
  auto encoded = encode_command({{"sh", "-c", "true"}, {"PATH=/bin"}, "/workspace", {"/bin/sh"}});
  ASSERT_TRUE(encoded);
  char* slots[64];
  CommandView view;
  for (size_t len = 0; len < encoded->size(); ++len) {
    std::string cut = encoded->substr(0, len);
    EXPECT_FALSE(decode_command(cut.data(), cut.size(), slots, 64, &view)) << len;
  }
  std::string extra = *encoded + "x";
  EXPECT_FALSE(decode_command(extra.data(), extra.size(), slots, 64, &view));
  std::string huge_count = *encoded;
  uint32_t n = 1u << 30;
  std::memcpy(huge_count.data(), &n, 4);
  EXPECT_FALSE(decode_command(huge_count.data(), huge_count.size(), slots, 64, &view));
  std::string few_slots = *encoded;
  EXPECT_FALSE(decode_command(few_slots.data(), few_slots.size(), slots, 4, &view));
}

}  // namespace
}  // namespace airlock::sandbox

namespace airlock::sandbox {
namespace {

TEST(Command, RoundTripsAProfilesNarrowing) {
  Command c{{"python3"}, {}, "/workspace", {"/usr/bin/python3"}};
  c.restrict_writes = true;
  c.writable = {"/output", "/tmp"};
  c.layer = {{0x20, 0, 0, 4}, {0x06, 0, 0, 0x7fff0000}};
  auto encoded = encode_command(c);
  ASSERT_TRUE(encoded) << encoded.error().what;
  std::string buf = *encoded;
  char* slots[64];
  CommandView view;
  ASSERT_TRUE(decode_command(buf.data(), buf.size(), slots, 64, &view));
  EXPECT_EQ(strings(view.writable), c.writable);
  EXPECT_TRUE(view.restrict_writes);
  ASSERT_EQ(view.layer_count, 2u);
  sock_filter second;
  std::memcpy(&second, view.layer + sizeof(sock_filter), sizeof(second));
  EXPECT_EQ(second.k, 0x7fff0000u);
  EXPECT_STREQ(view.cwd, "/workspace");
  // Cut anywhere inside the layer: refused, never read past the end.
  for (size_t cut = 1; cut <= 2 * sizeof(sock_filter); ++cut) {
    std::string shorter = buf.substr(0, buf.size() - cut);
    EXPECT_FALSE(decode_command(shorter.data(), shorter.size(), slots, 64, &view)) << cut;
  }
}

}  // namespace
}  // namespace airlock::sandbox
