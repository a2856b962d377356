// The linear-time pattern matcher: ECMAScript semantics for the supported
// subset, clear errors for the rest, and no blow-up on hostile input.
#include <gtest/gtest.h>

#include <string>

#include "validate/regex.h"

namespace airlock::validate {
namespace {

bool matches(const std::string& pattern, const std::string& text) {
  auto re = Regex::compile(pattern);
  EXPECT_TRUE(re) << pattern << ": " << re.error().what;
  return re && re->search(text);
}

std::string compile_error(const std::string& pattern) {
  auto re = Regex::compile(pattern);
  return re ? "(compiled)" : re.error().what;
}

TEST(ValidateRegexTest, LiteralsAnchorsAndSearch) {
  EXPECT_TRUE(matches("abc", "xxabcxx"));  // unanchored, like RegExp.test
  EXPECT_FALSE(matches("abc", "abxc"));
  EXPECT_TRUE(matches("^abc$", "abc"));
  EXPECT_FALSE(matches("^abc$", "abcd"));
  EXPECT_FALSE(matches("^abc$", "xabc"));
  EXPECT_TRUE(matches("", "anything"));
  EXPECT_TRUE(matches("^$", ""));
  EXPECT_TRUE(matches("a|^b", "cab"));
  EXPECT_FALSE(matches("^b", "ab"));
}

TEST(ValidateRegexTest, ClassesAndEscapes) {
  EXPECT_TRUE(matches("^[A-Z]{2}-\\d+$", "AB-123"));
  EXPECT_FALSE(matches("^[A-Z]{2}-\\d+$", "Ab-123"));
  EXPECT_TRUE(matches("^[^0-9]+$", "abc"));
  EXPECT_FALSE(matches("^[^0-9]+$", "ab1"));
  EXPECT_TRUE(matches("^\\w+@\\w+\\.com$", "me@example.com"));
  EXPECT_FALSE(matches("^\\w+@\\w+\\.com$", "me@examplexcom"));
  EXPECT_TRUE(matches("^\\s*$", " \t\n"));
  EXPECT_TRUE(matches("^\\S\\D\\W$", "xx-"));
  EXPECT_TRUE(matches("^[\\d.,-]+$", "1,000.5-"));
  EXPECT_TRUE(matches("^[a\\-z]+$", "a-z"));
  EXPECT_FALSE(matches("^[a\\-z]+$", "b"));
  EXPECT_TRUE(matches("^[-a]+$", "-a"));
  EXPECT_TRUE(matches("^\\x41\\u00e9$", "A\xC3\xA9"));
  EXPECT_TRUE(matches("^\\/\\.\\*$", "/.*"));
  EXPECT_TRUE(matches("^a{$", "a{"));  // not a quantifier: a literal brace
  EXPECT_TRUE(matches("^[\\b]$", "\b"));
}

TEST(ValidateRegexTest, DotAndUnicodeCodePoints) {
  EXPECT_TRUE(matches("^.{3}$", "\xC3\xA9t\xC3\xA9"));  // "été": three code points
  EXPECT_FALSE(matches("^.{5}$", "\xC3\xA9t\xC3\xA9"));
  EXPECT_FALSE(matches("^a.b$", "a\nb"));
  EXPECT_TRUE(matches("^[\xC3\xA0-\xC3\xBF]+$", "\xC3\xA9\xC3\xA8"));
}

TEST(ValidateRegexTest, GroupsAlternationQuantifiers) {
  EXPECT_TRUE(matches("^(ab|cd)+$", "abcdab"));
  EXPECT_FALSE(matches("^(ab|cd)+$", "abc"));
  EXPECT_TRUE(matches("^(?:x|y)?z$", "z"));
  EXPECT_TRUE(matches("^a{2,3}$", "aaa"));
  EXPECT_FALSE(matches("^a{2,3}$", "aaaa"));
  EXPECT_FALSE(matches("^a{2,3}$", "a"));
  EXPECT_TRUE(matches("^a{2,}$", "aaaaa"));
  EXPECT_TRUE(matches("^a{2}$", "aa"));
  EXPECT_TRUE(matches("^a+?b*?$", "aab"));
  EXPECT_TRUE(matches("^(a*)*$", "aaa"));  // empty loops terminate
  EXPECT_TRUE(matches("^(|a)+$", ""));
  EXPECT_TRUE(matches("\\bcat\\b", "a cat sat"));
  EXPECT_FALSE(matches("\\bcat\\b", "concatenate"));
  EXPECT_TRUE(matches("\\Bcat\\B", "concatenate"));
}

TEST(ValidateRegexTest, UnsupportedAndMalformed) {
  EXPECT_EQ(compile_error("(a)\\1"), "backreferences are not supported at character 5");
  EXPECT_EQ(compile_error("a(?=b)"), "lookaround and named groups are not supported at character 2");
  EXPECT_EQ(compile_error("(?<n>a)"), "lookaround and named groups are not supported at character 1");
  EXPECT_EQ(compile_error("\\p{L}"), "unsupported escape \\p at character 2");
  EXPECT_EQ(compile_error("(a"), "missing ')' at character 2");
  EXPECT_EQ(compile_error("a)"), "unmatched ')' at character 1");
  EXPECT_EQ(compile_error("[abc"), "missing ']' at character 4");
  EXPECT_EQ(compile_error("*a"), "nothing to repeat at character 0");
  EXPECT_EQ(compile_error("a**"), "nothing to repeat at character 2");
  EXPECT_EQ(compile_error("^*"), "nothing to repeat at character 2");
  EXPECT_EQ(compile_error("[z-a]"), "range out of order in character class at character 4");
  EXPECT_EQ(compile_error("a{3,2}"), "numbers out of order in {} quantifier at character 6");
  EXPECT_EQ(compile_error("a{1001}"), "a repeat count above 1000 at character 7");
  EXPECT_EQ(compile_error("\\"), "'\\' at the end of the pattern at character 1");
  EXPECT_EQ(compile_error("\\x4"), "malformed \\x or \\u escape at character 3");
  EXPECT_EQ(compile_error("(a{1000}){1000}"),
            "the pattern is too large (more than 5000 instructions once repeats are expanded)");
  EXPECT_EQ(compile_error(std::string(101, '(') + std::string(101, ')')),
            "groups nested deeper than 100 at character 101");
}

// The classic catastrophic cases finish at once, and long subjects do not
// recurse (std::regex overflows the stack on these).
TEST(ValidateRegexTest, HostileInputsAreLinear) {
  std::string as(30'000, 'a');
  EXPECT_FALSE(matches("^(a+)+$", as + "!"));
  EXPECT_FALSE(matches("^(a|aa)*$", as + "!"));
  EXPECT_FALSE(matches("^(a*)*b$", as));
  EXPECT_TRUE(matches("^(a|b)*$", as));
  EXPECT_TRUE(matches("^([a-z]+ ?)*$", as));
}

}  // namespace
}  // namespace airlock::validate
