// A linear-time regular expression matcher for the JSON Schema "pattern"
// keyword. std::regex was the first choice, but libstdc++ matches by recursion
// with a stack frame per character (a 3,000-character string overflows a 1 MiB
// stack for "^(a|b)*$") and backtracks exponentially on "(a+)+b": a hostile
// output could crash or stall the host. This is a Thompson NFA run as a Pike
// VM: no recursion while matching, time O(pattern x string).
//
// Syntax: the ECMAScript subset without backtracking features: literals and
// escapes (\. \\ \t \n \r \f \v \/ \xHH \uHHHH), . \d \D \w \W \s \S, classes
// [a-z\d] [^...], anchors ^ $, \b \B, groups ( ) and (?: ), alternation |,
// quantifiers * + ? {n} {n,} {n,m} (lazy forms accepted; they match the same
// set for a yes/no search). Backreferences, lookaround and named groups are
// refused at compile time. Matching is by Unicode code point over UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::validate {

class Regex {
 public:
  // Compiles `pattern`; an error says what is unsupported or malformed and where.
  static Result<Regex> compile(std::string_view pattern);

  // True when the pattern matches anywhere in `text` (not anchored, like
  // ECMAScript's RegExp.prototype.test). Invalid UTF-8 bytes count as one
  // character each.
  bool search(std::string_view text) const;

  // Instructions in the compiled program: a search costs at most
  // size() x (characters + 1) steps.
  size_t size() const { return program_.size(); }

  struct Range {
    uint32_t lo, hi;
  };
  struct Class {
    std::vector<Range> ranges;
    bool negated = false;
  };
  enum class Op : uint8_t { kChar, kAny, kClass, kSplit, kJmp, kBol, kEol, kWordB, kNotWordB, kMatch };
  struct Inst {
    Op op;
    uint32_t a = 0;  // kChar: code point; kClass: class index; kSplit/kJmp: target
    uint32_t b = 0;  // kSplit: second target
  };

 private:
  std::vector<Inst> program_;
  std::vector<Class> classes_;
  friend class RegexCompiler;
};

}  // namespace airlock::validate
