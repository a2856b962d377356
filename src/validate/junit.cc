#include "validate/junit.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "validate/text.h"

namespace airlock::validate {
namespace {

constexpr uint64_t kMaxCount = 1'000'000'000'000;
constexpr std::array<std::string_view, 4> kCountNames = {"tests", "failures", "errors", "skipped"};

enum class Kind { kSuites, kSuite, kCase, kOther };

// An open <testsuites> or <testsuite>: what it declares and what it holds.
struct Suite {
  std::string tag;  // `<testsuite name="x">`, for messages
  std::array<std::optional<uint64_t>, 4> declared;
  std::array<uint64_t, 4> counted{};
};

std::optional<uint64_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 13) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v <= kMaxCount ? std::optional<uint64_t>(v) : std::nullopt;
}

class Counter {
 public:
  Status start(const XmlStart& e) {
    Kind kind = Kind::kOther;
    if (e.depth == 1 && e.name != "testsuites" && e.name != "testsuite")
      return fail("the root element is <" + printable(e.name, 60) + ">, not <testsuites> or <testsuite>");
    if (e.name == "testsuites" && e.depth == 1) {
      kind = Kind::kSuites;
    } else if (e.name == "testsuite" && !in_case()) {
      kind = Kind::kSuite;
    } else if (e.name == "testcase" && !in_case()) {
      if (!has_suite()) return fail("a <testcase> outside any <testsuite>");
      kind = Kind::kCase;
      outcome_ = {};
    } else if (kinds_.size() == case_depth_ && in_case()) {
      if (e.name == "failure") outcome_[1] = true;
      if (e.name == "error") outcome_[2] = true;
      if (e.name == "skipped") outcome_[3] = true;
    }
    kinds_.push_back(kind);
    if (kind == Kind::kCase) case_depth_ = kinds_.size();
    if (kind == Kind::kSuites || kind == Kind::kSuite) {
      Suite suite;
      suite.tag = "<" + std::string(e.name);
      for (const auto& a : e.attributes) {
        if (a.name == "name") suite.tag += " name=" + in_quotes(a.value, 60);
      }
      suite.tag += ">";
      for (const auto& a : e.attributes) {
        for (size_t i = 0; i < kCountNames.size(); ++i) {
          if (a.name != kCountNames[i]) continue;
          suite.declared[i] = parse_count(a.value);
          if (!suite.declared[i])
            return fail(suite.tag + ": " + std::string(a.name) + "=" + in_quotes(a.value, 40) + " is not a count");
        }
      }
      suites_.push_back(std::move(suite));
    }
    return {};
  }

  Status end() {
    Kind kind = kinds_.back();
    kinds_.pop_back();
    if (kind == Kind::kCase) {
      case_depth_ = 0;
      Suite& suite = suites_.back();
      suite.counted[0] += 1;
      for (size_t i = 1; i < 4; ++i) suite.counted[i] += outcome_[i] ? 1 : 0;
    } else if (kind == Kind::kSuites || kind == Kind::kSuite) {
      Suite suite = std::move(suites_.back());
      suites_.pop_back();
      for (size_t i = 0; i < 4; ++i) {
        if (suite.declared[i] && *suite.declared[i] != suite.counted[i])
          return fail(suite.tag + " declares " + std::string(kCountNames[i]) + "=\"" +
                      std::to_string(*suite.declared[i]) + "\" but holds " + held(i, suite.counted[i]));
      }
      auto& into = suites_.empty() ? total_ : suites_.back().counted;
      for (size_t i = 0; i < 4; ++i) into[i] += suite.counted[i];
    }
    return {};
  }

  JunitCounts counts() const { return {total_[0], total_[1], total_[2], total_[3]}; }

 private:
  static std::string held(size_t i, uint64_t n) {
    static constexpr std::array<std::string_view, 4> kWhat = {"", " with <failure>", " with <error>", " with <skipped>"};
    return std::to_string(n) + (n == 1 ? " testcase" : " testcases") + std::string(kWhat[i]);
  }
  bool in_case() const { return case_depth_ != 0; }
  bool has_suite() const {
    for (Kind k : kinds_)
      if (k == Kind::kSuite) return true;
    return false;
  }

  std::vector<Kind> kinds_;  // one per open element
  std::vector<Suite> suites_;
  size_t case_depth_ = 0;  // kinds_.size() inside the open testcase, 0 outside
  std::array<bool, 4> outcome_{};
  std::array<uint64_t, 4> total_{};
};

}  // namespace

Result<JunitCounts> junit_counts(std::string_view doc, const XmlLimits& limits) {
  Counter counter;
  XmlEvents events{
      .start = [&](const XmlStart& e) { return counter.start(e); },
      .end = [&](std::string_view, size_t) { return counter.end(); },
  };
  if (auto st = read_xml(doc, events, limits); !st) return std::unexpected(st.error());
  return counter.counts();
}

}  // namespace airlock::validate
