#include "pool/warm_pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace airlock::jobs {

std::vector<std::string> zygote_environment() {
  JobPolicy defaults;
  std::vector<std::string> env = job_environment(defaults);
  // numpy's OpenBLAS and pandas' numexpr start worker threads at import
  // otherwise (seen: 3 threads after `import pandas` on Debian 12).
  for (const char* v : {"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "NUMEXPR_NUM_THREADS=1"}) env.push_back(v);
  return env;
}

Result<std::unique_ptr<WarmPool>> WarmPool::start(PoolConfig config, sandbox::CgroupBackend& cgroups) {
  auto pool = std::unique_ptr<WarmPool>(new WarmPool(std::move(config), cgroups));
  bool need_zygote = false;
  for (const auto& c : pool->config_.classes) {
    auto stock = std::make_unique<Stock>();
    stock->config = c;
    if (c.preloaded && !c.image.is_host() && c.size > 0)
      return fail("preloaded sandboxes run on host only (image " + c.image.info.name + ")");
    stock->key = sandbox_class_key(c.policy, image_class(c.image), c.preloaded);
    for (const auto& other : pool->stocks_)
      if (other->key == stock->key) return fail("the warm pool names one class twice: " + stock->key);
    need_zygote |= c.preloaded && c.size > 0;
    pool->stocks_.push_back(std::move(stock));
  }
  if (need_zygote) {
    sandbox::ZygoteOptions options;
    options.modules = pool->config_.preload_modules;
    options.env = zygote_environment();
    auto zygote = sandbox::Zygote::start(pool->config_.airlock_binary, options);
    if (!zygote) return std::unexpected(zygote.error());
    pool->zygote_ = std::move(*zygote);
  }
  size_t workers = std::max<size_t>(1, pool->config_.refill_workers);
  for (auto& stock : pool->stocks_)
    for (size_t i = 0; i < std::min(workers, stock->config.size); ++i)
      pool->refill_.emplace_back([p = pool.get(), st = stock.get()] { p->refill_loop(st); });
  return pool;
}

WarmPool::~WarmPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& t : refill_) t.join();
  stocks_.clear();  // every unused sandbox: init killed, cgroup, mounts, directory removed
  zygote_.reset();
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
  PrepareContext context{config_.state_dir, &cgroups_, c.preloaded ? zygote_.get() : nullptr};
  context.image = c.image;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (stock->ready.size() + stock->in_flight >= c.size) {
      changed_.wait(lock);
      continue;
    }
    ++stock->in_flight;
    lock.unlock();
    auto made = prepare_sandbox(c.policy, context);
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

Result<PreparedSandbox> WarmPool::take(const std::string& key) {
  std::lock_guard lock(mu_);
  for (auto& s : stocks_) {
    if (s->key != key) continue;
    if (s->ready.empty()) {
      ++s->missed;
      return fail(ErrorKind::kUnavailable, "the warm pool's class is empty right now (" + key + ")");
    }
    PreparedSandbox sb = std::move(s->ready.front());
    s->ready.pop_front();
    ++s->taken;
    changed_.notify_all();
    return sb;
  }
  return fail(ErrorKind::kNotFound, "the warm pool keeps no class " + key);
}

nlohmann::json WarmPool::stats() const {
  std::lock_guard lock(mu_);
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& s : stocks_) {
    classes.push_back({{"class", s->key},
                       {"preloaded", s->config.preloaded},
                       {"size", s->config.size},
                       {"ready", s->ready.size()},
                       {"made", s->made},
                       {"taken", s->taken},
                       {"missed", s->missed},
                       {"failed", s->failed},
                       {"last_error", s->last_error}});
  }
  nlohmann::json out = {{"classes", classes}};
  if (zygote_) out["preloaded_interpreter"] = {{"pid", zygote_->pid()}, {"python", zygote_->python_version()},
                                               {"modules", config_.preload_modules}};
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
