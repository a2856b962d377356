#include "egress/response_filter.h"

#include <optional>
#include <vector>

#include "base/strings.h"

namespace airlock::egress {
namespace {

constexpr size_t kMaxChunkLine = 4096;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string hex(uint64_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[n % 16]);
    n /= 16;
  } while (n > 0);
  return out;
}

// "1a;ext=1" -> 26. At most 15 hex digits, so the size never overflows.
Result<uint64_t> chunk_size(std::string_view line) {
  std::string_view digits = trim(line.substr(0, line.find(';')));
  if (digits.empty() || digits.size() > 15) return fail("the upstream sent a bad chunk size");
  uint64_t n = 0;
  for (char c : digits) {
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0) return fail("the upstream sent a bad chunk size");
    n = n * 16 + static_cast<uint64_t>(v);
  }
  return n;
}

struct Head {
  int status = 0;
  std::vector<std::string> kept;  // status line and the headers passed on, without line ends
  std::optional<uint64_t> content_length;
  std::string content_length_text;  // as sent, for a response without a body (HEAD)
  std::vector<std::string> transfer_codings;
  std::string content_encoding;
};

Result<Head> parse_head(std::string_view text) {
  Head h;
  std::vector<std::string> lines = split(text.substr(0, text.size() - 2), '\n');
  lines.pop_back();  // after the last line's LF
  for (auto& line : lines) {
    if (line.empty() || line.back() != '\r')
      return fail("the upstream's response head has a bare LF");
    line.pop_back();
  }
  const std::string& status = lines.front();
  if (status.size() < 12 || status.compare(0, 7, "HTTP/1.") != 0 || status[8] != ' ' ||
      status.find_first_not_of("0123456789", 9) < 12 || (status.size() > 12 && status[12] != ' '))
    return fail("the upstream's status line is malformed");
  h.status = std::stoi(status.substr(9, 3));
  h.kept.push_back(status);
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line.front() == ' ' || line.front() == '\t')
      return fail("the upstream's response head has a folded or empty header line");
    auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0)
      return fail("the upstream's response head has a malformed header");
    std::string name = ascii_lower(line.substr(0, colon));
    std::string_view value = trim(std::string_view(line).substr(colon + 1));
    if (name == "content-length") {
      if (value.empty() || value.size() > 15 ||
          value.find_first_not_of("0123456789") != std::string_view::npos)
        return fail("the upstream sent a bad Content-Length");
      uint64_t n = std::stoull(std::string(value));
      if (h.content_length && *h.content_length != n)
        return fail("the upstream sent conflicting Content-Length");
      h.content_length = n;
      h.content_length_text = value;
    } else if (name == "transfer-encoding") {
      for (const auto& coding : split(value, ','))
        if (auto c = ascii_lower(trim(coding)); !c.empty()) h.transfer_codings.push_back(c);
    } else if (name == "content-encoding") {
      if (!h.content_encoding.empty()) h.content_encoding += ", ";
      h.content_encoding += ascii_lower(value);
    }
    // Framing and hop-by-hop headers are the gateway's to write.
    if (name == "content-length" || name == "transfer-encoding" || name == "connection" ||
        name == "keep-alive" || name == "proxy-connection" || name == "trailer" ||
        name == "upgrade")
      continue;
    h.kept.push_back(line);
  }
  return h;
}

}  // namespace

ResponseFilter::ResponseFilter(std::string_view secret, bool head_request, bool client_http10)
    : body_(secret), head_request_(head_request), client_http10_(client_http10) {}

Result<std::string> ResponseFilter::take_head() {
  auto parsed = parse_head(buffer_);
  buffer_.clear();
  if (!parsed) return std::unexpected(parsed.error());
  Head& h = *parsed;
  std::string lines;
  for (const auto& line : h.kept) lines += line + "\r\n";
  std::string out = body_.scrub_all(lines);
  if (h.status == 101)
    return fail("the upstream switched protocols, which the gateway never asks for");
  if (h.status < 200) return client_http10_ ? "" : out + "\r\n";  // 1xx: the final head follows

  bool no_body = head_request_ || h.status == 204 || h.status == 304;
  if (no_body) {
    if (h.content_length) out += "Content-Length: " + h.content_length_text + "\r\n";
    state_ = State::kDone;
    return out + "Connection: close\r\n\r\n";
  }
  if (!h.content_encoding.empty() && h.content_encoding != "identity")
    return fail(
        "the upstream sent a body with Content-Encoding " + h.content_encoding +
        " although the gateway asked for identity: the credential could not be kept out of it");
  if (!h.transfer_codings.empty()) {
    for (const auto& coding : h.transfer_codings)
      if (coding != "chunked")
        return fail("the upstream sent a body with transfer coding " + coding +
                    ": the credential could not be kept out of it");
    state_ = State::kChunkSize;
    rechunk_ = !client_http10_;
    if (rechunk_) out += "Transfer-Encoding: chunked\r\n";
  } else if (h.content_length) {
    left_ = *h.content_length;
    state_ = left_ > 0 ? State::kLength : State::kDone;
    out += "Content-Length: " + std::to_string(left_) + "\r\n";  // scrubbing keeps the length
  } else {
    state_ = State::kUntilClose;
  }
  return out + "Connection: close\r\n\r\n";
}

