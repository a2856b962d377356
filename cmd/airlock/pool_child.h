// `airlock serve`'s warm pool: an `airlock pool` child process on the
// service's state directory, stopped with the service (and killed if the
// service dies: it exits with its parent).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/result.h"

class PoolChild {
 public:
  // Starts the pool and waits (up to 60 s: the preloaded interpreter imports
  // its modules first) until every class is full.
  static airlock::Result<PoolChild> start(const std::string& airlock_binary, const std::string& state_dir,
                                          size_t warm, size_t preloaded,
                                          const std::vector<std::string>& pool_images = {},
                                          const std::string& image_dir = "",
                                          const std::vector<std::string>& extra_args = {});
  PoolChild(PoolChild&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }
  PoolChild& operator=(PoolChild&&) = delete;
  ~PoolChild() { (void)stop(); }

  pid_t pid() const { return pid_; }
  // SIGTERM (the pool removes its unused sandboxes) and wait; the exit status.
  int stop();

 private:
  explicit PoolChild(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};
