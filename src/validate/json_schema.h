// A JSON Schema (draft 2020-12) subset for the json_schema check: the schema
// comes from the application's request, the instance from the sandbox, so the
// instance is parsed with a nesting limit and validation has a work budget.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace airlock::validate {

// The keywords check_schema accepts, comma-separated, for messages and docs.
std::string_view supported_schema_keywords();

// Checks the schema's shape before any job runs: every keyword supported (an
// unknown one is an error, never ignored), every value well-typed, every
// pattern valid for the linear-time matcher in regex.h, every $ref of the form "#/$defs/NAME"
// naming an existing root definition, $defs only at the root, nesting of
// subschemas at most 64. The error starts with the schema location:
// `schema at "/properties/a": unsupported keyword "format" (supported: ...)`.
Status check_schema(const nlohmann::json& schema);

struct SchemaLimits {
  size_t max_visits = 100'000;      // (subschema, instance node) evaluations in total
  size_t max_ref_depth = 64;        // nested $ref resolutions on one evaluation path
  size_t max_pattern_length = 10'000;  // longest string a pattern is run against
  // Pattern matching work in total: the sum of (string length + 1) x pattern
  // program size over every pattern check.
  size_t max_pattern_steps = 50'000'000;
};

// Validates `instance` against a schema that passed check_schema. The first
// failure found (keywords in a fixed order, array items and object members in
// document order) is the error, led by the instance location as a JSON
// pointer: `at "/items/0/price": expected number, got string`. Exceeding a
// limit is a failure too, also inside "not", "anyOf" and "oneOf".
Status validate_json(const nlohmann::json& schema, const nlohmann::json& instance,
                     const SchemaLimits& limits = {});

// Parses an untrusted document; nesting deeper than max_depth is refused
// before the parser sees it.
Result<nlohmann::json> parse_json_document(std::string_view text, size_t max_depth = 512);

// "/a~1b/0" style pointer segment escaping (RFC 6901).
std::string pointer_segment(std::string_view key);

}  // namespace airlock::validate
