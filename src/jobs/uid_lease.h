// Each running job gets host uids of its own: inside uid 0 -> base, the job's
// user -> base + 1. Leases are flock()ed files under /run/airlock/uids, one per
// slot, so concurrent airlock processes (any state directory) never share a
// uid, and a dead airlock's slots free themselves.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::jobs {

class UidLease {
 public:
  static constexpr uid_t kFirstBase = 3000000;
  static constexpr unsigned kSlots = 4096;

  // Takes a free slot (the search starts at a random one).
  static Result<UidLease> acquire(const std::string& dir = "/run/airlock/uids");
  uid_t base() const { return kFirstBase + 2 * slot_; }
  unsigned slot() const { return slot_; }
  int lock_fd() const { return lock_.get(); }
  // A lease taken by another airlock process and handed over with its lock fd
  // (the flock belongs to the open file, so it stays held).
  static UidLease adopt(unsigned slot, UniqueFd lock) { return UidLease(slot, std::move(lock)); }

 private:
  UidLease(unsigned slot, UniqueFd lock) : slot_(slot), lock_(std::move(lock)) {}
  unsigned slot_;
  UniqueFd lock_;  // held for the life of the job
};

}  // namespace airlock::jobs
