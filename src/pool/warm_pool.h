// The warm pool: sandboxes prepared ahead of demand, per class (image,
// interpreter, limits), each used by exactly one job and then destroyed by
// that job. Background threads keep every class at its configured size;
// when a class is empty, jobs fall back to a cold start. Preloaded classes
// are prepared by a preloaded interpreter (sandbox/zygote.h) of their image,
// one per image and kind (the data stack's or the standard library's:
// pool/preload_choice.h), which the pool starts and owns: a stored image's
// runs the image's own Python (pool/image_python.h says which images can).
// Each class has refill threads of its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/image_source.h"
#include "jobs/policy.h"
#include "pool/preload_choice.h"
#include "pool/prepared.h"
#include "sandbox/cgroup.h"
#include "sandbox/zygote.h"

namespace airlock::jobs {

struct PoolClass {
  std::optional<Preload> preloaded;  // forks of this preloaded interpreter; none: warm sandboxes
  size_t size = 0;    // sandboxes kept ready
  JobPolicy policy;   // its limits decide the class (sandbox_class_key)
  ImageSource image;  // host unless set; the caller holds the image (ImageUse) while the pool runs
};

struct PoolConfig {
  std::string state_dir;
  std::string airlock_binary = "/proc/self/exe";  // re-executed as `airlock zygote`
  std::vector<PoolClass> classes;
  // What the data stack's interpreter imports (the standard library's:
  // stdlib_preload_modules()).
  std::vector<std::string> preload_modules = {"numpy", "pandas", "matplotlib", "matplotlib.pyplot"};
  // Threads preparing sandboxes of each class at once. They run at
  // kRefillNice, so on a busy machine jobs get the CPU first (a job that finds
  // its class empty starts cold, which costs what it would without a pool).
  size_t refill_workers = 2;
  // Refills read the loader's files through each image sandbox's own mount
  // (PrepareContext::prefetch_image); off only to measure what it gives.
  bool prefetch_image = true;
  // How long a refill waits for the jobs taken from the pool to end while
  // their class still has a sandbox ready (refill_hold.h); 0: refill at once.
  std::chrono::milliseconds refill_hold_max{100};
};

// The refill threads' nice value; a taken sandbox's init is set back to 0
// (fit_to_policy), so the job itself runs at normal priority.
inline constexpr int kRefillNice = 10;

// The preloaded interpreter's environment: a job's base environment (what a
// cold `python3` would start with) and single-threaded OpenBLAS, since a fork
// keeps only the forking thread. On a stored image, the image's environment
// is applied as it is to a job's (apply_image_env).
std::vector<std::string> zygote_environment(const ImageSource& image = {});

class WarmPool {
 public:
  // Starts the preloaded interpreter (if a class needs it; seconds) and the
  // refill threads.
  static Result<std::unique_ptr<WarmPool>> start(PoolConfig config, sandbox::CgroupBackend& cgroups);
  ~WarmPool();  // stops refilling and destroys every unused sandbox

  // A ready sandbox of `class_key`; else kUnavailable (the class is empty
  // right now: a refill is coming) or kNotFound (no such class here).
  Result<PreparedSandbox> take(const std::string& class_key);
  // A sandbox take() returned has ended (its job is over, or it was never
  // handed over): refills held back for it may go on (refill_hold.h).
  void taken_sandbox_ended();

  // Counts per class, the interpreter, for logs and the service's metrics.
  nlohmann::json stats() const;
  // Blocks until every class is full (or `timeout_ms` passes); false on timeout.
  bool wait_full(int timeout_ms) const;

 private:
  struct Stock {
    PoolClass config;
    std::string key;
    std::deque<PreparedSandbox> ready;
    size_t in_flight = 0;  // being prepared by a refill thread right now
    uint64_t made = 0, taken = 0, failed = 0, missed = 0;
    std::string last_error;
  };
  WarmPool(PoolConfig config, sandbox::CgroupBackend& cgroups)
      : config_(std::move(config)), cgroups_(cgroups) {}
  void refill_loop(Stock* stock);
  Status start_zygote(const ImageSource& image, Preload preload);
  std::vector<std::string> modules_of(Preload preload) const;

  PoolConfig config_;
  sandbox::CgroupBackend& cgroups_;
  // By image_class() and kind (warm_pool.cc: zygote_key()).
  std::map<std::pair<std::string, Preload>, std::unique_ptr<sandbox::Zygote>> zygotes_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::vector<std::unique_ptr<Stock>> stocks_;
  bool stopping_ = false;
  size_t running_ = 0;  // sandboxes taken and not yet ended
  std::vector<std::thread> refill_;  // refill_workers per class with a size
};

}  // namespace airlock::jobs
