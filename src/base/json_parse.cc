#include "base/json_parse.h"

#include "base/nesting.h"

namespace airlock {

Result<nlohmann::json> parse_json(std::string_view text, size_t max_depth) {
  if (!nesting_within(text, max_depth))
    return fail("nested deeper than " + std::to_string(max_depth) + " levels");
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("not valid JSON");
  return j;
}

nlohmann::json parse_json_or_discarded(std::string_view text, size_t max_depth) {
  if (!nesting_within(text, max_depth)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace airlock
