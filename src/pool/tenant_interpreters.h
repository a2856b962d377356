// Preloaded interpreters of their own per tenant. A preloaded sandbox is a
// fork of its interpreter, so it inherits that process's address-space
// layout (where libc, the heap and every Python object lie), its AT_RANDOM
// bytes, glibc's pointer guard and Python's hash seed. One interpreter shared
// by every tenant would tell each tenant the layout of every other's jobs;
// so each tenant's preloaded jobs and sessions fork from interpreters started
// for that tenant alone (on its first preloaded job or session), and within
// a tenant an interpreter makes at most `renew_after` sandboxes before a
// freshly started one takes its place. At most `max_tenants` tenants hold
// interpreters at once: the least recently used one's are retired to make
// room (docs/security.md, "Preloaded interpreters per tenant").
//
// A retired interpreter takes no more launches; its process lives on until
// the sandboxes it made have ended (running jobs and sessions finish on it),
// then exits (sandbox/zygote.h: Zygote::retire).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/result.h"
#include "pool/preload_choice.h"
#include "sandbox/zygote.h"

namespace airlock::jobs {

struct InterpreterLimits {
  size_t max_tenants = 8;      // tenants holding preloaded interpreters at once (at least 1)
  uint64_t renew_after = 100;  // sandboxes one interpreter makes; 0: never renewed
};

// Which tenants hold interpreters, the most recently used first. Pure.
class TenantLru {
 public:
  explicit TenantLru(size_t cap) : cap_(cap < 1 ? 1 : cap) {}
  // `tenant` becomes the most recent; returns the tenants that lose their
  // place (the least recent beyond the cap), oldest first.
  std::vector<std::string> touch(const std::string& tenant);
  bool holds(const std::string& tenant) const;
  const std::deque<std::string>& order() const { return order_; }  // most recent first

 private:
  size_t cap_;
  std::deque<std::string> order_;
};

// Whether an interpreter that has made `made` sandboxes must give way to a
// fresh one before it makes another. Pure.
inline bool needs_renewal(uint64_t made, uint64_t renew_after) {
  return renew_after > 0 && made >= renew_after;
}

// Whether the successor of an interpreter that has made `made` sandboxes
// starts now, ahead of its renewal: a tenth of renew_after before it (at
// least one sandbox before), so that it is ready when the renewal comes. Pure.
inline bool starts_ahead(uint64_t made, uint64_t renew_after) {
  if (renew_after < 2)
    return false;  // never renewed, or a fresh one per sandbox: nothing to overlap
  uint64_t lead = renew_after / 10 > 0 ? renew_after / 10 : 1;
  return made + lead >= renew_after;
}

class TenantInterpreters {
 public:
  // Starts an interpreter of `kind` for `image` (an image_class(): "host" or
  // a digest). Run on a starter thread of this object, which lives as long
  // as it: an interpreter's parent-death signal follows the thread that
  // started it.
  using Start = std::function<Result<std::unique_ptr<sandbox::Zygote>>(const std::string& image,
                                                                       Preload kind)>;

  TenantInterpreters(InterpreterLimits limits, Start start);
  ~TenantInterpreters();  // every interpreter killed, and with it what it made

  // Makes `tenant` the most recently used; returns the tenants whose
  // interpreters were retired to make room (the caller drops what it keeps
  // for them, such as their prepared sandboxes).
  std::vector<std::string> admit(const std::string& tenant);

  // The interpreter `tenant`'s next sandbox on `image` forks from, counted
  // as one it made. Starts one (seconds) when the tenant has none of this
  // image and kind yet, or when the current one has made renew_after. An
  // error when the start failed, or kUnavailable when the tenant is not
  // admitted (it was evicted meanwhile).
  Result<std::shared_ptr<sandbox::Zygote>> for_next_sandbox(const std::string& tenant,
                                                            const std::string& image,
                                                            Preload kind) {
    return acquire(tenant, image, kind, /*count=*/true);
  }

  // Starts the interpreter for_next_sandbox would use unless one runs, and
  // counts no sandbox (the pool's own interpreters, at its start).
  Status start_ahead(const std::string& tenant, const std::string& image, Preload kind);

  // Every interpreter: tenant, image, kind, pid, made, pss_bytes, retired;
  // a successor started ahead has "ahead": true.
  nlohmann::json stats();
  size_t live_count() const;  // interpreters taking launches now

 private:
  using Key = std::tuple<std::string, std::string, Preload>;  // tenant, image, kind
  struct Slot {
    std::shared_ptr<sandbox::Zygote> zygote;
    std::shared_ptr<sandbox::Zygote> next;  // its successor, started ahead (starts_ahead)
    bool next_starting = false;
    uint64_t made = 0;
    uint64_t generation = 0;  // how many have served this key before
    bool starting = false;
  };
  Result<std::unique_ptr<sandbox::Zygote>> start_on_starter(std::unique_lock<std::mutex>& lock,
                                                            const std::string& image, Preload kind);
  Result<std::shared_ptr<sandbox::Zygote>> acquire(const std::string& tenant,
                                                   const std::string& image, Preload kind,
                                                   bool count);
  void retire_locked(std::shared_ptr<sandbox::Zygote> z);
  void start_next_locked(const Key& key);
  void reap_locked();
  void starter_loop();

  InterpreterLimits limits_;
  Start start_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  TenantLru lru_;
  std::map<Key, Slot> slots_;
  std::vector<std::shared_ptr<sandbox::Zygote>> retired_;  // until their processes exit
  std::deque<std::function<void()>> starts_;               // for the starter thread
  bool stopping_ = false;
  // Two, so a tenant's standard-library interpreter (a fraction of a second)
  // does not wait behind its data stack's (seconds).
  std::vector<std::thread> starters_;
};

}  // namespace airlock::jobs
