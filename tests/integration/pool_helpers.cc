#include "pool_helpers.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

namespace airlock::testing {

TestPool::TestPool(const std::string& dir, const std::string& state_dir, int warm, int preloaded,
                   const std::vector<std::string>& extra)
    : dir_(dir), state_dir_(state_dir) {
  std::vector<std::string> args = {"pool", "--state-dir", state_dir, "--warm", std::to_string(warm),
                                   "--preloaded", std::to_string(preloaded)};
  args.insert(args.end(), extra.begin(), extra.end());
  spawned_ = std::make_unique<Spawned>(args, dir, state_dir);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    log_ = read_text(dir + "/airlock.err");
    if (log_.find("airlock pool: serving") != std::string::npos) {
      ready_ = true;
      return;
    }
    if (::kill(spawned_->pid(), 0) < 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int TestPool::stop() {
  if (stopped_) return 0;
  stopped_ = true;
  ::kill(spawned_->pid(), SIGTERM);
  auto asked = std::chrono::steady_clock::now();
  // A pool that does not stop within 30 s is a failure, not a hung test.
  for (int i = 0; i < 3000; ++i) {
    int status = 0;
    if (::waitpid(spawned_->pid(), &status, WNOHANG) == spawned_->pid()) {
      spawned_->forget();
      if (std::chrono::steady_clock::now() - asked > std::chrono::seconds(5))
        ADD_FAILURE() << "the pool took more than 5 s to stop; its log:\n" << read_text(dir_ + "/airlock.err");
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  log_ = read_text(dir_ + "/airlock.err");
  ADD_FAILURE() << "the pool did not stop within 30 s; its log:\n" << log_;
  ::kill(spawned_->pid(), SIGKILL);
  return spawned_->wait();
}

TestPool::~TestPool() { (void)stop(); }

std::vector<std::string> TestPool::held_ids() const {
  std::vector<std::string> ids;
  if (DIR* d = ::opendir((state_dir_ + "/jobs").c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ids.push_back(e->d_name);
    ::closedir(d);
  }
  return ids;
}

std::vector<pid_t> descendants_of(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
      if (pid <= 0) continue;
      std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
      std::string line;
      std::getline(stat, line);
      auto close = line.rfind(')');
      if (close == std::string::npos) continue;
      char state;
      int ppid = 0;
      if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2) children.emplace(ppid, pid);
    }
    ::closedir(d);
  }
  std::vector<pid_t> out, todo = {root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto [a, b] = children.equal_range(p);
    for (auto it = a; it != b; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

}  // namespace airlock::testing
