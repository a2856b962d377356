// parse_checks (every shape rule) and run_checks (each kind passing and
// failing with its exact detail), including the analyst example's files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include <map>
#include <string>

#include "validate/checks.h"

namespace airlock::validate {
namespace {

using nlohmann::json;

// examples/sales_jan.csv and sales_feb.csv (unit tests do not read the tree).
const char* kSalesJan =
    "region,product,units,revenue\n"
    "North,Widget,120,2400.00\nNorth,Gadget,45,1575.50\nNorth,Gizmo,30,990.00\n"
    "South,Widget,98,1960.00\nSouth,Gadget,60,2100.00\nSouth,Gizmo,25,825.00\n"
    "East,Widget,150,3000.00\nEast,Gadget,38,1330.00\nEast,Gizmo,41,1353.00\n"
    "West,Widget,77,1540.00\nWest,Gadget,52,1820.00\nWest,Gizmo,19,627.00\n";
const char* kSalesFeb =
    "region,product,units,revenue\n"
    "North,Widget,132,2640.00\nNorth,Gadget,50,1750.00\nNorth,Gizmo,28,924.00\n"
    "South,Widget,90,1800.00\nSouth,Gadget,71,2485.00\nSouth,Gizmo,33,1089.00\n"
    "East,Widget,141,2820.00\nEast,Gadget,44,1540.00\nEast,Gizmo,39,1287.00\n"
    "West,Widget,85,1700.00\nWest,Gadget,49,1715.00\nWest,Gizmo,24,792.00\n";
// What examples/analyst.py writes as /output/summary.csv.
const char* kSummary =
    "region,revenue_jan,revenue_feb,revenue_total\n"
    "East,5683.00,5647.00,11330.00\nNorth,4965.50,5314.00,10279.50\n"
    "South,4885.00,5374.00,10259.00\nWest,3987.00,4207.00,8194.00\n";

using Files = std::map<std::string, std::string>;

// Serves each file in pieces of at most 7 bytes, so that every check is
// exercised across piece boundaries.
FileSource source(const Files& files) {
  return [files](const std::string& name) -> std::optional<ByteSource> {
    auto it = files.find(name);
    if (it == files.end()) return std::nullopt;
    auto text = std::make_shared<std::string>(it->second);
    return [text, at = size_t{0}](char* buf, size_t n) mutable -> Result<size_t> {
      size_t k = std::min({n, size_t{7}, text->size() - at});
      std::memcpy(buf, text->data() + at, k);
      at += k;
      return k;
    };
  };
}

std::string parse_error(const json& checks) {
  auto r = parse_checks(checks);
  if (r) return "(parsed)";
  return r.error().what;
}

// Parses one check (must succeed) and runs it.
CheckResult run_one(const json& check, const Files& outputs, const Files& inputs = {}) {
  auto parsed = parse_checks(json::array({check}));
  EXPECT_TRUE(parsed) << parsed.error().what;
  if (!parsed) return {};
  auto results = run_checks(*parsed, source(outputs), source(inputs));
  EXPECT_EQ(results.size(), 1u);
  return results.at(0);
}

const json kSumCheck = {{"kind", "csv_column_sum"},
                        {"output", "summary.csv"},
                        {"column", "revenue_total"},
                        {"inputs", {{{"file", "sales_jan.csv"}, {"column", "revenue"}},
                                    {{"file", "sales_feb.csv"}, {"column", "revenue"}}}},
                        {"tolerance", 0.01}};

// --- parse_checks ------------------------------------------------------------

TEST(CheckParseTest, NullIsNoChecksAndLabelsDefault) {
  EXPECT_TRUE(parse_checks(nullptr)->empty());
  EXPECT_TRUE(parse_checks(json::array())->empty());
  auto checks = parse_checks(json::array(
      {kSumCheck, {{"kind", "csv_row_count"}, {"output", "summary.csv"}, {"min", 1}, {"name", "rows"}}}));
  ASSERT_TRUE(checks) << checks.error().what;
  ASSERT_EQ(checks->size(), 2u);
  EXPECT_EQ((*checks)[0].kind, "csv_column_sum");
  EXPECT_EQ((*checks)[0].label, "csv_column_sum#0");
  EXPECT_EQ((*checks)[0].spec, kSumCheck);
  EXPECT_EQ((*checks)[1].label, "rows");
}

TEST(CheckParseTest, ArrayAndCountRules) {
  EXPECT_EQ(parse_error(json::object()), "checks: must be an array");
  EXPECT_EQ(parse_error("x"), "checks: must be an array");
  json many = json::array();
  for (int i = 0; i < 33; ++i)
    many.push_back({{"kind", "csv_row_count"}, {"output", "a.csv"}, {"min", i}});
  EXPECT_EQ(parse_error(many), "checks: at most 32 checks, got 33");
  many.erase(many.begin());
  EXPECT_TRUE(parse_checks(many));
  EXPECT_EQ(parse_error(json::array({1})), "checks[0]: must be an object");
}

TEST(CheckParseTest, KindRules) {
  EXPECT_EQ(parse_error(json::array({json::object({{"output", "a"}})})),
            "checks[0].kind: missing (a string is required)");
  EXPECT_EQ(parse_error(json::array({{{"kind", 3}}})), "checks[0].kind: must be a string");
  EXPECT_EQ(parse_error(json::array({{{"kind", "regex"}}})),
            "checks[0].kind: unknown kind \"regex\" (supported: csv_column_sum, csv_row_count, "
            "json_schema, image_dimensions, junit, pdf, archive, office)");
}

TEST(CheckParseTest, UnknownFieldNamesTheAllowedOnes) {
  json c = {{"kind", "csv_row_count"}, {"output", "a.csv"}, {"minimum", 1}};
  EXPECT_EQ(parse_error(json::array({c})),
            "checks[0]: unknown field \"minimum\" (allowed: kind, name, output, min, max)");
  json sum = kSumCheck;
  sum["inputs"][1]["col"] = "x";
  EXPECT_EQ(parse_error(json::array({kSumCheck, sum})),
            "checks[1].inputs[1]: unknown field \"col\" (allowed: file, column)");
}

TEST(CheckParseTest, CsvColumnSumFields) {
  auto with = [](const char* key, json value) {
    json c = kSumCheck;
    if (value.is_discarded()) c.erase(key);
    else c[key] = value;
    return parse_error(json::array({c}));
  };
  json drop(json::value_t::discarded);
  EXPECT_EQ(with("output", drop), "checks[0].output: missing (a string is required)");
  EXPECT_EQ(with("output", 5), "checks[0].output: must be a string");
  EXPECT_EQ(with("output", ""),
            "checks[0].output: must be a non-empty string of at most 4096 bytes without NUL");
  EXPECT_EQ(with("column", drop), "checks[0].column: missing (a string is required)");
  EXPECT_EQ(with("inputs", drop),
            "checks[0].inputs: missing (an array of {\"file\", \"column\"} is required)");
  EXPECT_EQ(with("inputs", json::array()),
            "checks[0].inputs: must be an array of 1 to 64 {\"file\", \"column\"} objects");
  EXPECT_EQ(with("inputs", json::array({"a.csv"})),
            "checks[0].inputs[0]: must be an object {\"file\", \"column\"}");
  EXPECT_EQ(with("inputs", json::array({{{"file", "a.csv"}}})),
            "checks[0].inputs[0].column: missing (a string is required)");
  EXPECT_EQ(with("tolerance", -1), "checks[0].tolerance: must be a non-negative number");
  EXPECT_EQ(with("tolerance", "0.01"), "checks[0].tolerance: must be a non-negative number");
  EXPECT_EQ(with("relative_tolerance", true),
            "checks[0].relative_tolerance: must be a non-negative number");
  EXPECT_EQ(with("relative_tolerance", 1e-6), "(parsed)");
  EXPECT_EQ(with("tolerance", drop), "(parsed)");
}

TEST(CheckParseTest, RowCountFields) {
  json c = {{"kind", "csv_row_count"}, {"output", "a.csv"}};
  EXPECT_EQ(parse_error(json::array({c})), "checks[0]: needs \"min\", \"max\" or both");
  c["min"] = -1;
  EXPECT_EQ(parse_error(json::array({c})), "checks[0].min: must be a non-negative integer");
  c["min"] = 1.5;
  EXPECT_EQ(parse_error(json::array({c})), "checks[0].min: must be a non-negative integer");
  c["min"] = 5;
  c["max"] = 4;
  EXPECT_EQ(parse_error(json::array({c})), "checks[0].min: 5 is greater than max 4");
  c["max"] = 5;
  EXPECT_EQ(parse_error(json::array({c})), "(parsed)");
  c.erase("min");
  EXPECT_EQ(parse_error(json::array({c})), "(parsed)");
}

TEST(CheckParseTest, JsonSchemaFields) {
  json c = {{"kind", "json_schema"}, {"output", "r.json"}};
  EXPECT_EQ(parse_error(json::array({c})), "checks[0].schema: missing (a JSON Schema is required)");
  c["schema"] = {{"type", "object"}, {"properties", {{"when", {{"format", "date"}}}}}};
  std::string e = parse_error(json::array({c}));
  EXPECT_TRUE(e.starts_with("checks[0].schema: schema at \"/properties/when/format\": unsupported "
                            "keyword \"format\" (supported: type, enum, const,"))
      << e;
  c["schema"] = true;
  EXPECT_EQ(parse_error(json::array({c})), "(parsed)");
}

TEST(CheckParseTest, ImageFields) {
  json c = {{"kind", "image_dimensions"}, {"output", "chart.png"}};
  EXPECT_EQ(parse_error(json::array({c})),
            "checks[0]: needs at least one of \"min_width\", \"max_width\", \"min_height\", "
            "\"max_height\"");
  c["max_height"] = "800";
  EXPECT_EQ(parse_error(json::array({c})), "checks[0].max_height: must be a non-negative integer");
  c["max_height"] = 800;
  c["min_height"] = 900;
  EXPECT_EQ(parse_error(json::array({c})), "checks[0].min_height: 900 is greater than max_height 800");
  c["min_height"] = 10;
  c["min_width"] = 10;
  c["max_width"] = 9;
  EXPECT_EQ(parse_error(json::array({c})), "checks[0].min_width: 10 is greater than max_width 9");
}

TEST(CheckParseTest, NameRules) {
  json c = {{"kind", "csv_row_count"}, {"output", "a.csv"}, {"min", 1}, {"name", ""}};
  EXPECT_EQ(parse_error(json::array({c})),
            "checks[0].name: must be a non-empty string of at most 128 bytes");
  c["name"] = 7;
  EXPECT_EQ(parse_error(json::array({c})),
            "checks[0].name: must be a non-empty string of at most 128 bytes");
  c["name"] = std::string(129, 'n');
  EXPECT_EQ(parse_error(json::array({c})),
            "checks[0].name: must be a non-empty string of at most 128 bytes");
  c["name"] = "rows";
  EXPECT_EQ(parse_error(json::array({c, c})),
            "checks[1].name: the label \"rows\" is used by an earlier check");
  json d = c;
  d["name"] = "csv_row_count#0";
  c.erase("name");
  EXPECT_EQ(parse_error(json::array({c, d})),
            "checks[1].name: the label \"csv_row_count#0\" is used by an earlier check");
}

// --- run_checks --------------------------------------------------------------

TEST(CheckRunTest, AnalystExampleSumPasses) {
  auto r = run_one(kSumCheck, {{"summary.csv", kSummary}},
                   {{"sales_jan.csv", kSalesJan}, {"sales_feb.csv", kSalesFeb}});
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_EQ(r.label, "csv_column_sum#0");
  EXPECT_EQ(r.kind, "csv_column_sum");
  EXPECT_EQ(r.detail,
            "sum of summary.csv:revenue_total = 40062.50, sum of sales_jan.csv:revenue + "
            "sales_feb.csv:revenue = 40062.50 (tolerance 0.01)");
}

TEST(CheckRunTest, AnalystExampleSumFailsOnAWrongTotal) {
  std::string wrong = kSummary;
  wrong.replace(wrong.find("8194.00"), 7, "8206.00");
  auto r = run_one(kSumCheck, {{"summary.csv", wrong}},
                   {{"sales_jan.csv", kSalesJan}, {"sales_feb.csv", kSalesFeb}});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail,
            "sum of summary.csv:revenue_total = 40074.50, sum of sales_jan.csv:revenue + "
            "sales_feb.csv:revenue = 40062.50: they differ by 12.00, more than the tolerance 0.01");
}

TEST(CheckRunTest, SumToleranceAbsoluteAndRelative) {
  json c = {{"kind", "csv_column_sum"}, {"output", "o.csv"}, {"column", "v"},
            {"inputs", {{{"file", "i.csv"}, {"column", "v"}}}}};
  Files in = {{"i.csv", "v\n1000000\n"}};
  auto r = run_one(c, {{"o.csv", "v\n1000000.5\n"}}, in);
  EXPECT_FALSE(r.passed);  // default tolerance 1e-9
  EXPECT_EQ(r.detail,
            "sum of o.csv:v = 1000000.500000000, sum of i.csv:v = 1000000.000000000: they differ "
            "by 0.500000000, more than the tolerance 1e-09");
  c["relative_tolerance"] = 1e-6;
  r = run_one(c, {{"o.csv", "v\n1000000.5\n"}}, in);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_EQ(r.detail,
            "sum of o.csv:v = 1000000.500000000, sum of i.csv:v = 1000000.000000000 (tolerance "
            "1e-09, relative tolerance 1e-06)");
  r = run_one(c, {{"o.csv", "v\n1000001.5\n"}}, in);
  EXPECT_FALSE(r.passed);
}

TEST(CheckRunTest, SumNumbersAndQuotedCells) {
  json c = {{"kind", "csv_column_sum"}, {"output", "o.csv"}, {"column", "total"},
            {"inputs", {{{"file", "i.csv"}, {"column", "amount"}}}}, {"tolerance", 0.001}};
  // Quoted commas and newlines in other columns; " 2 ", "1e3", "-0.5" and a quoted number.
  Files in = {{"i.csv", "note,amount\n\"a, b\",1e3\n\"multi\nline\", 2 \nx,-0.5\ny,\"0.5\"\n"}};
  auto r = run_one(c, {{"o.csv", "total\n1002\n"}}, in);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_EQ(r.detail, "sum of o.csv:total = 1002.000, sum of i.csv:amount = 1002.000 (tolerance 0.001)");
}

TEST(CheckRunTest, SumFailuresNameTheRowAndColumns) {
  json c = {{"kind", "csv_column_sum"}, {"output", "o.csv"}, {"column", "total"},
            {"inputs", {{{"file", "i.csv"}, {"column", "amount"}}}}};
  Files ok_in = {{"i.csv", "amount\n1\n"}};
  EXPECT_EQ(run_one(c, {{"o.csv", "total\n1\n\"1,000\"\n"}}, ok_in).detail,
            "o.csv:total row 2 (line 3): \"1,000\" is not a number");
  EXPECT_EQ(run_one(c, {{"o.csv", "total\n12abc\n"}}, ok_in).detail,
            "o.csv:total row 1 (line 2): \"12abc\" is not a number");
  EXPECT_EQ(run_one(c, {{"o.csv", "x,total\na,1\nb,\n"}}, ok_in).detail,
            "o.csv:total row 2 (line 3): empty cell");
  EXPECT_EQ(run_one(c, {{"o.csv", "sum,count\n1,1\n"}}, ok_in).detail,
            "o.csv: no column \"total\" (columns: \"sum\", \"count\")");
  EXPECT_EQ(run_one(c, {{"o.csv", "total\n1\n"}}, {{"i.csv", "amount\n\"1\n"}}).detail,
            "i.csv: line 2: unterminated quoted field");
  EXPECT_EQ(run_one(c, {{"o.csv", "total\n1\n"}}, {}).detail, "no admitted input named \"i.csv\"");
  EXPECT_EQ(run_one(c, {}, ok_in).detail, "no accepted output named \"o.csv\"");
  EXPECT_EQ(run_one(c, {{"o.csv", "total\n1e308\n1e308\n"}}, ok_in).detail,
            "sum of o.csv:total overflows");
}

TEST(CheckRunTest, RowCount) {
  json c = {{"kind", "csv_row_count"}, {"output", "summary.csv"}, {"min", 1}, {"max", 1000}};
  auto r = run_one(c, {{"summary.csv", kSummary}});
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.detail, "summary.csv has 4 data rows (min 1, max 1000)");
  r = run_one(c, {{"summary.csv", "region,total\n"}});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail, "summary.csv has 0 data rows, fewer than min 1");
  c = {{"kind", "csv_row_count"}, {"output", "summary.csv"}, {"max", 3}};
  r = run_one(c, {{"summary.csv", kSummary}});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail, "summary.csv has 4 data rows, more than max 3");
  c["max"] = 4;
  EXPECT_EQ(run_one(c, {{"summary.csv", kSummary}}).detail, "summary.csv has 4 data rows (max 4)");
  EXPECT_EQ(run_one(c, {{"summary.csv", "a\n\"x\n"}}).detail,
            "summary.csv: line 2: unterminated quoted field");
  EXPECT_EQ(run_one(c, {{"summary.csv", ""}}).detail,
            "summary.csv: no header row (the file is empty)");
  EXPECT_EQ(run_one(c, {{"other.csv", kSummary}}).detail,
            "no accepted output named \"summary.csv\"");
}

