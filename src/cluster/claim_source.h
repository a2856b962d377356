// Where a worker node's job threads get their next job: claims on the store's
// queue (Store::claim_job), in place of role all's in-memory JobQueue. A
// thread with nothing to claim waits for a wake (a job was queued: the
// notifier on PostgreSQL; a slot freed) or polls every 500 ms (SQLite).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/job_queue.h"
#include "store/store.h"

namespace airlock::cluster {

class ClaimSource {
 public:
  static constexpr std::chrono::milliseconds kPoll{500};

  ClaimSource(store::Store& store, std::string node_id, std::function<std::vector<std::string>()> warm_images,
              std::function<void(const nlohmann::json&)> log);

  // The next job claimed for this node, waiting while none is claimable;
  // nullopt once closed (the node drains or stops).
  std::optional<service::QueuedJob> next();
  void wake();   // something may be claimable now
  void close();  // no more claims; waiting threads return
  bool closed() const;

 private:
  store::Store& store_;
  std::string node_id_;
  std::function<std::vector<std::string>()> warm_images_;
  std::function<void(const nlohmann::json&)> log_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool closed_ = false;
  uint64_t wakes_ = 0;  // counts wake() calls, so a wake between a claim and the wait is not lost
};

}  // namespace airlock::cluster
