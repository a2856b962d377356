// airlock pool: keep warm (and preloaded Python) sandboxes ready for the
// `airlock run` jobs of one state directory, until SIGINT or SIGTERM.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cmd/airlock/common.h"
#include "jobs/choose_image.h"
#include "pool/handover.h"
#include "pool/image_python.h"
#include "pool/pool_server.h"
#include "jobs/state_dir.h"
#include "pool/warm_pool.h"

using namespace airlock;

namespace {

const char* const kPoolUsage =
    "usage: airlock pool [--state-dir DIR] [--warm N] [--preloaded N] [--preloaded-stdlib N]\n"
    "                    [--module NAME]... [--image IMAGE]... [--image-dir DIR]\n"
    "                    [--preloaded-tenants N] [--preloaded-renew-jobs N] [--preload-at-start yes|no]\n"
    "  Keeps N sandboxes ready for `airlock run` jobs of DIR (default $AIRLOCK_STATE_DIR or\n"
    "  /var/lib/airlock), each used by one job only: --warm for any command (default 2),\n"
    "  --preloaded for Python jobs, forked from an interpreter that has already imported\n"
    "  numpy, pandas and matplotlib (or the --module list; default 2), --preloaded-stdlib\n"
    "  for Python jobs whose code imports only standard modules, forked from a small\n"
    "  interpreter that has imported common ones (default: as many as --preloaded; they\n"
    "  start and end faster). A job's own limits (memory, pids, cpus, cpu time, sizes) are\n"
    "  applied when it takes a sandbox. Runs until SIGINT or SIGTERM, then removes every\n"
    "  unused sandbox. Each --image (NAME or\n"
    "  NAME@sha256:HEX of the image store) gets N warm sandboxes of its own, each with its\n"
    "  own mount of the image; the image is held (not removed by `airlock image rm/gc`)\n"
    "  while the pool runs. An image with python3, its libpython3.X and pandas also gets\n"
    "  N preloaded sandboxes, forked from an interpreter of its own running the image's\n"
    "  Python; another image gets none (the pool says why).\n"
    "  Preloaded sandboxes are kept per tenant, each forked from interpreters of the\n"
    "  tenant's own (`airlock run` jobs are tenant \"\"): --preloaded-tenants N tenants hold\n"
    "  them at once (default 8; the least recently used gives way), and each interpreter\n"
    "  makes --preloaded-renew-jobs N sandboxes before a fresh one replaces it (default\n"
    "  100; 0: never). --preload-at-start no starts even tenant \"\"'s on its first job.\n";

bool parse_count(const std::string& text, size_t& out, unsigned long max = 64) {
  char* end = nullptr;
  unsigned long v = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v > max) return false;
  out = v;
  return true;
}

}  // namespace