TEST(CheckRunTest, JsonSchema) {
  json c = json::parse(R"({
    "kind": "json_schema", "output": "result.json",
    "schema": {"type": "object", "required": ["regions"],
               "properties": {"regions": {"type": "array", "items": {"type": "object",
                   "properties": {"name": {"type": "string"}, "total": {"type": "number"}}}}}}
  })");
  auto r = run_one(c, {{"result.json", R"({"regions": [{"name": "East", "total": 11330}]})"}});
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_EQ(r.detail, "result.json matches the schema");
  r = run_one(c, {{"result.json", R"({"regions": [{"name": "East", "total": "11330"}]})"}});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail,
            "result.json does not match the schema: at \"/regions/0/total\": expected number, got "
            "string");
  r = run_one(c, {{"result.json", "{\"regions\": [1,"}});
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.detail.starts_with("result.json: not valid JSON: parse error at line 1, column 16"))
      << r.detail;
  r = run_one(c, {{"result.json", std::string(1000, '[')}});
  EXPECT_EQ(r.detail, "result.json: nested deeper than 512 levels");
  EXPECT_EQ(run_one(c, {}).detail, "no accepted output named \"result.json\"");
}

TEST(CheckRunTest, ImageDimensions) {
  // 700x400 PNG header (what analyst.py's chart is: figsize 7x4 at dpi 100).
  std::string png = std::string("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x02\xbc\0\0\x01\x90", 24) +
                    std::string("\x08\x06\0\0\0", 5);
  json c = {{"kind", "image_dimensions"}, {"output", "chart.png"}, {"min_width", 100},
            {"max_width", 2000}, {"max_height", 1000}};
  auto r = run_one(c, {{"chart.png", png}});
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_EQ(r.detail, "chart.png is a 700x400 png (min_width 100, max_width 2000, max_height 1000)");
  c["max_width"] = 600;
  r = run_one(c, {{"chart.png", png}});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail, "chart.png is a 700x400 png: width 700 is above max_width 600");
  c = {{"kind", "image_dimensions"}, {"output", "chart.png"}, {"min_height", 500}};
  EXPECT_EQ(run_one(c, {{"chart.png", png}}).detail,
            "chart.png is a 700x400 png: height 400 is below min_height 500");
  EXPECT_EQ(run_one(c, {{"chart.png", png.substr(0, 20)}}).detail,
            "chart.png: truncated PNG: no complete IHDR chunk");
  EXPECT_EQ(run_one(c, {{"chart.png", "<svg/>"}}).detail, "chart.png: neither a PNG nor a JPEG");
  EXPECT_EQ(run_one(c, {}).detail, "no accepted output named \"chart.png\"");
}

