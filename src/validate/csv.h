// CSV tables (RFC 4180, header row) and strict numbers, for the semantic
// checks. Pure functions over bytes the caller hands in.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::validate {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // data rows, header excluded
  std::vector<size_t> row_lines;               // 1-based line on which each data row starts
};

// Parses RFC 4180: fields separated by ',', records ended by CRLF, LF or CR,
// quoted fields may hold commas, quotes ("") and line breaks. A leading UTF-8
// BOM is skipped, blank lines are skipped, the final line break is optional.
// Errors (with the line): no header, an unterminated quote, a quote inside an
// unquoted field, text after a closing quote, a row whose field count differs
// from the header's.
Result<CsvTable> parse_csv(std::string_view text);

// The index of `name` in the header; an error names the available columns
// (or says the name is ambiguous when the header repeats it).
Result<size_t> find_column(const CsvTable& table, std::string_view name);

// A strict decimal number: optional spaces/tabs around, optional sign,
// digits with an optional fraction (or a fraction alone), optional exponent.
// Rejects "", "12abc", "1,000", "0x10", "inf", "nan" and anything that
// overflows a double.
std::optional<double> parse_number(std::string_view cell);

}  // namespace airlock::validate
