#include "validate/csv.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "validate/text.h"

namespace airlock::validate {
namespace {

std::string line_error(size_t line, std::string_view what) {
  return "line " + std::to_string(line) + ": " + std::string(what);
}

bool is_blank_record(const std::vector<std::string>& fields, bool any_quoted) {
  return !any_quoted && fields.size() == 1 && fields[0].empty();
}

}  // namespace

Result<CsvTable> parse_csv(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  CsvTable table;
  bool have_header = false;
  size_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    // One record.
    size_t record_line = line;
    std::vector<std::string> fields;
    bool any_quoted = false;
    bool end_of_record = false;
    while (!end_of_record) {
      std::string field;
      if (i < n && text[i] == '"') {
        any_quoted = true;
        ++i;
        bool closed = false;
        while (i < n) {
          char c = text[i];
          if (c == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field.push_back('"');
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (c == '\n' || (c == '\r' && !(i + 1 < n && text[i + 1] == '\n'))) ++line;
          field.push_back(c);
          ++i;
        }
        if (!closed) return fail(line_error(record_line, "unterminated quoted field"));
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          return fail(line_error(line, "text after a closing quote"));
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          if (text[i] == '"') return fail(line_error(line, "quote inside an unquoted field"));
          field.push_back(text[i]);
          ++i;
        }
      }
      fields.push_back(std::move(field));
      if (i >= n) {
        end_of_record = true;
      } else if (text[i] == ',') {
        ++i;
      } else {  // line break
        if (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
        ++i;
        ++line;
        end_of_record = true;
      }
    }
    if (is_blank_record(fields, any_quoted)) continue;
    if (!have_header) {
      table.header = std::move(fields);
      have_header = true;
      continue;
    }
    if (fields.size() != table.header.size())
      return fail(line_error(record_line, "row has " + std::to_string(fields.size()) +
                                              " fields, the header has " +
                                              std::to_string(table.header.size())));
    table.rows.push_back(std::move(fields));
    table.row_lines.push_back(record_line);
  }
  if (!have_header) return fail("no header row (the file is empty)");
  return table;
}

Result<size_t> find_column(const CsvTable& table, std::string_view name) {
  std::optional<size_t> found;
  size_t count = 0;
  for (size_t i = 0; i < table.header.size(); ++i) {
    if (table.header[i] == name) {
      if (!found) found = i;
      ++count;
    }
  }
  if (count > 1)
    return fail("column " + in_quotes(name) + " appears " + std::to_string(count) +
                " times in the header");
  if (!found) {
    constexpr size_t kShown = 20;
    std::string available;
    for (size_t i = 0; i < table.header.size() && i < kShown; ++i) {
      if (!available.empty()) available += ", ";
      available += in_quotes(table.header[i], 40);
    }
    if (table.header.size() > kShown)
      available += ", ... (" + std::to_string(table.header.size()) + " in all)";
    return fail("no column " + in_quotes(name) + " (columns: " + available + ")");
  }
  return *found;
}

std::optional<double> parse_number(std::string_view cell) {
  auto is_space = [](char c) { return c == ' ' || c == '\t'; };
  while (!cell.empty() && is_space(cell.front())) cell.remove_prefix(1);
  while (!cell.empty() && is_space(cell.back())) cell.remove_suffix(1);
  if (cell.empty()) return std::nullopt;
  // Validate the grammar first: from_chars alone would accept "inf", "nan"
  // and hex floats in some modes, and stop silently at "12abc".
  std::string_view body = cell;
  if (body.front() == '+') body.remove_prefix(1);  // from_chars rejects '+'
  size_t i = 0;
  if (i < body.size() && body[i] == '-') ++i;
  size_t int_digits = 0, frac_digits = 0;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++int_digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return std::nullopt;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
  }
  if (i != body.size()) return std::nullopt;
  if (cell.front() == '+' && body.starts_with("-")) return std::nullopt;  // "+-1"
  double value = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value,
                                   std::chars_format::general);
  if (ec != std::errc() || end != body.data() + body.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

}  // namespace airlock::validate