// A 700x400 JPEG whose Exif orientation 6 makes browsers show it 400x700: the
// bounds hold for both ways a consumer may show it.
TEST(CheckRunTest, ImageDimensionsHonourTheExifOrientation) {
  auto jpeg = [](char orientation, bool little) {
    std::string tiff = little ? std::string("II\x2a\0\x08\0\0\0", 8) : std::string("MM\0\x2a\0\0\0\x08", 8);
    tiff += little ? std::string("\x01\0\x12\x01\x03\0\x01\0\0\0", 10) + orientation + std::string("\0\0\0\0\0\0\0", 7)
                   : std::string("\0\x01\x01\x12\0\x03\0\0\0\x01\0", 11) + orientation + std::string("\0\0\0\0\0\0", 6);
    std::string app1 = std::string("Exif\0\0", 6) + tiff;
    size_t len = app1.size() + 2;
    return std::string("\xff\xd8\xff\xe1", 4) + static_cast<char>(len >> 8) + static_cast<char>(len & 0xff) + app1 +
           std::string("\xff\xc0\0\x0b\x08\x01\x90\x02\xbc\x01\x01\x11\0\xff\xd9", 17);
  };
  json c = {{"kind", "image_dimensions"}, {"output", "photo.jpg"}, {"max_width", 600}};
  EXPECT_EQ(run_one(c, {{"photo.jpg", jpeg(1, true)}}).detail,
            "photo.jpg is a 700x400 jpeg: width 700 is above max_width 600");
  c["max_width"] = 700;
  c["max_height"] = 500;
  EXPECT_TRUE(run_one(c, {{"photo.jpg", jpeg(1, true)}}).passed);
  for (bool little : {true, false})
    EXPECT_EQ(run_one(c, {{"photo.jpg", jpeg(6, little)}}).detail,
              "photo.jpg is a 700x400 jpeg (its Exif orientation shows it as 400x700): height 700 as shown is above "
              "max_height 500");
  c = {{"kind", "image_dimensions"}, {"output", "photo.jpg"}, {"min_width", 500}};
  EXPECT_EQ(run_one(c, {{"photo.jpg", jpeg(8, true)}}).detail,
            "photo.jpg is a 700x400 jpeg (its Exif orientation shows it as 400x700): width 400 as shown is below "
            "min_width 500");
}

