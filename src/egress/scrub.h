// Keeps a secret's value out of a byte stream: every occurrence is replaced
// by as many '*' (the length stays, so Content-Length stays right), also when
// it is split across reads. Pure.
#pragma once

#include <string>
#include <string_view>

namespace airlock::egress {

class Scrubber {
 public:
  explicit Scrubber(std::string needle) : needle_(std::move(needle)) {}
  // What may be passed on now; holds back a tail that could start a match.
  std::string feed(std::string_view data);
  // The held-back tail, at the end of the stream.
  std::string finish();

 private:
  std::string needle_;
  std::string pending_;
};

}  // namespace airlock::egress
