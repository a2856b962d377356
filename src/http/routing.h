// The pure text logic of the HTTP layer: request targets, percent-decoding,
// query strings, route patterns and the route table, Server-Sent Event
// framing. No sockets and no Boost here, so all of it is unit-tested
// (tests/unit/http_routing_test.cc) and the server only wires it to Beast.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::api {

// "%41b+c" -> "Ab+c" (or "Ab c" with plus_is_space, for query strings).
// nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space = false);

// "a=1&b=x%20y&a=2" -> {a: "2", b: "x y"}: decoded, '+' is a space, the last
// of repeated names wins, "flag" alone is {flag: ""}. Fails on a malformed
// escape or a NUL byte in a name or value.
Result<std::map<std::string, std::string>> parse_query(std::string_view raw_query);

// An origin-form request target ("/v1/jobs/abc?x=1") taken apart.
struct Target {
  std::string path;                           // decoded path, without the query
  std::vector<std::string> segments;          // decoded segments of the path ("/a/b" -> {a, b})
  std::map<std::string, std::string> query;   // see parse_query
};

// Fails (the server answers 400) when the target does not start with '/', has
// a malformed escape, holds a NUL byte anywhere, or has a segment that
// decodes to contain '/' ("%2F"): segments, and so path parameters, never do.
Result<Target> parse_target(std::string_view target);

// A route pattern: literal segments and {name} parameters, "/v1/jobs/{id}/events".
class RoutePattern {
 public:
  // Fails on a pattern that does not start with '/', an empty or malformed
  // parameter name, or a name used twice.
  static Result<RoutePattern> parse(std::string_view pattern);

  // The parameters if the decoded segments match (a parameter matches one
  // whole non-empty segment), nullopt otherwise.
  std::optional<std::map<std::string, std::string>> match(
      const std::vector<std::string>& segments) const;

  const std::string& text() const { return text_; }
  // For precedence: true where the pattern has a literal segment.
  const std::vector<bool>& literal_mask() const { return literal_; }

 private:
  std::string text_;
  std::vector<std::string> parts_;  // literal text, or the parameter name
  std::vector<bool> literal_;
};

// Routes by method and pattern; the server keeps the handlers by index.
class RouteTable {
 public:
  // The index of the new route. Fails on a bad pattern or a method and
  // pattern already registered.
  Result<size_t> add(std::string method, std::string_view pattern);

  enum class Outcome { kFound, kNotFound, kMethodNotAllowed };
  struct Lookup {
    Outcome outcome = Outcome::kNotFound;
    size_t index = 0;                           // when kFound
    std::map<std::string, std::string> params;  // when kFound
    std::string allow;                          // when kMethodNotAllowed: "GET, POST"
  };
  // When several patterns match, the one with a literal segment where the
  // others have a parameter (earliest such segment) wins: "/jobs/search"
  // before "/jobs/{id}".
  Lookup find(std::string_view method, const std::vector<std::string>& segments) const;

  size_t size() const { return routes_.size(); }

 private:
  struct Entry {
    std::string method;
    RoutePattern pattern;
  };
  std::vector<Entry> routes_;
};

// One Server-Sent Event, framed: "id: ..\nevent: ..\ndata: ..\n\n". Each line
// of `data` (split at \n, \r\n or \r) becomes one "data:" line; CR and LF are
// removed from `id` and `event`, and empty ones are left out.
std::string format_event(std::string_view id, std::string_view event, std::string_view data);

// A string safe for a log line: bytes outside printable ASCII (and '%')
// become %XX, and it is cut at `max` bytes with "..." appended.
std::string loggable(std::string_view in, size_t max = 512);

}  // namespace airlock::api