TEST(CheckRunTest, AllChecksRunInOrderIndependently) {
  auto checks = parse_checks(json::array(
      {{{"kind", "csv_row_count"}, {"output", "missing.csv"}, {"min", 1}},
       kSumCheck,
       {{"kind", "csv_row_count"}, {"output", "summary.csv"}, {"min", 1}, {"name", "has rows"}}}));
  ASSERT_TRUE(checks) << checks.error().what;
  auto results = run_checks(*checks, source({{"summary.csv", kSummary}}),
                            source({{"sales_jan.csv", kSalesJan}, {"sales_feb.csv", kSalesFeb}}));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(results[0].passed);
  EXPECT_EQ(results[0].detail, "no accepted output named \"missing.csv\"");
  EXPECT_TRUE(results[1].passed);
  EXPECT_TRUE(results[2].passed);
  EXPECT_EQ(results[2].label, "has rows");
  EXPECT_EQ(to_json(results[2]), (json{{"label", "has rows"},
                                       {"kind", "csv_row_count"},
                                       {"passed", true},
                                       {"detail", "summary.csv has 4 data rows (min 1)"}}));
}

TEST(CheckRunTest, HandMadeMalformedCheckFailsInsteadOfCrashing) {
  std::vector<Check> checks = {
      {"csv_row_count", json{{"kind", "csv_row_count"}, {"output", 5}}, "x"},
      {"json_schema", json{{"kind", "json_schema"}, {"output", "r.json"}, {"schema", {{"format", "x"}}}}, "y"},
      {"nope", json::object(), "z"},
      {"csv_row_count", json::array(), "w"}};
  auto results = run_checks(checks, source({}), source({}));
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].detail, "invalid check: checks[0].output: must be a string");
  EXPECT_TRUE(results[1].detail.starts_with(
      "invalid check: checks[1].schema: schema at \"/format\": unsupported keyword \"format\""));
  EXPECT_EQ(results[2].detail, "invalid check: checks[2]: unknown kind \"nope\"");
  EXPECT_EQ(results[3].detail, "invalid check: checks[3]: must be an object");
  for (const auto& r : results) EXPECT_FALSE(r.passed);
}

