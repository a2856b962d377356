// Server-Sent Events, the client side: bytes in, events out. Pure: the
// caller feeds what arrived on the wire, in pieces of any size.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace airlock::api {

struct Event {
  std::string id, event, data;  // several data lines are joined with '\n'
};

class SseParser {
 public:
  void feed(std::string_view bytes) { pending_.append(bytes); }
  // The next complete event; nullopt until an empty line ends one. Comments
  // (":...") and blocks without id, event or data are skipped.
  std::optional<Event> next();

 private:
  std::string pending_;
};

}  // namespace airlock::api
