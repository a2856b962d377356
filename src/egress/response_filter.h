// What the code reads back from an upstream to which the gateway added a
// credential. The scrubber must see what the client will read, so the
// response is decoded: the status line and headers, then the body framed by
// Content-Length, chunked transfer coding or the end of the connection; the
// secret is scrubbed (scrub.h) from the head and from the decoded body,
// across chunk boundaries and reads; and the gateway frames the body again
// itself (the same Content-Length, fresh chunks, or the end of the
// connection for an HTTP/1.0 client). Trailers are dropped. A body the
// scrubber cannot read (a Content-Encoding other than identity, a transfer
// coding other than chunked) is refused. Pure: bytes in, bytes out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "egress/scrub.h"

namespace airlock::egress {

inline constexpr size_t kMaxResponseHeadBytes = 64 << 10;

class ResponseFilter {
 public:
  // `secret`: the header value the gateway sent. `head_request`: the request
  // was HEAD (no body follows any status). `client_http10`: the client spoke
  // HTTP/1.0 and cannot read chunks.
  ResponseFilter(std::string_view secret, bool head_request, bool client_http10);

  // Bytes from the upstream in, bytes for the client out. An error ends the
  // exchange: a 502 if started() is still false, else the connection is cut.
  Result<std::string> feed(std::string_view data);
  // The upstream closed its side: what is left for the client, or an error
  // when the response was cut short.
  Result<std::string> finish();
  // The whole response has been passed on; bytes after it are ignored.
  bool done() const { return state_ == State::kDone; }
  // Some of the response has been passed on to the client.
  bool started() const { return started_; }

 private:
  enum class State {
    kHead,
    kLength,
    kChunkSize,
    kChunkData,
    kChunkEnd,
    kTrailers,
    kUntilClose,
    kDone
  };
  Result<std::string> take_head();
  std::string body_out(std::string_view decoded);
  std::string end_of_body();

  Scrubber body_;
  bool head_request_, client_http10_;
  State state_ = State::kHead;
  std::string buffer_;    // head, chunk-size or trailer bytes not complete yet
  uint64_t left_ = 0;     // body or chunk bytes still to come
  bool rechunk_ = false;  // the client gets fresh chunks
  bool started_ = false;
};

}  // namespace airlock::egress