// Hostile output text ends up in details: it must stay short, one line and
// valid UTF-8 so the record can be serialized.
TEST(CheckRunTest, HostileTextInDetailsIsBoundedAndPrintable) {
  json c = {{"kind", "csv_column_sum"}, {"output", "o.csv"}, {"column", "total"},
            {"inputs", {{{"file", "i.csv"}, {"column", "amount"}}}}};
  std::string header;
  for (int i = 0; i < 5000; ++i) header += "col\xff\n" + std::to_string(i) + ",";
  header = "\"" + header + "\"\n";
  auto r = run_one(c, {{"o.csv", header}}, {{"i.csv", "amount\n1\n"}});
  EXPECT_FALSE(r.passed);
  EXPECT_LE(r.detail.size(), 2003u);
  EXPECT_EQ(r.detail.find('\n'), std::string::npos);
  EXPECT_NO_THROW(to_json(r).dump());
  EXPECT_TRUE(r.detail.starts_with("o.csv: no column \"total\" (columns: \"col\\xff\\x0a0,col"))
      << r.detail;

  r = run_one(c, {{"o.csv", "total\n\xc3(\x1b[31m\n"}}, {{"i.csv", "amount\n1\n"}});
  EXPECT_EQ(r.detail, "o.csv:total row 1 (line 2): \"\\xc3(\\x1b[31m\" is not a number");
  EXPECT_NO_THROW(to_json(r).dump());
}

