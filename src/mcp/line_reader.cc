#include "mcp/line_reader.h"

namespace airlock::mcp {

void LineReader::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    auto nl = bytes.find('\n');
    std::string_view piece = bytes.substr(0, nl);
    if (!skipping_ && current_.size() + piece.size() > max_) {
      skipping_ = true;
      current_.clear();
      current_.shrink_to_fit();
    }
    if (!skipping_) current_.append(piece);
    if (nl == std::string_view::npos) return;
    bytes.remove_prefix(nl + 1);
    Line line;
    if (skipping_) {
      line.too_long = true;
    } else {
      line.text = std::move(current_);
      if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
    }
    current_.clear();
    skipping_ = false;
    done_.push_back(std::move(line));
  }
}

std::optional<Line> LineReader::next() {
  if (done_.empty()) return std::nullopt;
  Line line = std::move(done_.front());
  done_.pop_front();
  return line;
}

}  // namespace airlock::mcp
