// The counts of a JUnit XML report (what surefire, pytest, ctest and most test
// runners write), read with the bounded XML reader. Pure logic.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/result.h"
#include "validate/xml.h"

namespace airlock::validate {

struct JunitCounts {
  uint64_t tests = 0;     // <testcase> elements
  uint64_t failures = 0;  // testcases with a <failure> child
  uint64_t errors = 0;    // testcases with an <error> child
  uint64_t skipped = 0;   // testcases with a <skipped> child
};

// The root must be <testsuites> or <testsuite>; every <testcase> must be inside
// a <testsuite>. The counts come from the testcases themselves; where a
// <testsuite> or <testsuites> also declares tests, failures, errors or skipped,
// the declaration must equal what it holds, so a report cannot claim
// failures="0" over a failing testcase.
Result<JunitCounts> junit_counts(std::string_view doc, const XmlLimits& limits = {});

}  // namespace airlock::validate