TEST(CheckRunTest, ChecksShareOneCpuBudgetAndStopClearlyPastIt) {
  // 32 row counts over a 4 MB table with a 1 ms budget for all of them: the
  // first one to find it used stops, and every check after it too.
  std::string table = "a,b\n";
  while (table.size() < (4u << 20)) table += "1,2\n";
  auto parsed = parse_checks(json::array({json{{"kind", "csv_row_count"}, {"output", "t.csv"}, {"min", 0}}}));
  ASSERT_TRUE(parsed);
  std::vector<Check> checks;
  for (int i = 0; i < 32; ++i) {
    Check c = (*parsed)[0];
    c.label = "count " + std::to_string(i);
    checks.push_back(c);
  }
  CheckLimits limits;
  limits.cpu_ms = 1;
  auto results = run_checks(checks, source({{"t.csv", table}}), source({}), limits);
  ASSERT_EQ(results.size(), 32u);
  EXPECT_EQ(results[31].detail, "check stopped: CPU budget of 1 ms used");
  EXPECT_FALSE(results[31].passed);
  size_t stopped = 0;
  for (const auto& r : results) stopped += r.detail == "check stopped: CPU budget of 1 ms used";
  EXPECT_GE(stopped, 30u) << "no check runs once the budget is used";
}

TEST(CheckRunTest, ARecordOverTheLimitFailsItsCheckInsteadOfBeingHeld) {
  CheckLimits limits;
  limits.record_bytes = 1000;
  auto parsed = parse_checks(json::array({json{{"kind", "csv_row_count"}, {"output", "t.csv"}, {"min", 0}}}));
  ASSERT_TRUE(parsed);
  std::string wide = "a\n1\n\"" + std::string(5000, 'x') + "\"\n";
  auto r = run_checks(*parsed, source({{"t.csv", wide}}), source({}), limits).at(0);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail, "t.csv: line 3: a record over 1000 bytes");
  std::string many = "a\n" + std::string(100, ',') + "\n";  // 101 empty fields count 32 bytes each
  r = run_checks(*parsed, source({{"t.csv", many}}), source({}), limits).at(0);
  EXPECT_EQ(r.detail, "t.csv: line 2: a record over 1000 bytes");
}

TEST(CheckRunTest, AJsonDocumentOverItsLimitIsNotRead) {
  CheckLimits limits;
  limits.json_bytes = 100;
  auto parsed = parse_checks(json::array({json{{"kind", "json_schema"}, {"output", "d.json"}, {"schema", json::object()}}}));
  ASSERT_TRUE(parsed) << parsed.error().what;
  auto r = run_checks(*parsed, source({{"d.json", "[" + std::string(200, '1') + "]"}}), source({}), limits).at(0);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail, "d.json: more than the 100 bytes a json_schema check reads");
}


// --- junit -------------------------------------------------------------------

// What the coding agent workload's Makefile writes (examples/workloads/coding).
const char* kJunitReport =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<testsuites tests=\"3\" failures=\"0\" errors=\"0\">\n"
    "  <testsuite name=\"vec\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"0\">\n"
    "    <testcase classname=\"vec\" name=\"sum\" time=\"0.001\"/>\n"
    "    <testcase classname=\"vec\" name=\"max\"><system-out>ok &amp; done</system-out></testcase>\n"
    "  </testsuite>\n"
    "  <testsuite name=\"tool\"><testcase name=\"gen\"/></testsuite>\n"
    "</testsuites>\n";

std::string junit_detail(const Files& outputs, json extra = json::object()) {
  json check = {{"kind", "junit"}, {"output", "report.xml"}};
  check.update(extra);
  auto r = run_one(check, outputs);
  return (r.passed ? "passed: " : "failed: ") + r.detail;
}

