#include "pool/tenant_interpreters.h"

#include <algorithm>
#include <optional>

namespace airlock::jobs {

std::vector<std::string> TenantLru::touch(const std::string& tenant) {
  auto it = std::find(order_.begin(), order_.end(), tenant);
  if (it != order_.end()) order_.erase(it);
  order_.push_front(tenant);
  std::vector<std::string> out;
  while (order_.size() > cap_) {
    out.push_back(order_.back());
    order_.pop_back();
  }
  return out;
}

bool TenantLru::holds(const std::string& tenant) const {
  return std::find(order_.begin(), order_.end(), tenant) != order_.end();
}

TenantInterpreters::TenantInterpreters(InterpreterLimits limits, Start start)
    : limits_(limits), start_(std::move(start)), lru_(limits.max_tenants) {
  for (int i = 0; i < 2; ++i) starters_.emplace_back([this] { starter_loop(); });
}

TenantInterpreters::~TenantInterpreters() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& t : starters_) t.join();
  slots_.clear();  // the last owners, unless a launch is under way (its caller is stopped first)
  retired_.clear();
}

void TenantInterpreters::starter_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !starts_.empty(); });
    if (starts_.empty()) return;  // stopping, nothing asked
    auto task = std::move(starts_.front());
    starts_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

// With mu_ held through `lock`, released while the starter thread works.
Result<std::unique_ptr<sandbox::Zygote>> TenantInterpreters::start_on_starter(
    std::unique_lock<std::mutex>& lock, const std::string& image, Preload kind) {
  std::optional<Result<std::unique_ptr<sandbox::Zygote>>> result;
  starts_.push_back([&] {
    auto made = start_(image, kind);
    std::lock_guard done(mu_);
    result.emplace(std::move(made));
    changed_.notify_all();
  });
  changed_.notify_all();
  changed_.wait(lock, [&] { return result.has_value(); });
  return std::move(*result);
}

std::vector<std::string> TenantInterpreters::admit(const std::string& tenant) {
  std::lock_guard lock(mu_);
  reap_locked();
  std::vector<std::string> evicted = lru_.touch(tenant);
  for (const auto& gone : evicted)
    for (auto it = slots_.begin(); it != slots_.end();) {
      if (std::get<0>(it->first) == gone && !it->second.starting) {
        if (it->second.zygote) retire_locked(std::move(it->second.zygote));
        if (it->second.next) retire_locked(std::move(it->second.next));
        it = slots_.erase(it);
      } else {
        ++it;  // a start under way: its caller finds the tenant gone and retires what it made
      }
    }
  return evicted;
}

void TenantInterpreters::retire_locked(std::shared_ptr<sandbox::Zygote> z) {
  z->retire();
  retired_.push_back(std::move(z));
}

void TenantInterpreters::reap_locked() {
  std::erase_if(retired_, [](const std::shared_ptr<sandbox::Zygote>& z) { return z->exited(); });
}

Status TenantInterpreters::start_ahead(const std::string& tenant, const std::string& image,
                                       Preload kind) {
  auto z = acquire(tenant, image, kind, /*count=*/false);
  if (!z) return std::unexpected(z.error());
  return {};
}

