#include "validate/csv.h"

#include <charconv>
#include <cmath>
#include <cstring>
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

ByteSource string_source(std::string_view text) {
  return [text](char* buf, size_t n) mutable -> Result<size_t> {
    size_t k = std::min(n, text.size());
    std::memcpy(buf, text.data(), k);
    text.remove_prefix(k);
    return k;
  };
}

CsvReader::CsvReader(ByteSource source, size_t max_record_bytes)
    : source_(std::move(source)), max_record_bytes_(max_record_bytes) {}

int CsvReader::peek() {
  if (pos_ == buf_.size()) {
    if (eof_) return -1;
    buf_.resize(64 << 10);
    auto n = source_(buf_.data(), buf_.size());
    if (!n) read_error_ = n.error();
    buf_.resize(n ? *n : 0);
    pos_ = 0;
    if (buf_.empty()) {
      eof_ = true;
      return -1;
    }
  }
  return static_cast<unsigned char>(buf_[pos_]);
}

int CsvReader::get() {
  int c = peek();
  if (c >= 0) ++pos_;
  return c;
}

Result<std::optional<std::vector<std::string>>> CsvReader::next_record() {
  using Record = std::optional<std::vector<std::string>>;
  if (!started_) {  // a leading UTF-8 BOM is skipped (the first piece read holds it)
    started_ = true;
    if (peek() >= 0 && buf_.compare(pos_, 3, "\xEF\xBB\xBF") == 0) pos_ += 3;
  }
  for (;;) {
    if (read_error_) return std::unexpected(*read_error_);
    if (peek() < 0) return Record{};
    record_line_ = line_;
    std::vector<std::string> fields;
    size_t bytes = 0;
    bool any_quoted = false;
    auto over = [&]() {
      return fail(line_error(record_line_, "a record over " + std::to_string(max_record_bytes_) + " bytes"));
    };
    for (bool end_of_record = false; !end_of_record;) {
      std::string field;
      if (peek() == '"') {
        any_quoted = true;
        get();
        bool closed = false;
        for (int c; (c = peek()) >= 0;) {
          get();
          if (c == '"') {
            if (peek() == '"') {
              get();
              field.push_back('"');
              if (++bytes > max_record_bytes_) return over();
              continue;
            }
            closed = true;
            break;
          }
          if (c == '\n' || (c == '\r' && peek() != '\n')) ++line_;
          field.push_back(static_cast<char>(c));
          if (++bytes > max_record_bytes_) return over();
        }
        if (read_error_) return std::unexpected(*read_error_);
        if (!closed) return fail(line_error(record_line_, "unterminated quoted field"));
        int c = peek();
        if (c >= 0 && c != ',' && c != '\n' && c != '\r') return fail(line_error(line_, "text after a closing quote"));
      } else {
        for (int c; (c = peek()) >= 0 && c != ',' && c != '\n' && c != '\r';) {
          if (c == '"') return fail(line_error(line_, "quote inside an unquoted field"));
          field.push_back(static_cast<char>(get()));
          if (++bytes > max_record_bytes_) return over();
        }
      }
      fields.push_back(std::move(field));
      bytes += 32;
      if (bytes > max_record_bytes_) return over();
      int c = get();
      if (c < 0) {
        end_of_record = true;
      } else if (c != ',') {  // line break
        if (c == '\r' && peek() == '\n') get();
        ++line_;
        end_of_record = true;
      }
    }
    if (read_error_) return std::unexpected(*read_error_);
    if (!is_blank_record(fields, any_quoted)) return Record{std::move(fields)};
  }
}

Result<std::vector<std::string>> CsvReader::header() {
  auto record = next_record();
  if (!record) return std::unexpected(record.error());
  if (!*record) return fail("no header row (the file is empty)");
  header_size_ = (*record)->size();
  return std::move(**record);
}

Result<std::optional<std::vector<std::string>>> CsvReader::next_row() {
  auto record = next_record();
  if (!record || !*record) return record;
  if ((*record)->size() != header_size_)
    return fail(line_error(record_line_, "row has " + std::to_string((*record)->size()) + " fields, the header has " +
                                             std::to_string(header_size_)));
  return record;
}

Result<CsvTable> parse_csv(std::string_view text) {
  CsvReader reader(string_source(text), SIZE_MAX / 2);
  CsvTable table;
  auto header = reader.header();
  if (!header) return std::unexpected(header.error());
  table.header = std::move(*header);
  for (;;) {
    auto row = reader.next_row();
    if (!row) return std::unexpected(row.error());
    if (!*row) return table;
    table.rows.push_back(std::move(**row));
    table.row_lines.push_back(reader.row_line());
  }
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
