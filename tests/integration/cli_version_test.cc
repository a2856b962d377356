// `airlock --version` and `airlock --help`, as a user runs them: the version is
// CMake's project version (read here from CMakeLists.txt) with the git
// commit of the build when it had one; every help text ends its last line.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "run_helpers.h"

namespace airlock::testing {
namespace {

std::string project_version() {
  std::ifstream in(std::string(AIRLOCK_SOURCE_DIR) + "/CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  std::string s = text.str();
  if (!std::regex_search(s, m, std::regex(R"(project\(airlock VERSION ([0-9.]+))"))) return "";
  return m[1];
}

TEST(CliVersion, PrintsTheProjectVersionAndTheCommit) {
  const std::string version = project_version();
  ASSERT_FALSE(version.empty()) << "no VERSION in project() of CMakeLists.txt";
  Ran ran = run_airlock({"--version"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.err, "");
  const std::regex shape("airlock " + std::regex_replace(version, std::regex(R"(\.)"), R"(\.)") +
                         R"(( \(commit [0-9a-f]{12}\))?\n)");
  EXPECT_TRUE(std::regex_match(ran.out, shape)) << ran.out;
  // This test is built in a git work tree (AIRLOCK_SOURCE_DIR): the build knew its commit.
  std::ifstream git_head(std::string(AIRLOCK_SOURCE_DIR) + "/.git/HEAD");
  if (git_head) {
    EXPECT_NE(ran.out.find("(commit "), std::string::npos) << ran.out;
  }
}

TEST(CliVersion, EveryHelpEndsWithANewlineAndTheTopOneNamesVersion) {
  Ran top = run_airlock({"--help"});
  EXPECT_EQ(top.status, 0);
  ASSERT_FALSE(top.out.empty());
  EXPECT_EQ(top.out.back(), '\n');
  EXPECT_NE(top.out.find("--version"), std::string::npos) << top.out;
  for (const char* command : {"run", "serve", "keys", "verify", "pool", "session", "image",
                              "selftest", "usage", "estimate"}) {
    Ran help = run_airlock({command, "--help"});
    const std::string& text = help.out.empty() ? help.err : help.out;
    ASSERT_FALSE(text.empty()) << command;
    EXPECT_EQ(text.back(), '\n') << "airlock " << command << " --help ends without a newline";
  }
  Ran bare = run_airlock({});
  EXPECT_EQ(bare.status, 125);
  ASSERT_FALSE(bare.err.empty());
  EXPECT_EQ(bare.err.back(), '\n');
}

}  // namespace
}  // namespace airlock::testing
