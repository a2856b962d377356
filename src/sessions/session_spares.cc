// Spare sessions: with the sessions' preloaded interpreter, a few preloaded
// sessions are kept opened ahead (sandbox prepared, keeper and kernel ready),
// so that opening a session is fitting one to its request (limits, sizes,
// inputs, workspace) instead of a clone of the whole interpreter and two
// forks. A spare has run nothing; it is a fork of one tenant's interpreter
// (the tenant that last opened a session), so it serves only that tenant's
// sessions, and each is taken by exactly one. Requests it cannot serve (another image, policy.env,
// network) open their own sandbox as before.
#include "sessions/session_service.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace airlock::service {

namespace {
constexpr size_t kSpareSessions = 2;  // each costs what an idle preloaded session costs (docs/performance.md)
}

jobs::Session::Options SessionService::spare_options(const std::string& tenant) {
  jobs::Session::Options o;
  o.state_dir = config_.state_dir;
  o.cgroups = cgroups_.get();
  o.image = "host";
  o.tenant = tenant;
  o.tenant_zygote = [this, tenant](const jobs::ImageSource& i) { return tenant_zygote(tenant, i); };
  return o;
}

void SessionService::drop_spares_of(const std::vector<std::string>& tenants) {
  std::deque<Spare> gone;  // closed outside the lock
  {
    std::lock_guard lock(spares_mu_);
    for (auto it = spares_.begin(); it != spares_.end();) {
      if (std::find(tenants.begin(), tenants.end(), it->tenant) != tenants.end()) {
        gone.push_back(std::move(*it));
        it = spares_.erase(it);
      } else {
        ++it;
      }
    }
  }
  spares_wake_.notify_all();
}

Result<std::unique_ptr<jobs::Session>> SessionService::open_engine(const jobs::Session::Options& options) {
  std::unique_ptr<jobs::Session> spare;
  std::deque<Spare> others;  // another tenant's spares: closed outside the lock
  if (interpreters_) {
    std::lock_guard lock(spares_mu_);
    if (jobs::Session::spare_can_serve(spare_options(options.tenant), options)) {
      for (auto it = spares_.begin(); it != spares_.end(); ++it) {
        if (it->tenant != options.tenant) continue;
        spare = std::move(it->session);
        spares_.erase(it);
        break;
      }
    }
    // The next spares are this tenant's.
    if (spare_tenant_ != options.tenant) {
      spare_tenant_ = options.tenant;
      for (auto it = spares_.begin(); it != spares_.end();) {
        if (it->tenant != options.tenant) {
          others.push_back(std::move(*it));
          it = spares_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  spares_wake_.notify_all();
  if (!spare || !spare->alive()) return jobs::Session::open(options);
  if (auto st = spare->adopt(spare_options(options.tenant), options); !st) return std::unexpected(st.error());
  return spare;
}

void SessionService::spares_loop() {
  std::unique_lock lock(spares_mu_);
  while (!spares_stopping_) {
    if (!spare_tenant_ || spares_.size() >= std::min(kSpareSessions, config_.max_sessions)) {
      spares_wake_.wait(lock);
      continue;
    }
    std::string tenant = *spare_tenant_;
    lock.unlock();
    auto made = jobs::Session::open(spare_options(tenant));
    lock.lock();
    if (made && spare_tenant_ == tenant) {
      spares_.push_back({tenant, std::move(*made)});
    } else if (made) {
      lock.unlock();
      made->reset();  // another tenant's turn came meanwhile
      lock.lock();
    } else {
      std::fprintf(stderr, "airlock sessions: opening a spare session failed: %s\n", made.error().message().c_str());
      spares_wake_.wait_for(lock, std::chrono::seconds(1), [&] { return spares_stopping_; });
    }
  }
}

}  // namespace airlock::service
