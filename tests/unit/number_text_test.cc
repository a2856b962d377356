// Numbers in messages: "1024", not std::to_string's "1024.000000".
#include "base/number_text.h"

#include <gtest/gtest.h>

#include <limits>

namespace airlock {
namespace {

TEST(NumberText, IntegralValuesHaveNoFraction) {
  EXPECT_EQ(number_text(1024.0), "1024");
  EXPECT_EQ(number_text(0.0), "0");
  EXPECT_EQ(number_text(-3.0), "-3");
  EXPECT_EQ(number_text(600.0), "600");
  EXPECT_EQ(number_text(9007199254740991.0), "9007199254740991");
}

TEST(NumberText, OtherValuesInTheShortestFormThatReadsBack) {
  EXPECT_EQ(number_text(1.5), "1.5");
  EXPECT_EQ(number_text(0.1), "0.1");
  EXPECT_EQ(number_text(2.0 / 3), "0.6666666666666666");
  EXPECT_EQ(number_text(1e-7), "1e-07");
  EXPECT_EQ(number_text(1e300), "1e+300");
  EXPECT_EQ(number_text(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(number_text(std::numeric_limits<double>::quiet_NaN()), "nan");
}

}  // namespace
}  // namespace airlock
