// CSV tables for the semantic checks (src/validate/csv.cc): parse_csv,
// find_column on every header name, parse_number on every cell.
// Properties: every row has the header's width; a number is finite.
#include <cmath>

#include "fuzz/fuzz.h"
#include "validate/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto table = airlock::validate::parse_csv(airlock::fuzz::text(data, size));
  if (!table) return 0;
  AIRLOCK_CHECK(table->rows.size() == table->row_lines.size());
  for (const auto& name : table->header) (void)airlock::validate::find_column(*table, name);
  for (const auto& row : table->rows) {
    AIRLOCK_CHECK(row.size() == table->header.size());
    for (const auto& cell : row) {
      auto number = airlock::validate::parse_number(cell);
      if (number) AIRLOCK_CHECK(std::isfinite(*number));
    }
  }
  return 0;
}
