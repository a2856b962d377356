// Spare sessions: with the sessions' preloaded interpreter, a few preloaded
// sessions are kept opened ahead (sandbox prepared, keeper and kernel ready),
// so that opening a session is fitting one to its request (limits, sizes,
// inputs, workspace) instead of a clone of the whole interpreter and two
// forks. A spare belongs to no tenant and has run nothing; each is taken by
// exactly one session. Requests it cannot serve (another image, policy.env,
// network) open their own sandbox as before.
#include "sessions/session_service.h"

#include <chrono>
#include <cstdio>

namespace airlock::service {

namespace {
constexpr size_t kSpareSessions = 2;  // each costs what an idle preloaded session costs (docs/performance.md)
}

jobs::Session::Options SessionService::spare_options() const {
  jobs::Session::Options o;
  o.state_dir = config_.state_dir;
  o.cgroups = cgroups_.get();
  o.zygote = zygote_.get();
  o.image = "host";
  return o;
}

Result<std::unique_ptr<jobs::Session>> SessionService::open_engine(const jobs::Session::Options& options) {
  std::unique_ptr<jobs::Session> spare;
  if (zygote_ && jobs::Session::spare_can_serve(spare_options(), options)) {
    std::lock_guard lock(spares_mu_);
    if (!spares_.empty()) {
      spare = std::move(spares_.front());
      spares_.pop_front();
    }
  }
  spares_wake_.notify_all();
  if (!spare || !spare->alive()) return jobs::Session::open(options);
  if (auto st = spare->adopt(spare_options(), options); !st) return std::unexpected(st.error());
  return spare;
}

void SessionService::spares_loop() {
  std::unique_lock lock(spares_mu_);
  while (!spares_stopping_) {
    if (spares_.size() >= std::min(kSpareSessions, config_.max_sessions)) {
      spares_wake_.wait(lock);
      continue;
    }
    lock.unlock();
    auto made = jobs::Session::open(spare_options());
    lock.lock();
    if (made) {
      spares_.push_back(std::move(*made));
    } else {
      std::fprintf(stderr, "airlock sessions: opening a spare session failed: %s\n", made.error().message().c_str());
      spares_wake_.wait_for(lock, std::chrono::seconds(1), [&] { return spares_stopping_; });
    }
  }
}

}  // namespace airlock::service
