#include "store/commit_queue.h"

#include <algorithm>
#include <utility>

#include "base/check.h"

namespace airlock::store {

CommitQueue::CommitQueue(size_t max_batch, Commit commit)
    : max_batch_(std::max<size_t>(1, max_batch)), commit_(std::move(commit)) {}

Status CommitQueue::submit(Write& w) {
  std::unique_lock lock(mu_);
  w.done = false;
  queue_.push_back(&w);
  while (!w.done) {
    if (committing_) {
      done_.wait(lock);
      continue;
    }
    // Leader: take the oldest writes (ours among them unless more than
    // max_batch are ahead of it; then we lead again for the next batch).
    committing_ = true;
    size_t n = std::min(max_batch_, queue_.size());
    std::vector<Write*> batch(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    in_batch_ = n;
    lock.unlock();
    // An exception out of a commit would leave every writer waiting for ever:
    // it ends the process instead (a broken invariant, not bad input).
    [&]() noexcept { commit_(batch); }();
    lock.lock();
    committing_ = false;
    in_batch_ = 0;
    for (Write* b : batch) b->done = true;
    stats_.writes += batch.size();
    ++stats_.batches;
    stats_.largest = std::max(stats_.largest, batch.size());
    done_.notify_all();
  }
  return w.result;
}

CommitQueue::Stats CommitQueue::stats() const {
  std::lock_guard lock(mu_);
  Stats s = stats_;
  s.queued = queue_.size();
  s.committing = in_batch_;
  return s;
}

}  // namespace airlock::store
