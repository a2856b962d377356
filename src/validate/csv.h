// CSV tables (RFC 4180, header row) and strict numbers, for the semantic
// checks. Pure functions over bytes the caller hands in.
#pragma once

#include <functional>
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

// Bytes read in pieces: fills up to `n` bytes of `buf`, 0 at the end.
using ByteSource = std::function<Result<size_t>(char* buf, size_t n)>;
// The bytes of `text`, in pieces (it must outlive the source).
ByteSource string_source(std::string_view text);

// Reads a CSV table (the grammar of parse_csv) record by record from a
// ByteSource, holding one record and one buffer at a time. A record whose
// fields take more than `max_record_bytes` (each field counts 32 bytes more)
// is an error, so a hostile file cannot make it hold more.
class CsvReader {
 public:
  CsvReader(ByteSource source, size_t max_record_bytes);
  // The header: the first record that is not blank (call it first, once).
  Result<std::vector<std::string>> header();
  // The next data row, or nullopt at the end; its first line is row_line().
  Result<std::optional<std::vector<std::string>>> next_row();
  size_t row_line() const { return record_line_; }

 private:
  int peek();  // the next byte, or -1 at the end (or after a read error)
  int get();
  Result<std::optional<std::vector<std::string>>> next_record();  // blank records skipped
  ByteSource source_;
  size_t max_record_bytes_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false, started_ = false;
  std::optional<Error> read_error_;
  size_t line_ = 1, record_line_ = 0, header_size_ = 0;
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