std::string ResponseFilter::body_out(std::string_view decoded) {
  std::string clean = body_.feed(decoded);
  if (!rechunk_ || clean.empty()) return clean;
  return hex(clean.size()) + "\r\n" + clean + "\r\n";
}

std::string ResponseFilter::end_of_body() {
  std::string tail = body_.finish();
  state_ = State::kDone;
  if (!rechunk_) return tail;
  return (tail.empty() ? "" : hex(tail.size()) + "\r\n" + tail + "\r\n") + "0\r\n\r\n";
}

Result<std::string> ResponseFilter::feed(std::string_view data) {
  std::string out;
  std::string carried;  // bytes after a head or a line, kept while the state changes
  while (!data.empty() && state_ != State::kDone) {
    switch (state_) {
      case State::kHead: {
        size_t old = buffer_.size();
        buffer_.append(data);
        size_t end = buffer_.find("\r\n\r\n", old >= 3 ? old - 3 : 0);
        if (end == std::string::npos) {
          if (buffer_.size() > kMaxResponseHeadBytes)
            return fail("the upstream's response head is too large");
          data = {};
          break;
        }
        carried = buffer_.substr(end + 4);
        buffer_.resize(end + 4);
        auto head = take_head();
        if (!head) return std::unexpected(head.error());
        out += *head;
        started_ = started_ || !head->empty();
        data = carried;
        break;
      }
      case State::kLength: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(left_, data.size()));
        out += body_out(data.substr(0, n));
        data.remove_prefix(n);
        if ((left_ -= n) == 0) out += end_of_body();
        break;
      }
      case State::kChunkSize:
      case State::kChunkEnd:
      case State::kTrailers: {
        size_t old = buffer_.size();
        buffer_.append(data);
        bool trailers = state_ == State::kTrailers;
        size_t end = trailers ? (buffer_.rfind("\r\n", 0) == 0
                                     ? 0
                                     : buffer_.find("\r\n\r\n", old >= 3 ? old - 3 : 0))
                              : buffer_.find("\r\n", old >= 1 ? old - 1 : 0);
        if (end == std::string::npos) {
          if (buffer_.size() > (trailers ? kMaxResponseHeadBytes : kMaxChunkLine))
            return fail("the upstream sent an overlong chunk line or trailer");
          data = {};
          break;
        }
        size_t used = end == 0 && trailers ? 2 : end + (trailers ? 4 : 2);
        carried = buffer_.substr(used);
        std::string line = buffer_.substr(0, end);
        buffer_.clear();
        data = carried;
        if (state_ == State::kChunkEnd) {
          if (!line.empty()) return fail("the upstream's chunk is longer than its size");
          state_ = State::kChunkSize;
        } else if (state_ == State::kChunkSize) {
          auto size = chunk_size(line);
          if (!size) return std::unexpected(size.error());
          left_ = *size;
          state_ = left_ == 0 ? State::kTrailers : State::kChunkData;
        } else {
          out += end_of_body();  // trailers are dropped: nothing of them reaches the client
        }
        break;
      }
      case State::kChunkData: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(left_, data.size()));
        out += body_out(data.substr(0, n));
        data.remove_prefix(n);
        if ((left_ -= n) == 0) state_ = State::kChunkEnd;
        break;
      }
      case State::kUntilClose:
        out += body_out(data);
        data = {};
        break;
      case State::kDone:
        break;
    }
  }
  return out;
}

Result<std::string> ResponseFilter::finish() {
  switch (state_) {
    case State::kDone:
      return "";
    case State::kUntilClose:
      return end_of_body();
    case State::kHead:
      return fail("the upstream closed before its response head was complete");
    default:
      return fail("the upstream closed in the middle of the response body");
  }
}

}  // namespace airlock::egress
