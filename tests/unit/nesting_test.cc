#include "base/nesting.h"

#include <string>

#include <gtest/gtest.h>

#include "base/json_parse.h"

namespace airlock {
namespace {

std::string nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(Nesting, CountsArraysAndObjects) {
  EXPECT_EQ(nesting_depth("1", 100), 0u);
  EXPECT_EQ(nesting_depth("", 100), 0u);
  EXPECT_EQ(nesting_depth("[]", 100), 1u);
  EXPECT_EQ(nesting_depth(R"({"a":[2]})", 100), 2u);
  EXPECT_EQ(nesting_depth(R"([[1],[[2]],{"x":{}}])", 100), 3u);
}

TEST(Nesting, BracketsInsideStringsDoNotCount) {
  EXPECT_EQ(nesting_depth(R"(["[[[[{{{{"])", 100), 1u);
  EXPECT_EQ(nesting_depth(R"({"]]]]}}}": "[[["})", 100), 1u);
  // An escaped quote does not end the string; an escaped backslash does not escape the quote.
  EXPECT_EQ(nesting_depth(R"(["a\"[[[[", 1])", 100), 1u);
  EXPECT_EQ(nesting_depth(R"(["a\\", [[1]]])", 100), 3u);
  EXPECT_EQ(nesting_depth(R"(["\u005b\u005b", "\\\"[["])", 100), 1u);
}

TEST(Nesting, ExactlyAtTheLimitPassesOneOverFails) {
  EXPECT_TRUE(nesting_within(nested(64), 64));
  EXPECT_FALSE(nesting_within(nested(65), 64));
  EXPECT_TRUE(nesting_within(nested(64, '{', '}'), 64));
  EXPECT_FALSE(nesting_within(nested(65, '{', '}'), 64));
  // Siblings do not add up.
  EXPECT_TRUE(nesting_within("[" + nested(63) + "," + nested(63) + "]", 64));
}

TEST(Nesting, StopsAsSoonAsTheLimitIsCrossed) {
  // Unbalanced, hostile: half a million opening brackets and nothing else.
  std::string deep(500'000, '[');
  EXPECT_EQ(nesting_depth(deep, 128), 129u);
  EXPECT_FALSE(nesting_within(deep, 128));
}

TEST(Nesting, StrayClosersDoNotGoBelowZero) {
  // "]]]]" first must not buy credit for deeper nesting later.
  EXPECT_EQ(nesting_depth("]]]]" + nested(3), 100), 3u);
  EXPECT_FALSE(nesting_within("]]]]]]" + nested(5), 4));
}

TEST(Nesting, TomlStringsAndComments) {
  const auto toml = NestingSyntax::kToml;
  EXPECT_EQ(nesting_depth("a = [[1], [2]]\n", 100, toml), 2u);
  EXPECT_EQ(nesting_depth("# [[[[[[\na = 1\n", 100, toml), 0u);
  EXPECT_EQ(nesting_depth("a = '[[[[\\'\nb = [1]\n", 100, toml), 1u);  // no escapes in '...'
  EXPECT_EQ(nesting_depth("a = \"[[\\\"[[\"\n", 100, toml), 0u);
  EXPECT_EQ(nesting_depth("a = \"\"\"\n[[[\" \"\" [[\n\"\"\"\nb = [[1]]\n", 100, toml), 2u);
  EXPECT_EQ(nesting_depth("a = '''[[[\n'' [[[ '''\nb = {c = [1]}\n", 100, toml), 2u);
  EXPECT_EQ(nesting_depth("[table]\n[[array.of.tables]]\n", 100, toml), 2u);
  // JSON has no comments and no '...' strings: those brackets count.
  EXPECT_EQ(nesting_depth("# [[\n", 100), 2u);
  EXPECT_FALSE(nesting_within("a = " + nested(33) + "\n", kMaxConfigDepth, toml));
}

TEST(JsonParse, RefusesDeepDocumentsWithAReason) {
  auto deep = parse_json(R"({"checks":)" + nested(300'000) + "}");
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().what, "nested deeper than 128 levels");
  EXPECT_TRUE(parse_json_or_discarded(nested(129)).is_discarded());
  auto limit = parse_json(nested(128));
  ASSERT_TRUE(limit);
  EXPECT_TRUE(limit->is_array());
  EXPECT_EQ(parse_json("{").error().what, "not valid JSON");
  EXPECT_EQ(parse_json(nested(200), kMaxStoredJsonDepth)->size(), 1u);
}

}  // namespace
}  // namespace airlock