int pool_command(const std::vector<std::string>& args) {
  jobs::PoolConfig config;
  size_t warm = 2, preloaded = 2, stdlib = 0, hold_ms = 0, tenants = 0, renew = 0;
  bool stdlib_set = false;
  bool exit_with_parent = false;
  std::vector<std::string> modules, image_names;
  std::string image_dir;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kPoolUsage, stdout);
      return 0;
    }
    if (i + 1 >= args.size()) {
      std::fprintf(stderr, "airlock pool: %s needs a value\n%s", a.c_str(), kPoolUsage);
      return 125;
    }
    const std::string& v = args[++i];
    if (a == "--state-dir") config.state_dir = v;
    else if (a == "--exit-with-parent") exit_with_parent = v == "yes";  // for airlock serve
    else if (a == "--module") modules.push_back(v);
    else if (a == "--image") image_names.push_back(v);
    else if (a == "--image-dir") image_dir = v;
    else if (a == "--prefetch-image") config.prefetch_image = v != "no";  // for bench/image_cold_phases.py
    else if (a == "--refill-hold-ms" && parse_count(v, hold_ms, 10000))  // bench/start_vs_bwrap.sh; 0: no hold
      config.refill_hold_max = std::chrono::milliseconds(hold_ms);
    else if (a == "--preload-at-start") config.preload_at_start = v != "no";
    else if (a == "--preloaded-tenants" && parse_count(v, tenants, 4096) && tenants > 0)
      config.interpreters.max_tenants = tenants;
    else if (a == "--preloaded-renew-jobs" && parse_count(v, renew, 1'000'000))
      config.interpreters.renew_after = renew;
    else if ((a == "--warm" && parse_count(v, warm)) || (a == "--preloaded" && parse_count(v, preloaded))) {
    } else if (a == "--preloaded-stdlib" && parse_count(v, stdlib)) {
      stdlib_set = true;
    } else {
      std::fprintf(stderr, "airlock pool: bad option %s %s (counts are 0 to 64)\n%s", a.c_str(), v.c_str(),
                   kPoolUsage);
      return 125;
    }
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "airlock: pool needs root (it creates namespaces and cgroups)\n");
    return 125;
  }
  if (exit_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    if (::getppid() == 1) return 1;  // the parent is already gone
  }
  if (config.state_dir.empty()) config.state_dir = jobs::default_state_dir();
  if (!modules.empty()) config.preload_modules = modules;
  if (!stdlib_set) stdlib = preloaded;
  config.classes = {{std::nullopt, warm, {}},
                    {jobs::Preload::kData, preloaded, {}},
                    {jobs::Preload::kStdlib, stdlib, {}}};
  std::vector<images::ImageUse> held;  // every pool image stays in the store while the pool runs
  for (const auto& name : image_names) {
    auto chosen = jobs::choose_image(name, image_dir, config.state_dir);
    if (!chosen || !chosen->refusal.empty()) {
      std::fprintf(stderr, "airlock pool: %s\n", chosen ? chosen->refusal.c_str() : chosen.error().message().c_str());
      return 125;
    }
    if (chosen->source.is_host()) continue;  // host has its classes already
    if (chosen->use) held.push_back(std::move(*chosen->use));
    config.classes.push_back({std::nullopt, warm, {}, chosen->source});
    if (preloaded == 0 && stdlib == 0) continue;
    auto python = jobs::preloadable_python(chosen->source, config.state_dir + "/cache");
    if (python) {
      config.classes.push_back({jobs::Preload::kData, preloaded, {}, chosen->source});
      config.classes.push_back({jobs::Preload::kStdlib, stdlib, {}, chosen->source});
    } else if (python.error().kind == ErrorKind::kNotFound) {
      std::fprintf(stderr, "airlock pool: image %s: no preloaded sandboxes (%s)\n", name.c_str(),
                   python.error().what.c_str());
    } else {
      std::fprintf(stderr, "airlock pool: image %s: %s\n", name.c_str(), python.error().message().c_str());
      return 125;
    }
  }
  auto cgroups = open_cgroups();
  if (!cgroups) return 125;
  sweep_leftovers(config.state_dir, *cgroups, true);

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before any thread starts

  auto pool = jobs::WarmPool::start(config, *cgroups);
  if (!pool) {
    std::fprintf(stderr, "airlock pool: %s\n", pool.error().message().c_str());
    return 1;
  }
  std::string path = jobs::pool_socket_path(config.state_dir);
  auto server = jobs::PoolServer::start(**pool, path);
  if (!server) {
    std::fprintf(stderr, "airlock pool: %s\n", server.error().message().c_str());
    return 1;
  }
  (*pool)->wait_full(30'000);
  std::fprintf(stderr, "airlock pool: serving %s\n%s\n", path.c_str(), (*pool)->stats().dump(2).c_str());
  int sig = 0;
  ::sigwait(&stop, &sig);
  server->reset();
  pool->reset();
  std::fprintf(stderr, "airlock pool: stopped; unused sandboxes removed\n");
  return 0;
}
