// The warm pool's socket: `airlock run` processes connect, name the class
// they need and receive a prepared sandbox (handover.h) or "none" with the
// reason; "stats" answers WarmPool::stats() as JSON. The socket is root-only
// (0600) in the state directory.
#pragma once

#include <sys/types.h>

#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "pool/warm_pool.h"

namespace airlock::jobs {

class PoolServer {
 public:
  // Binds `path` (replacing a stale socket; refusing when a live pool answers
  // there) and serves from a thread of its own.
  static Result<std::unique_ptr<PoolServer>> start(WarmPool& pool, const std::string& path);
  ~PoolServer();  // stops the thread and removes the socket file

 private:
  PoolServer(WarmPool& pool, std::string path, UniqueFd listen, UniqueFd stop)
      : pool_(pool), path_(std::move(path)), listen_(std::move(listen)), stop_(std::move(stop)) {}
  void serve();
  void answer(UniqueFd conn);

  WarmPool& pool_;
  std::string path_;
  UniqueFd listen_, stop_;
  std::thread thread_;
  ino_t inode_ = 0;  // of the socket file we bound, so we never remove another pool's
  std::vector<UniqueFd> handed_over_;  // pidfds of inits we must reap (serve thread only)
  // Connections of runners holding a sandbox taken here (serve thread only):
  // each one's close ends a refill hold (WarmPool::taken_sandbox_ended).
  std::vector<UniqueFd> runners_;
};

}  // namespace airlock::jobs