TEST(JunitCheckTest, CountsAndBounds) {
  Files files = {{"report.xml", kJunitReport}};
  EXPECT_EQ(junit_detail(files),
            "passed: report.xml: 3 tests, 0 failures, 0 errors, 0 skipped (min_tests 1, max_failures 0, max_errors 0)");
  EXPECT_EQ(junit_detail(files, {{"min_tests", 4}}),
            "failed: report.xml: 3 tests, 0 failures, 0 errors, 0 skipped: fewer than min_tests 4");
  std::string failing =
      "<testsuite name=\"s\"><testcase name=\"a\"><failure message=\"1 != 2\"/></testcase>"
      "<testcase name=\"b\"><error/></testcase><testcase name=\"c\"><skipped/></testcase></testsuite>";
  files = {{"report.xml", failing}};
  EXPECT_EQ(junit_detail(files), "failed: report.xml: 3 tests, 1 failure, 1 error, 1 skipped: more than max_failures 0");
  EXPECT_EQ(junit_detail(files, {{"max_failures", 1}}),
            "failed: report.xml: 3 tests, 1 failure, 1 error, 1 skipped: more than max_errors 0");
  EXPECT_EQ(junit_detail(files, {{"max_failures", 1}, {"max_errors", 1}, {"max_skipped", 0}}),
            "failed: report.xml: 3 tests, 1 failure, 1 error, 1 skipped: more than max_skipped 0");
  EXPECT_EQ(junit_detail(files, {{"max_failures", 1}, {"max_errors", 1}}),
            "passed: report.xml: 3 tests, 1 failure, 1 error, 1 skipped (min_tests 1, max_failures 1, max_errors 1)");
  EXPECT_EQ(junit_detail({{"report.xml", "<testsuites/>"}}),
            "failed: report.xml: 0 tests, 0 failures, 0 errors, 0 skipped: fewer than min_tests 1");
}

// A report whose summary hides a failing testcase is refused: the counts are
// the testcases', and every declaration must agree with them.
TEST(JunitCheckTest, LyingSummaryIsRefused) {
  std::string lying =
      "<testsuites tests=\"1\" failures=\"0\"><testsuite name=\"s\" tests=\"1\" failures=\"0\">"
      "<testcase name=\"a\"><failure/></testcase></testsuite></testsuites>";
  EXPECT_EQ(junit_detail({{"report.xml", lying}}, {{"max_failures", 5}}),
            "failed: report.xml is not a JUnit XML report: <testsuite name=\"s\"> declares failures=\"0\" "
            "but holds 1 testcase with <failure>");
  EXPECT_EQ(junit_detail({{"report.xml", "<testsuite tests=\"-1\"/>"}}),
            "failed: report.xml is not a JUnit XML report: <testsuite>: tests=\"-1\" is not a count");
}

TEST(JunitCheckTest, HostileReportsFailWithTheirReason) {
  std::string bomb = "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;\">]>"
                     "<testsuite><testcase name=\"&b;\"/></testsuite>";
  EXPECT_EQ(junit_detail({{"report.xml", bomb}}),
            "failed: report.xml is not a JUnit XML report: byte 21: a DOCTYPE is refused (no DTD or entity declarations)");
  std::string deep = "<testsuite>";
  for (int i = 0; i < 100000; ++i) deep += "<x>";
  EXPECT_EQ(junit_detail({{"report.xml", deep}}),
            "failed: report.xml is not a JUnit XML report: byte 776: elements nested deeper than 256");
  EXPECT_EQ(junit_detail({{"report.xml", std::string(kJunitReport).substr(0, 200)}}),
            "failed: report.xml is not a JUnit XML report: byte 200: truncated: start tag <testcase> is not closed");
  EXPECT_EQ(junit_detail({{"report.xml", "<testsuite><testcase name=\"\xff\"/></testsuite>"}}),
            "failed: report.xml is not a JUnit XML report: byte 27: not valid UTF-8");
  EXPECT_EQ(junit_detail({{"report.xml", "<html><testcase/></html>"}}),
            "failed: report.xml is not a JUnit XML report: the root element is <html>, not <testsuites> or <testsuite>");
  EXPECT_EQ(junit_detail({{"report.xml", "<testsuites><testcase/></testsuites>"}}),
            "failed: report.xml is not a JUnit XML report: a <testcase> outside any <testsuite>");
  EXPECT_EQ(junit_detail({}), "failed: no accepted output named \"report.xml\"");
  CheckLimits limits;
  limits.xml_bytes = 100;
  auto parsed = parse_checks(json::array({{{"kind", "junit"}, {"output", "report.xml"}}}));
  ASSERT_TRUE(parsed);
  auto r = run_checks(*parsed, source({{"report.xml", kJunitReport}}), source({}), limits).at(0);
  EXPECT_EQ(r.detail, "report.xml: more than the 100 bytes a junit check reads");
}

