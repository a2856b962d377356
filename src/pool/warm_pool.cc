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
namespace {

// One preloaded interpreter per image and kind.
std::pair<std::string, Preload> zygote_key(const ImageSource& image, Preload preload) {
  return {image_class(image), preload};
}

}  // namespace

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
  for (const auto& c : pool->config_.classes) {
    auto stock = std::make_unique<Stock>();
    stock->config = c;
    stock->key = sandbox_class_key(c.policy, image_class(c.image), c.preloaded);
    for (const auto& other : pool->stocks_)
      if (other->key == stock->key) return fail("the warm pool names one class twice: " + stock->key);
    if (c.preloaded && c.size > 0 && !pool->zygotes_.contains(zygote_key(c.image, *c.preloaded)))
      if (auto st = pool->start_zygote(c.image, *c.preloaded); !st)
        return std::unexpected(st.error());
    pool->stocks_.push_back(std::move(stock));
  }
  size_t workers = std::max<size_t>(1, pool->config_.refill_workers);
  for (auto& stock : pool->stocks_)
    for (size_t i = 0; i < std::min(workers, stock->config.size); ++i)
      pool->refill_.emplace_back([p = pool.get(), st = stock.get()] { p->refill_loop(st); });
  return pool;
}

std::vector<std::string> WarmPool::modules_of(Preload preload) const {
  return preload == Preload::kData ? config_.preload_modules : stdlib_preload_modules();
}

// A stored image's interpreter runs the image's python3 (start_image_zygote).
Status WarmPool::start_zygote(const ImageSource& image, Preload preload) {
  sandbox::ZygoteOptions options;
  options.modules = modules_of(preload);
  options.env = zygote_environment(image);
  auto zygote = image.is_host() ? sandbox::Zygote::start(config_.airlock_binary, options)
                                : start_image_zygote(config_.airlock_binary, options, image,
                                                     config_.state_dir + "/cache");
  if (!zygote && image.is_host())
    return fail_with("the preloaded interpreter of image host: " + zygote.error().what, zygote.error().err);
  if (!zygote) return std::unexpected(zygote.error());  // it names the image and why
  zygotes_[zygote_key(image, preload)] = std::move(*zygote);
  return {};
}

WarmPool::~WarmPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& t : refill_) t.join();
  stocks_.clear();  // every unused sandbox: init killed, cgroup, mounts, directory removed
  zygotes_.clear();
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
  PrepareContext context{
      config_.state_dir, &cgroups_,
      c.preloaded ? zygotes_.at(zygote_key(c.image, *c.preloaded)).get() : nullptr};
  if (c.preloaded) context.preload = *c.preloaded;
  context.image = c.image;
  context.prefetch_image = config_.prefetch_image;
  const size_t cpus = std::max(1u, std::thread::hardware_concurrency());
  std::optional<std::chrono::steady_clock::time_point> short_since;  // when this thread found work
  std::unique_lock lock(mu_);
  while (!stopping_) {
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
    if (s->config.size == 0) break;  // configured with none: as if not kept
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
  return fail(ErrorKind::kNotFound, "the warm pool keeps no class " + key);
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
  nlohmann::json interpreters = nlohmann::json::array();
  for (const auto& [key, z] : zygotes_) {
    const auto& [image, preload] = key;
    nlohmann::json one = {{"image", image},          {"kind", preload_name(preload)},
                          {"pid", z->pid()},         {"python", z->python_version()},
                          {"modules", modules_of(preload)}};
    if (image == "host" && preload == Preload::kData) out["preloaded_interpreter"] = one;  // as before there were images
    interpreters.push_back(std::move(one));
  }
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
