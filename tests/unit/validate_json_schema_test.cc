// The JSON Schema subset: each keyword passing and failing with the instance
// pointer, schema shape errors, $ref (nested, recursive, depth limit) and the
// work budget against hostile documents.
#include <gtest/gtest.h>

#include <string>

#include "validate/json_schema.h"

namespace airlock::validate {
namespace {

using nlohmann::json;

// "" when valid, else the error.
std::string check(const json& schema, const json& instance, const SchemaLimits& limits = {}) {
  auto shape = check_schema(schema);
  if (!shape) return "bad schema: " + shape.error().what;
  auto s = validate_json(schema, instance, limits);
  return s ? "" : s.error().what;
}

std::string shape_error(const json& schema) {
  auto s = check_schema(schema);
  return s ? "" : s.error().what;
}

TEST(JsonSchemaTest, BooleanSchemas) {
  EXPECT_EQ(check(true, {{"a", 1}}), "");
  EXPECT_EQ(check(false, 1), "at \"\": no value is allowed here (false schema)");
  EXPECT_EQ(check(json::object(), json::array({1, "x"})), "");
}

TEST(JsonSchemaTest, Type) {
  EXPECT_EQ(check({{"type", "string"}}, "x"), "");
  EXPECT_EQ(check({{"type", "string"}}, 1), "at \"\": expected string, got integer");
  EXPECT_EQ(check({{"type", "integer"}}, 3), "");
  EXPECT_EQ(check({{"type", "integer"}}, 3.0), "");  // 2020-12: a float with no fraction
  EXPECT_EQ(check({{"type", "integer"}}, 3.5), "at \"\": expected integer, got number");
  EXPECT_EQ(check({{"type", "number"}}, 3), "");
  EXPECT_EQ(check({{"type", "null"}}, nullptr), "");
  EXPECT_EQ(check({{"type", "boolean"}}, false), "");
  EXPECT_EQ(check({{"type", "object"}}, json::array()), "at \"\": expected object, got array");
  EXPECT_EQ(check({{"type", {"string", "null"}}}, nullptr), "");
  EXPECT_EQ(check({{"type", {"string", "null"}}}, 1),
            "at \"\": expected one of [\"string\",\"null\"], got integer");
}

TEST(JsonSchemaTest, EnumAndConst) {
  json e = {{"enum", {"a", 1, nullptr}}};
  EXPECT_EQ(check(e, "a"), "");
  EXPECT_EQ(check(e, 1.0), "");  // numbers compare by value
  EXPECT_EQ(check(e, "b"), "at \"\": must be one of [\"a\",1,null]");
  EXPECT_EQ(check({{"const", {{"v", 2}}}}, {{"v", 2}}), "");
  EXPECT_EQ(check({{"const", {{"v", 2}}}}, {{"v", 3}}), "at \"\": must equal the const value {\"v\":2}");
}

TEST(JsonSchemaTest, PropertiesRequiredAdditional) {
  json s = {{"type", "object"},
            {"properties", {{"a", {{"type", "integer"}}}, {"b/c", {{"type", "string"}}}}},
            {"required", {"a"}},
            {"additionalProperties", false}};
  EXPECT_EQ(check(s, {{"a", 1}, {"b/c", "x"}}), "");
  EXPECT_EQ(check(s, {{"b/c", "x"}}), "at \"\": required property \"a\" is missing");
  EXPECT_EQ(check(s, {{"a", 1}, {"b/c", 2}}), "at \"/b~1c\": expected string, got integer");
  EXPECT_EQ(check(s, {{"a", 1}, {"z~", 2}}),
            "at \"/z~0\": property \"z~\" is not allowed (additionalProperties)");
  s["additionalProperties"] = {{"type", "number"}};
  EXPECT_EQ(check(s, {{"a", 1}, {"z", 2.5}}), "");
  EXPECT_EQ(check(s, {{"a", 1}, {"z", "no"}}), "at \"/z\": expected number, got string");
  // Keywords for objects ignore other types.
  EXPECT_EQ(check({{"required", {"a"}}}, 5), "");
}

TEST(JsonSchemaTest, ItemsAndPrefixItems) {
  json s = {{"prefixItems", {{{"type", "string"}}, {{"type", "integer"}}}}, {"items", {{"type", "boolean"}}}};
  EXPECT_EQ(check(s, json::array({"a", 1, true, false})), "");
  EXPECT_EQ(check(s, json::array({"a"})), "");
  EXPECT_EQ(check(s, json::array({"a", "b"})), "at \"/1\": expected integer, got string");
  EXPECT_EQ(check(s, json::array({"a", 1, true, 0})), "at \"/3\": expected boolean, got integer");
  EXPECT_EQ(check({{"items", false}}, json::array({1})),
            "at \"/0\": no value is allowed here (false schema)");
  EXPECT_EQ(check({{"prefixItems", {true}}, {"items", false}}, json::array({1})), "");
}

TEST(JsonSchemaTest, ArrayBoundsAndUniqueItems) {
  EXPECT_EQ(check({{"minItems", 2}}, json::array({1})), "at \"\": array of 1 items is shorter than minItems 2");
  EXPECT_EQ(check({{"maxItems", 1}}, json::array({1, 2})), "at \"\": array of 2 items is longer than maxItems 1");
  EXPECT_EQ(check({{"minItems", 1}, {"maxItems", 2}}, json::array({1, 2})), "");
  json u = {{"uniqueItems", true}};
  EXPECT_EQ(check(u, json::array({1, "1", json{{"a", 1}}, json{{"a", 2}}})), "");
  EXPECT_EQ(check(u, json::array({1, json{{"a", 1}}, 2, json{{"a", 1}}})),
            "at \"\": items 1 and 3 are equal (uniqueItems)");
  EXPECT_EQ(check(u, json::array({1, 1.0})), "at \"\": items 0 and 1 are equal (uniqueItems)");
  EXPECT_EQ(check({{"uniqueItems", false}}, json::array({1, 1})), "");
}

TEST(JsonSchemaTest, StringLengthCountsCodePoints) {
  EXPECT_EQ(check({{"minLength", 2}}, "\xC3\xA9t\xC3\xA9"), "");   // "été": 3 characters, 5 bytes
  EXPECT_EQ(check({{"maxLength", 3}}, "\xC3\xA9t\xC3\xA9"), "");
  EXPECT_EQ(check({{"maxLength", 2}}, "\xC3\xA9t\xC3\xA9"),
            "at \"\": string of 3 characters is longer than maxLength 2");
  EXPECT_EQ(check({{"minLength", 4}}, "abc"), "at \"\": string of 3 characters is shorter than minLength 4");
}

TEST(JsonSchemaTest, Pattern) {
  json s = {{"pattern", "^[A-Z]{2}-[0-9]+$"}};
  EXPECT_EQ(check(s, "AB-12"), "");
  EXPECT_EQ(check(s, "ab-12"), "at \"\": \"ab-12\" does not match the pattern \"^[A-Z]{2}-[0-9]+$\"");
  EXPECT_EQ(check({{"pattern", "b"}}, "abc"), "");  // not anchored
  EXPECT_EQ(check({{"pattern", "a"}}, 5), "");     // strings only
  // Longer than the limit: refused before the regex engine sees it.
  EXPECT_EQ(check({{"pattern", "a"}}, std::string(10'001, 'a')),
            "at \"\": string of 10001 bytes is too long to match against a pattern (limit 10000)");
  EXPECT_EQ(check({{"pattern", "^a*$"}}, std::string(10'000, 'a')), "");
  EXPECT_EQ(shape_error({{"pattern", "(unclosed"}}),
            "schema at \"/pattern\": pattern \"(unclosed\": missing ')' at character 9");
  EXPECT_EQ(shape_error({{"pattern", "(a)\\1"}}),
            "schema at \"/pattern\": pattern \"(a)\\\\1\": backreferences are not supported at "
            "character 5");
}

// std::regex would overflow the stack on the first and take exponential time
// on the second; the linear-time matcher does neither.
TEST(JsonSchemaTest, HostileStringsAgainstPatterns) {
  EXPECT_EQ(check({{"pattern", "^(a|b)*$"}}, std::string(10'000, 'a')), "");
  std::string e = check({{"pattern", "^(a+)+$"}}, std::string(9'999, 'a') + "!");
  EXPECT_TRUE(e.ends_with("does not match the pattern \"^(a+)+$\"")) << e;
  // The total matching work is bounded too.
  json many = json::array();
  for (int i = 0; i < 100; ++i) many.push_back(std::string(10'000, 'a'));
  e = check({{"items", {{"pattern", "^(a|b|c|d|e|f|g|h|i|j){1,20}"}}}}, many);
  EXPECT_TRUE(e.ends_with("validation stopped: pattern matching exceeded 50000000 steps")) << e;
}

TEST(JsonSchemaTest, NumericBounds) {
  EXPECT_EQ(check({{"minimum", 1}}, 1), "");
  EXPECT_EQ(check({{"minimum", 1}}, 0.5), "at \"\": 0.5 is less than the minimum 1 (minimum)");
  EXPECT_EQ(check({{"maximum", 10}}, 10), "");
  EXPECT_EQ(check({{"maximum", 10}}, 11), "at \"\": 11 is greater than the maximum 10 (maximum)");
  EXPECT_EQ(check({{"exclusiveMinimum", 0}}, 0), "at \"\": 0 is not greater than 0 (exclusiveMinimum)");
  EXPECT_EQ(check({{"exclusiveMinimum", 0}}, 0.1), "");
  EXPECT_EQ(check({{"exclusiveMaximum", 1.5}}, 1.5), "at \"\": 1.5 is not less than 1.5 (exclusiveMaximum)");
  EXPECT_EQ(check({{"exclusiveMaximum", 1.5}}, 1), "");
  // Integers beyond 2^53 compare exactly.
  EXPECT_EQ(check({{"maximum", 9007199254740992}}, 9007199254740993),
            "at \"\": 9007199254740993 is greater than the maximum 9007199254740992 (maximum)");
  EXPECT_EQ(check({{"minimum", -1}}, 18446744073709551615ull), "");
  EXPECT_EQ(check({{"minimum", 1}}, "text"), "");  // numbers only
}

TEST(JsonSchemaTest, MultipleOf) {
  EXPECT_EQ(check({{"multipleOf", 3}}, 9), "");
  EXPECT_EQ(check({{"multipleOf", 3}}, -9), "");
  EXPECT_EQ(check({{"multipleOf", 3}}, 10), "at \"\": 10 is not a multiple of 3");
  EXPECT_EQ(check({{"multipleOf", 0.01}}, 19.99), "");  // no false failure from binary rounding
  EXPECT_EQ(check({{"multipleOf", 0.01}}, 19.995), "at \"\": 19.995 is not a multiple of 0.01");
  EXPECT_EQ(check({{"multipleOf", 2}}, 18446744073709551614ull), "");
  EXPECT_EQ(shape_error({{"multipleOf", 0}}), "schema at \"/multipleOf\": multipleOf must be a number greater than 0");
}

TEST(JsonSchemaTest, Combinators) {
  json any = {{"anyOf", {{{"type", "string"}}, {{"type", "integer"}}}}};
  EXPECT_EQ(check(any, 1), "");
  EXPECT_EQ(check(any, 1.5), "at \"\": matches none of the 2 anyOf schemas");
  json all = {{"allOf", {{{"minimum", 0}}, {{"maximum", 5}}}}};
  EXPECT_EQ(check(all, 3), "");
  EXPECT_EQ(check(all, 6), "at \"\": 6 is greater than the maximum 5 (maximum)");
  json one = {{"oneOf", {{{"type", "integer"}}, {{"type", "number"}, {"minimum", 0}}, {{"type", "string"}}}}};
  EXPECT_EQ(check(one, -1), "");
  EXPECT_EQ(check(one, "x"), "");
  EXPECT_EQ(check(one, 1), "at \"\": matches oneOf schemas 0 and 1, expected exactly one");
  EXPECT_EQ(check(one, nullptr), "at \"\": matches none of the 3 oneOf schemas");
  json n = {{"not", {{"type", "null"}}}};
  EXPECT_EQ(check(n, 0), "");
  EXPECT_EQ(check(n, nullptr), "at \"\": must not match the \"not\" schema");
  // Failures are reported where they happen in nested data.
  json nested = {{"properties", {{"rows", {{"items", {{"anyOf", {{{"type", "integer"}}, {{"type", "null"}}}}}}}}}}};
  EXPECT_EQ(check(nested, {{"rows", {1, nullptr, "x"}}}), "at \"/rows/2\": matches none of the 2 anyOf schemas");
}

TEST(JsonSchemaTest, RefToDefsNestedAndRecursive) {
  json s = {{"$defs",
             {{"money", {{"type", "number"}, {"minimum", 0}}},
              {"line", {{"type", "object"}, {"required", {"amount"}},
                        {"properties", {{"amount", {{"$ref", "#/$defs/money"}}}}}}},
              {"a~b/c", {{"type", "string"}}}}},
            {"properties", {{"lines", {{"items", {{"$ref", "#/$defs/line"}}}}},
                            {"code", {{"$ref", "#/$defs/a~0b~1c"}}}}}};
  EXPECT_EQ(check(s, {{"lines", {{{"amount", 1}}, {{"amount", 2.5}}}}, {"code", "x"}}), "");
  EXPECT_EQ(check(s, {{"lines", {{{"amount", 1}}, {{"amount", -2}}}}}),
            "at \"/lines/1/amount\": -2 is less than the minimum 0 (minimum)");
  EXPECT_EQ(check(s, {{"code", 1}}), "at \"/code\": expected string, got integer");

  // A recursive tree: fine within 64 nested $refs, refused beyond.
  json tree = {{"$defs", {{"node", {{"type", "object"},
                                    {"properties", {{"children", {{"items", {{"$ref", "#/$defs/node"}}}}}}}}}}},
               {"$ref", "#/$defs/node"}};
  auto deep = [](int levels) {
    json n = json::object();
    for (int i = 0; i < levels; ++i) n = json{{"children", json::array({n})}};
    return n;
  };
  EXPECT_EQ(check(tree, deep(63)), "");
  std::string e = check(tree, deep(64));
  EXPECT_TRUE(e.ends_with(": $ref nested deeper than 64")) << e;
  // A $ref that loops without consuming the instance stops at the depth limit.
  json loop = {{"$defs", {{"a", {{"$ref", "#/$defs/b"}}}, {"b", {{"$ref", "#/$defs/a"}}}}}, {"$ref", "#/$defs/a"}};
  EXPECT_EQ(check(loop, 1), "at \"\": $ref nested deeper than 64");
  // ... even under "not", where a failure must not turn into a pass.
  EXPECT_EQ(check({{"$defs", loop["$defs"]}, {"not", {{"$ref", "#/$defs/a"}}}}, 1),
            "at \"\": $ref nested deeper than 64");
}

TEST(JsonSchemaTest, VisitBudgetStopsHostileDocuments) {
  json s = {{"type", "array"}, {"items", {{"type", "integer"}}}};
  json big = json::array();
  for (int i = 0; i < 150'000; ++i) big.push_back(i);
  EXPECT_EQ(check(s, big),
            "at \"/99999\": validation stopped after 100000 schema/value visits (document too "
            "large for this schema)");
  EXPECT_EQ(check(s, big, {.max_visits = 200'000}), "");
  // Exponential fan-out through combinators is bounded too, also inside "not".
  json fan = json::parse(R"({
    "$defs": {"x": {"anyOf": [{"$ref": "#/$defs/y"}, {"$ref": "#/$defs/y"}]},
              "y": {"allOf": [{"items": {"$ref": "#/$defs/x"}}, false]}},
    "not": {"$ref": "#/$defs/x"}})");
  json nested = json::array();
  for (int i = 0; i < 25; ++i) nested = json::array({nested});  // 2^25 paths without a budget
  std::string e = check(fan, nested);
  EXPECT_TRUE(e.find("validation stopped after 100000") != std::string::npos) << e;
  // uniqueItems pays for its comparisons.
  EXPECT_TRUE(check({{"uniqueItems", true}}, big).ends_with("(document too large for this schema)"));
}

TEST(JsonSchemaTest, ShapeErrors) {
  EXPECT_EQ(shape_error(5), "schema at \"\": a schema must be an object or a boolean");
  std::string e = shape_error({{"properties", {{"d", {{"format", "date"}}}}}});
  EXPECT_EQ(e, "schema at \"/properties/d/format\": unsupported keyword \"format\" (supported: " +
                   std::string(supported_schema_keywords()) + ")");
  EXPECT_NE(e.find("type, enum, const, properties, required, additionalProperties"), std::string::npos);
  EXPECT_EQ(shape_error({{"patternProperties", json::object()}}).substr(0, 58),
            "schema at \"/patternProperties\": unsupported keyword \"patte");
  EXPECT_EQ(shape_error({{"type", "text"}}),
            "schema at \"/type\": type must be a type name or an array of distinct type names "
            "(null, boolean, object, array, number, string, integer)");
  EXPECT_TRUE(shape_error({{"type", {"string", "string"}}}).starts_with("schema at \"/type\": type must"));
  EXPECT_EQ(shape_error({{"enum", 1}}), "schema at \"/enum\": enum must be an array");
  EXPECT_EQ(shape_error({{"required", {"a", "a"}}}),
            "schema at \"/required\": required must be an array of distinct strings");
  EXPECT_EQ(shape_error({{"items", {true, false}}}),
            "schema at \"/items\": items must be a single schema (draft 2020-12; use prefixItems "
            "for tuples)");
  EXPECT_EQ(shape_error({{"anyOf", json::array()}}),
            "schema at \"/anyOf\": anyOf must be a non-empty array of schemas");
  EXPECT_EQ(shape_error({{"allOf", {1}}}),
            "schema at \"/allOf/0\": a schema must be an object or a boolean");
  EXPECT_EQ(shape_error({{"minItems", -1}}), "schema at \"/minItems\": minItems must be a non-negative integer");
  EXPECT_EQ(shape_error({{"maxLength", 1.5}}), "schema at \"/maxLength\": maxLength must be a non-negative integer");
  EXPECT_EQ(shape_error({{"uniqueItems", 1}}), "schema at \"/uniqueItems\": uniqueItems must be a boolean");
  EXPECT_EQ(shape_error({{"minimum", "0"}}), "schema at \"/minimum\": minimum must be a number");
  EXPECT_EQ(shape_error({{"exclusiveMinimum", true}}),  // draft-04 style
            "schema at \"/exclusiveMinimum\": exclusiveMinimum must be a number");
  EXPECT_EQ(shape_error({{"additionalProperties", "no"}}),
            "schema at \"/additionalProperties\": a schema must be an object or a boolean");
  EXPECT_EQ(shape_error({{"$ref", "#/definitions/a"}}),
            "schema at \"/$ref\": $ref must be \"#/$defs/NAME\" naming a definition in the root $defs");
  EXPECT_EQ(shape_error({{"$ref", "#/$defs/missing"}, {"$defs", {{"a", true}}}}),
            "schema at \"/$ref\": $ref must be \"#/$defs/NAME\" naming a definition in the root $defs");
  EXPECT_TRUE(shape_error({{"$ref", "https://example.com/s.json"}}).starts_with("schema at \"/$ref\": $ref must"));
  EXPECT_EQ(shape_error({{"properties", {{"a", {{"$defs", json::object()}}}}}}),
            "schema at \"/properties/a/$defs\": $defs is only supported at the schema root");
  json deep = true;
  for (int i = 0; i < 65; ++i) deep = json{{"not", deep}};
  EXPECT_TRUE(shape_error(deep).ends_with(": subschemas nested deeper than 64")) << shape_error(deep);
  // Annotations are accepted and ignored.
  EXPECT_EQ(shape_error({{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                         {"title", "t"}, {"description", "d"}, {"$comment", "c"},
                         {"default", 1}, {"examples", {1}}}),
            "");
}

TEST(JsonSchemaTest, ParseDocument) {
  EXPECT_EQ(*parse_json_document(R"({"a": [1, "]]]"]})"), (json{{"a", {1, "]]]"}}}));
  EXPECT_EQ(parse_json_document(std::string(513, '[') + std::string(513, ']')).error().what,
            "nested deeper than 512 levels");
  EXPECT_TRUE(parse_json_document(std::string(512, '[') + std::string(512, ']')));
  // Brackets inside strings (with escaped quotes) do not count.
  EXPECT_TRUE(parse_json_document("[\"\\\"" + std::string(600, '[') + "\"]"));
  EXPECT_TRUE(parse_json_document("{\"a\": 1,}").error().what.starts_with("not valid JSON: parse error"));
  EXPECT_TRUE(parse_json_document("\"\xff\"").error().what.starts_with("not valid JSON"));
  EXPECT_TRUE(parse_json_document("").error().what.starts_with("not valid JSON"));
  // A duplicate key: the schema would judge one value, a consumer may read the other.
  auto dup = parse_json_document(R"({"total": 5, "rows": [{"a": 1}], "total": -1})");
  ASSERT_FALSE(dup) << dup->dump();
  EXPECT_EQ(dup.error().what, "key \"total\" appears twice in one object (readers disagree on which value counts)");
  auto nested = parse_json_document(R"({"a": {"x": 1, "x": 2}})");
  ASSERT_FALSE(nested) << nested->dump();
  EXPECT_EQ(nested.error().what,
            "key \"x\" appears twice in one object (readers disagree on which value counts)");
  EXPECT_TRUE(parse_json_document(R"({"x": {"x": 1}, "y": [{"x": 2}, {"x": 3}]})"));  // one per object
}

}  // namespace
}  // namespace airlock::validate
