#include "pool/warm_pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "base/check.h"
#include "pool/image_python.h"
#include "pool/refill_hold.h"

namespace airlock::jobs {
std::vector<std::string> zygote_environment(const ImageSource& image) {
  JobPolicy defaults;
  std::vector<std::string> env = job_environment(defaults);
  apply_image_env(image, {}, env);
  // numpy's OpenBLAS and pandas' numexpr start worker threads at import
  // otherwise (seen: 3 threads after `import pandas` on Debian 12).
  for (const char* v : {"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "NUMEXPR_NUM_THREADS=1"}) env.push_back(v);
  return env;
}

Result<std::unique_ptr<WarmPool>> WarmPool::start(PoolConfig config, sandbox::CgroupBackend& cgroups) {
  auto pool = std::unique_ptr<WarmPool>(new WarmPool(std::move(config), cgroups));
  WarmPool* p = pool.get();
  std::vector<std::string> keys;
  for (const auto& c : p->config_.classes) {
    std::string key = sandbox_class_key(c.policy, image_class(c.image), c.preloaded);
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      return fail("the warm pool names one class twice: " + key);
    keys.push_back(key);
    if (c.preloaded) {
      p->preloaded_classes_.emplace_back(c, key);
      p->images_[image_class(c.image)] = c.image;
      continue;
    }
    auto stock = std::make_unique<Stock>();
    stock->config = c;
    stock->key = key;
    p->stocks_.push_back(std::move(stock));
  }
  p->interpreters_ = std::make_unique<TenantInterpreters>(
      p->config_.interpreters,
      [p](const std::string& image, Preload kind) { return p->start_zygote(p->images_.at(image), kind); });
  if (p->config_.preload_at_start) {
    // The state directory's own jobs (tenant ""): their interpreters now, as
    // a pool always started them (a failure stops the pool), and full stocks.
    (void)p->interpreters_->admit("");
    std::lock_guard lock(p->mu_);
    for (const auto& [c, key] : p->preloaded_classes_) {
      if (c.size == 0) continue;
      if (auto st = p->interpreters_->start_ahead("", image_class(c.image), *c.preloaded); !st)
        return std::unexpected(st.error());
      p->add_tenant_stock_locked(c, key, "");
    }
  }
  for (auto& stock : p->stocks_)
    if (stock->threads.empty()) p->start_refills(stock.get());
  p->janitor_ = std::thread([p] { p->janitor_loop(); });
  return pool;
}

void WarmPool::start_refills(Stock* stock) {
  size_t workers = std::max<size_t>(1, config_.refill_workers);
  for (size_t i = 0; i < std::min(workers, stock->config.size); ++i)
    stock->threads.emplace_back([this, stock] { refill_loop(stock); });
}

WarmPool::Stock* WarmPool::add_tenant_stock_locked(const PoolClass& c, const std::string& key,
                                                   const std::string& tenant) {
  auto stock = std::make_unique<Stock>();
  stock->config = c;
  stock->key = key;
  stock->tenant = tenant;
  Stock* raw = stock.get();
  stocks_.push_back(std::move(stock));
  return raw;
}

// Stocks of evicted tenants: their refill threads are joined off the jobs'
// path (a refill may be in the middle of a clone), then their unused
// sandboxes destroyed, which lets the retired interpreter exit.
void WarmPool::janitor_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !dropped_.empty(); });
    if (dropped_.empty()) return;
    auto gone = std::move(dropped_);
    dropped_.clear();
    lock.unlock();
    for (auto& stock : gone)
      for (auto& t : stock->threads) t.join();
    gone.clear();
    lock.lock();
  }
}

std::vector<std::string> WarmPool::modules_of(Preload preload) const {
  return preload == Preload::kData ? config_.preload_modules : stdlib_preload_modules();
}

// A stored image's interpreter runs the image's python3 (start_image_zygote).
Result<std::unique_ptr<sandbox::Zygote>> WarmPool::start_zygote(const ImageSource& image, Preload preload) {
  sandbox::ZygoteOptions options;
  options.modules = modules_of(preload);
  options.env = zygote_environment(image);
  auto zygote = image.is_host() ? sandbox::Zygote::start(config_.airlock_binary, options)
                                : start_image_zygote(config_.airlock_binary, options, image,
                                                     config_.state_dir + "/cache");
  if (!zygote && image.is_host())
    return fail_with("the preloaded interpreter of image host: " + zygote.error().what, zygote.error().err);
  return zygote;  // a stored image's error names the image and why
}

WarmPool::~WarmPool() {
  std::vector<std::thread*> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& s : stocks_)
      for (auto& t : s->threads) threads.push_back(&t);
  }
  changed_.notify_all();
  for (auto* t : threads) t->join();
  if (janitor_.joinable()) janitor_.join();
  stocks_.clear();  // every unused sandbox: init killed, cgroup, mounts, directory removed
  dropped_.clear();
  interpreters_.reset();
}

