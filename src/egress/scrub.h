// Keeps a secret out of a byte stream: every occurrence of the whole value,
// of its token (the value without an auth scheme such as "Bearer "), and of
// every piece of the token at least kMinFragment bytes long is replaced by
// as many '*' (the length stays, so a Content-Length stays right), also when
// it is split across reads. Pure.
//
// Why 8 bytes: a shorter piece is too little of a token to matter (API tokens
// are 20 to 100 characters of 5 to 6 bits each, so 7 bytes leave at least 13
// characters, some 70 bits, unknown), while every 8-byte piece of a token is
// caught wherever it stands, so an echo of a prefix, a suffix or the middle
// of the token is scrubbed too. What cannot be caught is an echo that
// changes the bytes (base64, URL encoding, compression; docs/egress.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace airlock::egress {

inline constexpr size_t kMinFragment = 8;

class Scrubber {
 public:
  // `secret`: a header value as the gateway sends it. "" scrubs nothing.
  explicit Scrubber(std::string_view secret);
  // What may be passed on now; holds back a tail that could start a match.
  std::string feed(std::string_view data);
  // The held-back tail, at the end of the stream.
  std::string finish();
  // The whole of `text`, scrubbed (a head: nothing is held back).
  std::string scrub_all(std::string_view text) const;

 private:
  struct Window {
    uint64_t hash;
    uint32_t at;  // offset in token_
  };
  void mark(std::string& mask, std::string_view text) const;
  size_t held_back(std::string_view text) const;
  bool is_window(std::string_view piece, uint64_t hash) const;

  std::vector<std::string> exact_;     // the value, and a token shorter than kMinFragment
  std::string token_;                  // kMinFragment bytes or more: every window of it
  std::vector<Window> windows_;        // sorted by hash
  std::array<uint64_t, 64> filter_{};  // a bit per (hash >> 52) of a window: most bytes stop here
  std::string pending_;                // held back, as it came
  std::string mask_;                   // per byte of pending_: '\1' where a match already covers it
};

}  // namespace airlock::egress
