// Pure: how long this node has been in touch with the store without a break,
// so that it judges other nodes' heartbeats only when it could have seen them
// (docs/store.md "Queue and nodes"). After an outage every node's heartbeat
// is old; a sweeper that came back first must not declare the others lost
// before they had a full lease to write theirs.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>

namespace airlock::cluster {

class StoreContact {
 public:
  using Clock = std::chrono::steady_clock;

  // A call to the store passed (`ok`) or failed because of the store at `now`.
  void saw(bool ok, Clock::time_point now);
  // In touch without a failure for at least `lease` up to `now`.
  bool unbroken_for(std::chrono::milliseconds lease, Clock::time_point now) const;

 private:
  mutable std::mutex mu_;
  std::optional<Clock::time_point> since_;  // the first success after the last failure
};

}  // namespace airlock::cluster