// Threads of their own per class: a slow preloaded refill (a clone of the
// whole interpreter) never holds up the warm class, and the other way round;
// several per class, so one waiting in the kernel (a cgroup, a namespace)
// does not stop the others.
void WarmPool::refill_loop(Stock* stock) {
  // Behind jobs on a busy machine (per thread on Linux; the inits cloned here
  // inherit it until a job takes one).
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kRefillNice);
  PoolClass c = stock->config;
  // No cpu time limit until a job takes the sandbox: fit_to_policy() then
  // lowers init's RLIMIT_CPU to the job's. Raising it instead (a job allowed
  // more than the pool's default) needs CAP_SYS_RESOURCE, which a container's
  // root often lacks (Docker's default set has none): such jobs failed.
  c.policy.cpu_time_ms = 0;
  PrepareContext context{config_.state_dir, &cgroups_, nullptr};
  if (c.preloaded) context.preload = *c.preloaded;
  context.image = c.image;
  context.prefetch_image = config_.prefetch_image;
  const size_t cpus = std::max(1u, std::thread::hardware_concurrency());
  std::optional<std::chrono::steady_clock::time_point> short_since;  // when this thread found work
  std::unique_lock lock(mu_);
  while (!stopping_ && !stock->dropped) {
    if (stock->ready.size() + stock->in_flight >= c.size) {
      short_since.reset();
      changed_.wait(lock);
      continue;
    }
    auto now = std::chrono::steady_clock::now();
    if (!short_since) short_since = now;
    RefillView view{stock->ready.size(), running_,
                    std::chrono::duration_cast<std::chrono::milliseconds>(now - *short_since), cpus};
    if (hold_back_refill(view, config_.refill_hold_max)) {
      changed_.wait_until(lock, *short_since + config_.refill_hold_max);
      continue;
    }
    short_since.reset();
    ++stock->in_flight;
    lock.unlock();
    // A preloaded sandbox forks from its tenant's interpreter: the one it has,
    // or a fresh one when that one has made its share (or none runs yet).
    std::shared_ptr<sandbox::Zygote> zygote;
    Result<PreparedSandbox> made = [&]() -> Result<PreparedSandbox> {
      if (c.preloaded) {
        auto z = interpreters_->for_next_sandbox(stock->tenant, image_class(c.image), *c.preloaded);
        if (!z) return std::unexpected(z.error());
        zygote = std::move(*z);
      }
      context.zygote = zygote.get();
      return prepare_sandbox(c.policy, context);
    }();
    lock.lock();
    --stock->in_flight;
    if (made) {
      stock->ready.push_back(std::move(*made));
      ++stock->made;
      changed_.notify_all();
    } else {
      ++stock->failed;
      stock->last_error = made.error().message();
      std::fprintf(stderr, "airlock pool: preparing a sandbox (%s) failed: %s\n", stock->key.c_str(),
                   stock->last_error.c_str());
      changed_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
    }
  }
}

// The preloaded stocks of tenants whose interpreters were retired for room:
// their threads end and the janitor destroys them.
void WarmPool::drop_stocks_locked(const std::vector<std::string>& tenants) {
  for (const auto& gone : tenants)
    for (auto it = stocks_.begin(); it != stocks_.end();) {
      if ((*it)->config.preloaded && (*it)->tenant == gone) {
        (*it)->dropped = true;
        dropped_.push_back(std::move(*it));
        it = stocks_.erase(it);
      } else {
        ++it;
      }
    }
  if (!dropped_.empty()) changed_.notify_all();  // the janitor, and the dropped stocks' threads
}

Result<PreparedSandbox> WarmPool::take(const std::string& key, const std::string& tenant) {
  std::lock_guard lock(mu_);
  if (stopping_) return fail(ErrorKind::kUnavailable, "the warm pool is stopping");
  Stock* found = nullptr;
  for (auto& s : stocks_)
    if (s->key == key && (!s->config.preloaded || s->tenant == tenant)) found = s.get();
  if (!found) {
    // A preloaded class this tenant has not used yet (or used before it
    // was evicted): its own stock, forked from its own interpreter, which
    // the stock's first refill starts. This job starts without it.
    for (const auto& [c, class_key] : preloaded_classes_) {
      if (class_key != key || c.size == 0) continue;
      drop_stocks_locked(interpreters_->admit(tenant));
      start_refills(add_tenant_stock_locked(c, key, tenant));
      changed_.notify_all();
      return fail(ErrorKind::kUnavailable,
                  "the tenant's preloaded interpreter is starting (its first preloaded job): " + key);
    }
    return fail(ErrorKind::kNotFound, "the warm pool keeps no class " + key);
  }
  Stock* s = found;
  if (s->config.size == 0) return fail(ErrorKind::kNotFound, "the warm pool keeps no class " + key);
  // Now the most recently used tenant; whoever that evicts loses its stocks.
  if (s->config.preloaded) drop_stocks_locked(interpreters_->admit(tenant));
  if (s->ready.empty()) {
    ++s->missed;
    return fail(ErrorKind::kUnavailable, "the warm pool's class is empty right now (" + key + ")");
  }
  PreparedSandbox sb = std::move(s->ready.front());
  s->ready.pop_front();
  ++s->taken;
  ++running_;
  changed_.notify_all();
  return sb;
}

void WarmPool::taken_sandbox_ended() {
  {
    std::lock_guard lock(mu_);
    AIRLOCK_CHECK(running_ > 0);
    --running_;
  }
  changed_.notify_all();
}

nlohmann::json WarmPool::stats() const {
  std::lock_guard lock(mu_);
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& s : stocks_) {
    classes.push_back(
        {{"class", s->key},
         {"tenant", s->tenant},
         {"preloaded", s->config.preloaded.has_value()},
         {"interpreter", s->config.preloaded ? preload_name(*s->config.preloaded) : ""},
         {"size", s->config.size},
         {"ready", s->ready.size()},
         {"made", s->made},
         {"taken", s->taken},
         {"missed", s->missed},
         {"failed", s->failed},
         {"last_error", s->last_error}});
  }
  nlohmann::json out = {{"classes", classes}};
  // Per tenant, image and kind, with its memory; retired ones until they exit.
  nlohmann::json interpreters = interpreters_->stats();
  if (!interpreters.empty()) out["preloaded_interpreters"] = std::move(interpreters);
  return out;
}

bool WarmPool::wait_full(int timeout_ms) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    for (const auto& s : stocks_)
      if (s->ready.size() < s->config.size) return false;
    return true;
  });
}

}  // namespace airlock::jobs
