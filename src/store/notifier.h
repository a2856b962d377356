// Wake-ups between the nodes of a cluster (docs/store.md "Queue and nodes").
// On PostgreSQL a Notifier holds a connection of its own that LISTENs on the
// given channels; the store's writes send pg_notify inside their transactions,
// so a notification means the write committed. On SQLite there is no such
// thing: wait() sleeps the timeout and callers poll the store.
//
// Channels: airlock_jobs (job id: created or put back in the queue),
// airlock_finished (job id: finish_job), airlock_cancel (job id: request_cancel).
//
// Not thread-safe: one thread waits on one Notifier.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace airlock::store {

inline constexpr const char* kChannelJobs = "airlock_jobs";
inline constexpr const char* kChannelFinished = "airlock_finished";
inline constexpr const char* kChannelCancel = "airlock_cancel";

struct Notification {
  std::string channel, payload;
};

class Notifier {
 public:
  // database_url "" (SQLite): no connection; wait() just sleeps the timeout.
  // Channels are the constants above (names only of [a-z_]: they are spliced
  // into LISTEN, which takes no parameter).
  static Result<std::unique_ptr<Notifier>> open(const std::string& database_url,
                                                const std::vector<std::string>& channels);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // The next notification, or nullopt once `timeout` passed without one. A
  // lost connection is reconnected (and LISTENed again) on the next call; the
  // error is returned once so the caller can log it and poll meanwhile.
  Result<std::optional<Notification>> wait(std::chrono::milliseconds timeout);

  struct Impl;

 private:
  explicit Notifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace airlock::store
