// Newline-delimited messages from a byte stream (MCP's stdio transport),
// with a bound on a line's length: a longer line is skipped to its end and
// reported once, never buffered whole. Pure: bytes in, lines out.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace airlock::mcp {

struct Line {
  std::string text;       // without the newline (and without a trailing \r)
  bool too_long = false;  // the line was longer than the bound; text is empty
};

class LineReader {
 public:
  explicit LineReader(size_t max_line_bytes) : max_(max_line_bytes) {}
  void feed(std::string_view bytes);
  std::optional<Line> next();

 private:
  size_t max_;
  std::string current_;    // the line being read
  bool skipping_ = false;  // the current line is over the bound: drop it to its end
  std::deque<Line> done_;
};

}  // namespace airlock::mcp
