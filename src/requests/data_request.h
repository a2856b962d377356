// Data requests (docs/data-requests.md): code in a sandbox asks the
// application for data by writing one JSON object per line on a channel the
// host reads. A request is only data for the application: nothing here (or
// anywhere on the host) connects, fetches or opens what a request names.
//
// This file is the pure part, shared by jobs and sessions: what one line must
// look like, and a reader that splits the channel's bytes into lines within
// the limits without ever holding more than one line's worth of them.
// Everything a line says is untrusted input; a line that breaks a rule is
// refused with a reason (and its size), never half accepted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::requests {

// Per job (per session call). Configuration: `data_requests_per_job`,
// `data_request_bytes`; an operator may lower or raise them, a tenant cannot.
struct Limits {
  size_t requests = 4;              // lines read (valid or not); later lines are only counted
  size_t bytes_per_request = 4096;  // one line, without its newline
  // All the channel may carry: past it the host stops reading and closes it
  // (so a job cannot keep the host's cpu busy with a flood it would discard).
  size_t channel_bytes = 1 << 20;
};

// Field bounds of one request (the line's byte limit bounds them as well).
inline constexpr size_t kMaxNameChars = 64;           // [A-Za-z0-9._-]
inline constexpr size_t kMaxWhyChars = 1000;          // code points
inline constexpr size_t kMaxDescriptionChars = 2000;  // code points
inline constexpr size_t kMaxParams = 32;              // keys of `params`; keys are names too

struct DataRequest {
  std::string id;           // "r1", "r2", ... in the order accepted
  std::string name;         // what is asked for, e.g. "sales_2025.csv"
  std::string why;          // the code's reason, shown to the application
  std::string description;  // optional ("" when absent)
  std::string params_json;  // a JSON object of scalars, "{}" when absent
};

// A line the host did not accept: why, and how many bytes it had (for a
// line over the byte limit, all of its bytes, of which only the limit was
// looked at; for lines past the request limit, their sum).
struct Refusal {
  std::string reason;
  uint64_t bytes = 0;
  uint64_t lines = 1;  // > 1 only for the one entry that sums the lines past the request limit
};

// "r<n>" for the n-th accepted request (n from 1).
std::string request_id(size_t n);

// Whether `name` is 1..kMaxNameChars of [A-Za-z0-9._-] (request names, param keys).
bool valid_request_name(std::string_view name);

// Parses and validates one line (without its newline) into a request with
// the given id. The error (kind kInvalid) is the refusal reason, e.g.
// "not a JSON object", "name: must be 1-64 characters of A-Z a-z 0-9 . _ -",
// "params.limit: must be a string, number, boolean or null".
Result<DataRequest> parse_data_request(std::string_view line, std::string id,
                                       const Limits& limits = {});

// Splits a channel's bytes into lines as they arrive, within `limits`.
// Memory: at most limits.bytes_per_request bytes of a pending line, the
// accepted requests and at most limits.requests + 1 refusals, whatever the
// sandbox writes. Empty (whitespace-only) lines are skipped and count for
// nothing. Past limits.requests lines, bytes are counted, not kept.
class RequestReader {
 public:
  explicit RequestReader(Limits limits = {});

  // False once the channel has carried limits.channel_bytes: the caller
  // closes it; what came past the limit is not looked at, nor is a line
  // still pending then.
  bool feed(std::string_view bytes);
  // The channel closed: a last line without a newline counts as a line.
  void finish();
  bool closed() const { return closed_; }

  const Limits& limits() const { return limits_; }
  const std::vector<DataRequest>& requests() const { return requests_; }
  // In arrival order; then the sum of the lines past the limit (after
  // finish()), then the closing of the channel (lines 0), if it came to that.
  std::vector<Refusal> refused() const;
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  void consume(std::string_view bytes);
  void end_line();

  Limits limits_;
  std::string line_;         // the pending line, at most bytes_per_request bytes
  uint64_t line_bytes_ = 0;  // its length, including what was dropped past the cap
  bool line_nonblank_ = false;
  size_t lines_ = 0;  // lines looked at (accepted or refused), at most limits_.requests
  std::vector<DataRequest> requests_;
  std::vector<Refusal> refused_;
  Refusal beyond_{"", 0, 0};  // the lines past the request limit
  uint64_t bytes_read_ = 0;
  bool closed_ = false;
};

// The reason recorded for the lines past the request limit.
std::string beyond_limit_reason(const Limits& limits);

}  // namespace airlock::requests
