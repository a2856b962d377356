#include "http/sse.h"

#include <utility>

namespace airlock::api {
namespace {

// Where the first event block ends (an empty line, \n\n or \r\n\r\n), and
// how long the separator is.
std::pair<size_t, size_t> block_end(const std::string& text) {
  size_t lf = text.find("\n\n"), crlf = text.find("\r\n\r\n");
  if (crlf != std::string::npos && (lf == std::string::npos || crlf < lf)) return {crlf, 4};
  return {lf, 2};
}

}  // namespace

std::optional<Event> SseParser::next() {
  while (true) {
    auto [end, sep] = block_end(pending_);
    if (end == std::string::npos) return std::nullopt;
    std::string block = pending_.substr(0, end);
    pending_.erase(0, end + sep);
    Event ev;
    bool any = false, has_data = false;
    size_t start = 0;
    while (start <= block.size()) {
      size_t nl = block.find('\n', start);
      if (nl == std::string::npos) nl = block.size();
      std::string line = block.substr(start, nl - start);
      start = nl + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line[0] == ':') continue;
      size_t colon = line.find(':');
      std::string field = line.substr(0, colon);
      std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
      if (field == "id") {
        ev.id = value;
        any = true;
      } else if (field == "event") {
        ev.event = value;
        any = true;
      } else if (field == "data") {
        if (has_data) ev.data += '\n';
        ev.data += value;
        has_data = any = true;
      }
    }
    if (any) return ev;
  }
}

}  // namespace airlock::api
