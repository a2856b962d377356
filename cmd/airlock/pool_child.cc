#include "cmd/airlock/pool_child.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "pool/handover.h"

extern char** environ;

using namespace airlock;

namespace {

// True once the pool answers and every class holds its full count.
bool full(const std::string& socket) {
  auto text = jobs::pool_stats(socket);
  if (!text) return false;
  auto stats = parse_json_or_discarded(*text);
  if (!stats.is_object() || !stats.contains("classes")) return false;
  for (const auto& c : stats["classes"])
    if (c.value("ready", 0) < c.value("size", 0)) return false;
  return true;
}

}  // namespace

Result<PoolChild> PoolChild::start(const std::string& binary, const std::string& state_dir, size_t warm,
                                   size_t preloaded, const std::vector<std::string>& pool_images,
                                   const std::string& image_dir, const std::vector<std::string>& extra_args) {
  std::vector<std::string> args = {binary, "pool", "--state-dir", state_dir, "--warm", std::to_string(warm),
                                   "--preloaded", std::to_string(preloaded), "--exit-with-parent", "yes"};
  if (!image_dir.empty()) args.insert(args.end(), {"--image-dir", image_dir});
  for (const auto& image : pool_images) args.insert(args.end(), {"--image", image});
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);  // serve blocks SIGINT/SIGTERM for sigwait; the pool must not
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, binary.c_str(), nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return fail_with("start airlock pool", rc);
  PoolChild child(pid);
  std::string socket = jobs::pool_socket_path(state_dir);
  for (int i = 0; i < 6000; ++i) {
    if (full(socket)) return child;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      child.pid_ = -1;
      return fail("airlock pool exited at start (status " + std::to_string(status) + "); see its messages above");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return fail("airlock pool did not fill its classes within 60 s (" + socket + ")");
}

int PoolChild::stop() {
  if (pid_ < 0) return 0;
  ::kill(pid_, SIGTERM);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
