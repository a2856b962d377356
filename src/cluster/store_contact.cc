#include "cluster/store_contact.h"

namespace airlock::cluster {

void StoreContact::saw(bool ok, Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (!ok) since_.reset();
  else if (!since_) since_ = now;
}

bool StoreContact::unbroken_for(std::chrono::milliseconds lease, Clock::time_point now) const {
  std::lock_guard lock(mu_);
  return since_ && now - *since_ >= lease;
}

}  // namespace airlock::cluster
