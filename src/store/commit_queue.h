// Group commit: writers that arrive while a batch is being committed queue
// up; the next writer that finds no commit in progress becomes the leader and
// commits everything queued (at most max_batch writes) in one transaction, so
// N jobs finishing at once pay one fsync instead of N. No writer waits for a
// timer: a lone write on an idle store commits at once. A writer waits at most
// for the batch in progress and its own (with fewer than max_batch queued).
//
// The queue knows nothing of SQLite: `commit` (the Store's) runs a batch and
// sets each write's result. Writes commit in the order they were submitted.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "base/result.h"

namespace airlock::store {

class CommitQueue {
 public:
  struct Write {
    std::function<Status()> apply;    // the write's statements, inside the batch's transaction
    std::function<void()> committed;  // after the commit made it durable (may be empty)
    Status result;                    // set by `commit`
    bool done = false;                // guarded by the queue's mutex
  };
  // Runs `batch` (in order) and sets every write's result; a write whose
  // result is success must be durable when it returns.
  using Commit = std::function<void(const std::vector<Write*>& batch)>;

  CommitQueue(size_t max_batch, Commit commit);
  CommitQueue(const CommitQueue&) = delete;
  CommitQueue& operator=(const CommitQueue&) = delete;

  // Blocks until `w` was committed or refused; returns its result. `w` must
  // stay alive until then (it lives on the caller's stack).
  Status submit(Write& w);

  struct Stats {
    uint64_t writes = 0;   // committed or refused
    uint64_t batches = 0;  // calls of `commit`
    size_t largest = 0;    // writes in the largest batch
    size_t queued = 0;     // writes waiting now for a batch to take them
    size_t committing = 0;  // writes in the batch being committed now
  };
  Stats stats() const;
  size_t max_batch() const { return max_batch_; }

 private:
  const size_t max_batch_;
  const Commit commit_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::deque<Write*> queue_;  // guarded by mu_
  bool committing_ = false;   // guarded by mu_: a leader is running a batch
  size_t in_batch_ = 0;       // guarded by mu_: the size of that batch
  Stats stats_;               // guarded by mu_
};

}  // namespace airlock::store