TEST(JunitCheckTest, Shapes) {
  EXPECT_EQ(parse_error(json::array({{{"kind", "junit"}, {"output", "r.xml"}, {"max_failures", -1}}})),
            "checks[0].max_failures: must be a non-negative integer");
  EXPECT_EQ(parse_error(json::array({{{"kind", "junit"}, {"output", "r.xml"}, {"failures", 0}}})),
            "checks[0]: unknown field \"failures\" (allowed: kind, name, output, min_tests, max_failures, "
            "max_errors, max_skipped)");
}

// --- pdf ---------------------------------------------------------------------

const char* kPdf = "%PDF-1.4\n1 0 obj <</Type /Catalog>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n";

CheckResult run_pdf_check(const json& check, const Files& outputs, const PdfReader& reader) {
  auto parsed = parse_checks(json::array({check}));
  EXPECT_TRUE(parsed) << parsed.error().what;
  if (!parsed) return {};
  return run_checks(*parsed, source(outputs), source({}), {}, reader).at(0);
}

TEST(PdfCheckTest, PagesAndText) {
  std::vector<std::string> asked;
  PdfReader reader = [&](const std::string& name) -> Result<PdfFacts> {
    asked.push_back(name);
    return PdfFacts{2, "Quarterly\n  report\f page two\nfile:///etc/passwd"};
  };
  json check = {{"kind", "pdf"}, {"output", "doc.pdf"}, {"min_pages", 1}, {"max_pages", 3},
                {"contains", {"Quarterly report page", "two"}}, {"excludes", {"root:x:0:0"}}};
  auto r = run_pdf_check(check, {{"doc.pdf", kPdf}}, reader);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_EQ(r.detail, "doc.pdf has 2 pages (contains 2 required phrases, none of 1 excluded phrases, min_pages 1, max_pages 3)");
  EXPECT_EQ(asked, std::vector<std::string>{"doc.pdf"});
  check["max_pages"] = 1;
  EXPECT_EQ(run_pdf_check(check, {{"doc.pdf", kPdf}}, reader).detail, "doc.pdf has 2 pages, more than max_pages 1");
  check["max_pages"] = 3;
  check["excludes"] = {"etc/passwd"};
  EXPECT_EQ(run_pdf_check(check, {{"doc.pdf", kPdf}}, reader).detail, "doc.pdf has 2 pages; its text contains \"etc/passwd\"");
  check["contains"] = {"Annual"};
  EXPECT_EQ(run_pdf_check(check, {{"doc.pdf", kPdf}}, reader).detail,
            "doc.pdf has 2 pages; its text does not contain \"Annual\"");
}

// The host looks at the signature itself and hands nothing that is not a PDF
// to the reader; a reader's failure (a sandbox that ran out of time on a
// hostile PDF, say) fails the check with its reason.
TEST(PdfCheckTest, NotAPdfNeverReachesTheReader) {
  int calls = 0;
  PdfReader reader = [&](const std::string&) -> Result<PdfFacts> {
    ++calls;
    return fail("pdftotext ended as cpu_limit");
  };
  json check = {{"kind", "pdf"}, {"output", "doc.pdf"}};
  EXPECT_EQ(run_pdf_check(check, {{"doc.pdf", "<html>not a pdf</html>"}}, reader).detail,
            "doc.pdf: not a PDF (no %PDF- header)");
  std::string truncated = std::string(kPdf).substr(0, 40);
  EXPECT_EQ(run_pdf_check(check, {{"doc.pdf", truncated}}, reader).detail,
            "doc.pdf: not a complete PDF (no %%EOF in its last 1 KiB)");
  std::string eof_far = std::string(kPdf) + std::string(2000, ' ');
  EXPECT_EQ(run_pdf_check(check, {{"doc.pdf", eof_far}}, reader).detail,
            "doc.pdf: not a complete PDF (no %%EOF in its last 1 KiB)");
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(run_pdf_check(check, {{"doc.pdf", kPdf}}, reader).detail, "doc.pdf: pdftotext ended as cpu_limit");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(run_pdf_check(check, {{"doc.pdf", kPdf}}, {}).detail,
            "doc.pdf: pdf checks need a PDF reader (poppler in a sandbox), and none is configured");
}

TEST(PdfCheckTest, Shapes) {
  EXPECT_EQ(parse_error(json::array({{{"kind", "pdf"}, {"output", "d.pdf"}, {"min_pages", 3}, {"max_pages", 2}}})),
            "checks[0].min_pages: 3 is greater than max_pages 2");
  EXPECT_EQ(parse_error(json::array({{{"kind", "pdf"}, {"output", "d.pdf"}, {"contains", {" \n "}}}})),
            "checks[0].contains: must be an array of 1 to 16 non-empty strings of at most 1000 bytes");
  EXPECT_EQ(parse_error(json::array({{{"kind", "pdf"}, {"output", "d.pdf"}, {"excludes", "x"}}})),
            "checks[0].excludes: must be an array of 1 to 16 non-empty strings of at most 1000 bytes");
}

}  // namespace
}  // namespace airlock::validate
