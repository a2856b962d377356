// Name rules and the printable rendering of hostile names.
#include "workspace/names.h"

#include <gtest/gtest.h>

#include <string>

namespace airlock::workspace {
namespace {

TEST(NamesTest, AcceptsOrdinaryNames) {
  for (std::string_view ok : {"data.csv", "chart_1.png", "a", "Report 2024.pdf", "x+y-z.txt",
                              "UPPER.JSON", "trailing."}) {
    EXPECT_EQ(check_component(ok), std::nullopt) << ok;
  }
  EXPECT_EQ(check_component(std::string(128, 'a')), std::nullopt);
}

TEST(NamesTest, RefusesBadComponents) {
  EXPECT_EQ(check_component(""), "empty name");
  EXPECT_EQ(check_component("."), "name starts with '.'");
  EXPECT_EQ(check_component(".."), "name starts with '.'");
  EXPECT_EQ(check_component(".hidden"), "name starts with '.'");
  EXPECT_EQ(check_component("-rf"), "name starts with '-'");
  EXPECT_EQ(check_component(" x"), "name starts with a space");
  EXPECT_EQ(check_component(std::string(129, 'a')), "name longer than 128 bytes");
  EXPECT_EQ(check_component(std::string(255, 'a')), "name longer than 128 bytes");
  for (std::string_view bad : {"a/b", "new\nline", "tab\t", "caf\xC3\xA9", "q\"uote", "back\\",
                               "star*", "semi;colon", "dollar$"}) {
    EXPECT_NE(check_component(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(check_component(std::string("nul\0x", 5)).value_or("").find("\\x00"), 14u);
}

TEST(NamesTest, RelativePaths) {
  EXPECT_EQ(check_relative_path("a/b/c.csv"), std::nullopt);
  EXPECT_EQ(check_relative_path("file.txt"), std::nullopt);
  EXPECT_NE(check_relative_path(""), std::nullopt);
  EXPECT_NE(check_relative_path("/etc/passwd"), std::nullopt);
  EXPECT_NE(check_relative_path("a//b"), std::nullopt);
  EXPECT_NE(check_relative_path("a/b/"), std::nullopt);
  EXPECT_NE(check_relative_path("a/../b"), std::nullopt);
  EXPECT_NE(check_relative_path("./a"), std::nullopt);
  EXPECT_NE(check_relative_path("a/.git/config"), std::nullopt);
  std::string long_path;
  for (int i = 0; i < 200; ++i) long_path += "abcdef/";
  long_path += "x";
  EXPECT_EQ(check_relative_path(long_path), "path longer than 1024 bytes");
}

TEST(NamesTest, PrintableEscapesEverythingElse) {
  EXPECT_EQ(printable("plain name.csv"), "plain name.csv");
  EXPECT_EQ(printable("a\nb"), "a\\x0ab");
  EXPECT_EQ(printable(std::string("\0\x7f\xff", 3)), "\\x00\\x7f\\xff");
  EXPECT_EQ(printable("caf\xC3\xA9"), "caf\\xc3\\xa9");
  EXPECT_EQ(printable("back\\slash"), "back\\x5cslash");  // unambiguous
  EXPECT_EQ(printable("\x1B[2J"), "\\x1b[2J");            // no terminal escapes
}

TEST(NamesTest, PrintableIsBounded) {
  EXPECT_EQ(printable(std::string(300, 'a')), std::string(300, 'a'));
  EXPECT_EQ(printable(std::string(301, 'a')), std::string(300, 'a') + "...");
  const std::string escaped = printable(std::string(255, '\n'));
  EXPECT_LE(escaped.size(), 303u);
  EXPECT_TRUE(escaped.ends_with("\\x0a..."));
}

TEST(Names, WorkspaceNamesMayStartWithADot) {
  EXPECT_EQ(check_workspace_component(".local"), std::nullopt);
  EXPECT_EQ(check_workspace_path(".local/lib/python3.11/x.py"), std::nullopt);
  EXPECT_EQ(check_workspace_component("."), "name is '.' or '..'");
  EXPECT_EQ(check_workspace_component(".."), "name is '.' or '..'");
  EXPECT_EQ(check_workspace_path("a/../b"), "name is '.' or '..'");
  EXPECT_EQ(check_workspace_component("-rf"), "name starts with '-'");
  EXPECT_EQ(check_workspace_path("a//b"), "empty name");
}

}  // namespace
}  // namespace airlock::workspace
