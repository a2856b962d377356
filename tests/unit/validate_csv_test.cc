// CSV parsing (RFC 4180 with a header row) and strict numbers for the checks.
#include <gtest/gtest.h>

#include <string>

#include "validate/csv.h"

namespace airlock::validate {
namespace {

TEST(CsvParseTest, HeaderAndRows) {
  auto t = parse_csv("a,b\n1,2\n3,4\n");
  ASSERT_TRUE(t) << t.error().what;
  EXPECT_EQ(t->header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"3", "4"}));
  EXPECT_EQ(t->row_lines, (std::vector<size_t>{2, 3}));
}

TEST(CsvParseTest, QuotedCommasQuotesAndNewlines) {
  auto t = parse_csv("name,note,total\r\n\"Smith, J\",\"said \"\"hi\"\"\nthen left\",5\r\nx,,6");
  ASSERT_TRUE(t) << t.error().what;
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0][0], "Smith, J");
  EXPECT_EQ(t->rows[0][1], "said \"hi\"\nthen left");
  EXPECT_EQ(t->rows[0][2], "5");
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"x", "", "6"}));
  // The second record starts on line 4: the quoted field spans lines 2 and 3.
  EXPECT_EQ(t->row_lines, (std::vector<size_t>{2, 4}));
}

TEST(CsvParseTest, BomBlankLinesAndNoFinalNewline) {
  auto t = parse_csv("\xEF\xBB\xBFv\n\n1\n\n2");
  ASSERT_TRUE(t) << t.error().what;
  EXPECT_EQ(t->header, (std::vector<std::string>{"v"}));
  EXPECT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->row_lines, (std::vector<size_t>{3, 5}));
}

TEST(CsvParseTest, QuotedEmptyFieldIsARow) {
  auto t = parse_csv("v\n\"\"\n");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0][0], "");
}

TEST(CsvParseTest, Errors) {
  EXPECT_EQ(parse_csv("").error().what, "no header row (the file is empty)");
  EXPECT_EQ(parse_csv("\n\n").error().what, "no header row (the file is empty)");
  EXPECT_EQ(parse_csv("a,b\n1,\"open\n").error().what, "line 2: unterminated quoted field");
  EXPECT_EQ(parse_csv("a,b\n1,x\"y\n").error().what, "line 2: quote inside an unquoted field");
  EXPECT_EQ(parse_csv("a,b\n1,\"x\"y\n").error().what, "line 2: text after a closing quote");
  EXPECT_EQ(parse_csv("a,b\n1,2\n1,2,3\n").error().what,
            "line 3: row has 3 fields, the header has 2");
  EXPECT_EQ(parse_csv("a,b\n1\n").error().what, "line 2: row has 1 fields, the header has 2");
}

TEST(CsvParseTest, FindColumn) {
  auto t = parse_csv("region,revenue,region\nN,1,M\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(*find_column(*t, "revenue"), 1u);
  EXPECT_EQ(find_column(*t, "total").error().what,
            "no column \"total\" (columns: \"region\", \"revenue\", \"region\")");
  EXPECT_EQ(find_column(*t, "region").error().what,
            "column \"region\" appears 2 times in the header");
}

TEST(CsvNumberTest, Accepts) {
  EXPECT_EQ(parse_number("1e3"), 1000.0);
  EXPECT_EQ(parse_number(" 2 "), 2.0);
  EXPECT_EQ(parse_number("\t2\t"), 2.0);
  EXPECT_EQ(parse_number("-0.5"), -0.5);
  EXPECT_EQ(parse_number("+7"), 7.0);
  EXPECT_EQ(parse_number(".25"), 0.25);
  EXPECT_EQ(parse_number("5."), 5.0);
  EXPECT_EQ(parse_number("2.5E-2"), 0.025);
  EXPECT_EQ(parse_number("1e+2"), 100.0);
  EXPECT_EQ(parse_number("1575.50"), 1575.5);
}

TEST(CsvNumberTest, RejectsStrictly) {
  for (const char* bad : {"", "   ", "1,000", "12abc", "abc", "0x10", "inf", "-inf", "nan", "NaN",
                          "1e", "1e+", ".", "-", "+", "+-1", "--1", "1 2", "1.2.3", "$5", "5%",
                          "1e999", "-1e999", "\xC2\xA0" "1"}) {
    EXPECT_FALSE(parse_number(bad).has_value()) << "accepted \"" << bad << "\"";
  }
}

}  // namespace
}  // namespace airlock::validate
