// Whether the HTTP server may keep a connection it has just accepted, by
// the process's open descriptors: it refuses one while fewer than
// `reserve` descriptors would be left under the limit (RLIMIT_NOFILE), so
// connections never take what the rest of the program keeps for its work
// (a service's running jobs and open sessions). Counting /proc/self/fd costs
// a directory read, so the count is redone only every few milliseconds or
// when the estimate (the last count plus the connections accepted since,
// closes ignored: an overestimate) comes near the line.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace airlock::api {

// Entries of /proc/self/fd (the directory's own descriptor not counted);
// 0 when it cannot be read.
uint64_t count_open_descriptors();

class DescriptorGate {
 public:
  using Count = std::function<uint64_t()>;
  static constexpr std::chrono::milliseconds kRecount{20};

  DescriptorGate(uint64_t limit, uint64_t reserve, Count count = count_open_descriptors)
      : limit_(limit), reserve_(reserve), count_(std::move(count)) {}

  // Called with the accepted socket open: true when it may stay, false when
  // keeping it would leave fewer than `reserve` descriptors. Not thread-safe
  // (the server calls it on its accept strand).
  bool admit(std::chrono::steady_clock::time_point now);
  uint64_t refused() const { return refused_; }

 private:
  uint64_t limit_, reserve_;
  Count count_;
  uint64_t counted_ = 0, since_ = 0, refused_ = 0;
  std::chrono::steady_clock::time_point at_{};
  bool ever_ = false;
};

}  // namespace airlock::api
