// JSON Schema checks (src/validate/json_schema.cc): the schema comes from a
// job request, the instance from the sandbox. Input: schema, NUL, instance.
// Both are parsed as untrusted documents (parse_json_document), the schema
// is checked (check_schema) and the instance validated with the default
// work budget.
#include "fuzz/fuzz.h"
#include "validate/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [schema_text, instance_text] = airlock::fuzz::split_nul(airlock::fuzz::text(data, size));
  auto schema = airlock::validate::parse_json_document(schema_text);
  if (!schema) return 0;
  if (!airlock::validate::check_schema(*schema)) return 0;
  auto instance = airlock::validate::parse_json_document(instance_text);
  if (!instance) return 0;
  (void)airlock::validate::validate_json(*schema, *instance);
  return 0;
}
