// The warm pool: sandboxes prepared ahead of demand, per class (image,
// interpreter, limits), each used by exactly one job and then destroyed by
// that job. Background threads keep every class at its configured size;
// when a class is empty, jobs fall back to a cold start. Preloaded classes
// are prepared by a preloaded interpreter (sandbox/zygote.h) of their image,
// per tenant, image and kind (the data stack's or the standard library's:
// pool/preload_choice.h), which the pool starts and owns: a stored image's
// runs the image's own Python (pool/image_python.h says which images can).
// A preloaded class is kept per tenant: a tenant's first take of it starts
// the tenant's interpreter and fills a stock of its own, so no two tenants'
// jobs fork from one process (pool/tenant_interpreters.h). Each stock has
// refill threads of its own.
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
#include "pool/tenant_interpreters.h"
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
  // How many tenants hold preloaded interpreters at once, and how many
  // sandboxes one interpreter makes before a fresh one replaces it.
  InterpreterLimits interpreters;
  // Fill the preloaded classes of tenant "" (the state directory's own
  // `airlock run` jobs) at start, as the pool always has; false (the
  // service's pool): every tenant's stocks, "" included, on first use.
  bool preload_at_start = true;
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
  // right now: a refill is coming) or kNotFound (no such class here). A
  // preloaded class's sandbox is `tenant`'s: the tenant's first take starts
  // its interpreter and answers kUnavailable until its stock fills.
  Result<PreparedSandbox> take(const std::string& class_key, const std::string& tenant = "");
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
    std::string tenant;    // a preloaded class's tenant; "" for warm classes
    bool dropped = false;  // its tenant was evicted: its threads end, then it goes
    std::vector<std::thread> threads;
    std::deque<PreparedSandbox> ready;
    size_t in_flight = 0;  // being prepared by a refill thread right now
    uint64_t made = 0, taken = 0, failed = 0, missed = 0;
    std::string last_error;
  };
  WarmPool(PoolConfig config, sandbox::CgroupBackend& cgroups)
      : config_(std::move(config)), cgroups_(cgroups) {}
  void refill_loop(Stock* stock);
  void start_refills(Stock* stock);
  Stock* add_tenant_stock_locked(const PoolClass& c, const std::string& key, const std::string& tenant);
  void drop_stocks_locked(const std::vector<std::string>& tenants);
  void janitor_loop();
  Result<std::unique_ptr<sandbox::Zygote>> start_zygote(const ImageSource& image, Preload preload);
  std::vector<std::string> modules_of(Preload preload) const;

  PoolConfig config_;
  sandbox::CgroupBackend& cgroups_;
  std::map<std::string, ImageSource> images_;  // by image_class(): what a tenant's interpreter runs
  std::unique_ptr<TenantInterpreters> interpreters_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::vector<std::unique_ptr<Stock>> stocks_;
  std::vector<std::pair<PoolClass, std::string>> preloaded_classes_;  // with their keys; stocks per tenant
  std::vector<std::unique_ptr<Stock>> dropped_;  // for the janitor: join, then destroy
  bool stopping_ = false;
  size_t running_ = 0;  // sandboxes taken and not yet ended
  std::thread janitor_;
};

}  // namespace airlock::jobs