Result<std::shared_ptr<sandbox::Zygote>> TenantInterpreters::acquire(const std::string& tenant,
                                                                     const std::string& image,
                                                                     Preload kind, bool count) {
  std::unique_lock lock(mu_);
  const Key key{tenant, image, kind};
  for (;;) {
    if (stopping_) return fail(ErrorKind::kUnavailable, "the preloaded interpreters are stopping");
    if (!lru_.holds(tenant))
      return fail(ErrorKind::kUnavailable,
                  "the tenant's preloaded interpreters were retired to make room");
    Slot& slot = slots_[key];
    if (slot.starting) {
      changed_.wait(lock);
      continue;
    }
    if (slot.zygote && (!count || !needs_renewal(slot.made, limits_.renew_after))) {
      if (count) ++slot.made;
      if (count && starts_ahead(slot.made, limits_.renew_after) && !slot.next &&
          !slot.next_starting)
        start_next_locked(key);
      return slot.zygote;
    }
    if (slot.zygote && slot.next) {
      // Its successor started ahead: it takes over at once.
      retire_locked(std::move(slot.zygote));
      slot.zygote = std::move(slot.next);
      slot.made = 1;
      ++slot.generation;
      return slot.zygote;
    }
    if (slot.zygote && slot.next_starting) {
      changed_.wait(lock);  // the successor is on its way
      continue;
    }
    // None yet, or this one has made its share: a fresh process, so a fresh
    // layout, AT_RANDOM, pointer guard and hash seed.
    slot.starting = true;
    reap_locked();
    auto started = start_on_starter(lock, image, kind);  // releases mu_ while the starter works
    Slot& now = slots_[key];
    now.starting = false;
    changed_.notify_all();
    if (stopping_ || !lru_.holds(tenant)) {
      // Evicted while it started (admit() left this slot to us): neither
      // the fresh one nor the one it was to replace takes launches again.
      if (started) retire_locked(std::shared_ptr<sandbox::Zygote>(std::move(*started)));
      if (now.zygote) retire_locked(std::move(now.zygote));
      if (now.next) retire_locked(std::move(now.next));
      slots_.erase(key);
      continue;
    }
    if (!started) return std::unexpected(started.error());
    std::shared_ptr<sandbox::Zygote> fresh = std::move(*started);
    if (now.zygote) retire_locked(std::move(now.zygote));
    now.zygote = fresh;
    now.made = count ? 1 : 0;
    ++now.generation;
    return fresh;
  }
}

// The successor of the slot's interpreter, started on a starter thread while
// the current one makes its last sandboxes, so the renewal costs no job a
// wait. An eviction meanwhile retires it as it arrives.
void TenantInterpreters::start_next_locked(const Key& key) {
  slots_[key].next_starting = true;
  starts_.push_back([this, key] {
    const auto& [tenant, image, kind] = key;
    auto made = start_(image, kind);
    std::lock_guard lock(mu_);
    auto it = slots_.find(key);
    bool wanted = it != slots_.end() && !stopping_ && lru_.holds(tenant);
    if (it != slots_.end()) it->second.next_starting = false;
    if (made && wanted)
      it->second.next = std::shared_ptr<sandbox::Zygote>(std::move(*made));
    else if (made)
      retire_locked(std::shared_ptr<sandbox::Zygote>(std::move(*made)));
    // A failed start: the renewal starts one itself, as without a successor.
    changed_.notify_all();
  });
  changed_.notify_all();
}

nlohmann::json TenantInterpreters::stats() {
  std::lock_guard lock(mu_);
  reap_locked();
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, slot] : slots_) {
    if (!slot.zygote) continue;
    const auto& [tenant, image, kind] = key;
    out.push_back({{"tenant", tenant},
                   {"image", image},
                   {"kind", preload_name(kind)},
                   {"pid", slot.zygote->pid()},
                   {"made", slot.made},
                   {"generation", slot.generation},
                   {"pss_bytes", slot.zygote->pss_bytes()},
                   {"retired", false}});
    if (slot.next)
      out.push_back({{"tenant", tenant},
                     {"image", image},
                     {"kind", preload_name(kind)},
                     {"pid", slot.next->pid()},
                     {"pss_bytes", slot.next->pss_bytes()},
                     {"ahead", true},
                     {"retired", false}});
  }
  for (const auto& z : retired_)
    out.push_back({{"pid", z->pid()}, {"pss_bytes", z->pss_bytes()}, {"retired", true}});
  return out;
}

size_t TenantInterpreters::live_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [key, slot] : slots_) n += slot.zygote != nullptr;
  return n;
}

}  // namespace airlock::jobs
