// Every connection attempt the gateway saw, allowed or denied, for the job
// record. Thread-safe: the gateway's connection threads add, the job takes
// the list after the gateway has stopped.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace airlock::egress {

struct Attempt {
  int64_t unix_ms = 0;     // when the request arrived
  std::string method;      // "CONNECT", "GET", ...
  std::string host;        // as the code asked (lower case)
  uint16_t port = 0;
  std::string path;        // "" for CONNECT; capped at 256 bytes
  bool allowed = false;
  std::string reason;      // why denied, or which rule allowed it
  std::string address;     // the address connected to, if any
  std::string secret;      // the name of the credential added, never its value
  int status = 0;          // the gateway's own HTTP status (403, 502, ...), 0 when relayed
  uint64_t bytes_up = 0;   // from the code to the destination (request body or tunnel)
  uint64_t bytes_down = 0; // from the destination to the code
  uint64_t duration_ms = 0;
};

nlohmann::json to_json(const Attempt& attempt);

class AttemptLog {
 public:
  static constexpr size_t kMaxKept = 1000;  // beyond this, attempts are only counted
  void add(Attempt attempt);
  std::vector<Attempt> take();
  uint64_t dropped() const;

 private:
  mutable std::mutex mu_;
  std::vector<Attempt> attempts_;
  uint64_t dropped_ = 0;
};

}  // namespace airlock::egress
