#include "jobs/state_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/check.h"
#include "sys/remove_tree.h"

namespace airlock::jobs {

std::string default_state_dir() {
  const char* env = std::getenv("AIRLOCK_STATE_DIR");
  return env && *env ? env : "/var/lib/airlock";
}

std::string new_job_id() {
  unsigned char bytes[8];
  AIRLOCK_CHECK(::getrandom(bytes, sizeof(bytes), 0) == sizeof(bytes));
  static const char* kHex = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 15]);
  }
  return id;
}

namespace {

Status make_dir(const std::string& path, mode_t mode) {
  if (::mkdir(path.c_str(), mode) < 0 && errno != EEXIST) return fail_errno("create " + path);
  return {};
}

bool valid_id(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

Result<JobDir> JobDir::create(const std::string& state_dir, const std::string& id) {
  // The sandbox child (an unprivileged host uid) must traverse to its job's
  // root and inputs: jobs are 0711 (no listing), records stay private.
  for (const auto& [d, mode] : {std::pair{state_dir, 0711}, {state_dir + "/jobs", 0711},
                                {state_dir + "/records", 0700}, {state_dir + "/cache", 0700}})
    if (auto st = make_dir(d, static_cast<mode_t>(mode)); !st) return std::unexpected(st.error());
  for (const auto& d : {state_dir, state_dir + "/jobs"}) {
    struct stat st{};
    if (::stat(d.c_str(), &st) < 0) return fail_errno("stat " + d);
    if (!(st.st_mode & S_IXOTH))
      return fail("the state directory " + d +
                  " must be searchable by other users (mode 0711): the sandbox's unprivileged "
                  "user passes through it");
  }
  // Made under a name the sweep ignores, locked, then renamed: the sweep
  // never sees an unlocked directory of a live job.
  std::string path = state_dir + "/jobs/" + id;
  std::string building = state_dir + "/jobs/.new-" + id;
  if (::mkdir(building.c_str(), 0711) < 0) return fail_errno("create " + building);
  UniqueFd lock(::open((building + "/lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) < 0 || ::rename(building.c_str(), path.c_str()) < 0) {
    auto err = fail_errno("create " + path);
    (void)sys::remove_tree(building);
    return err;
  }
  return JobDir(path, std::move(lock));
}

JobDir::~JobDir() {
  if (!removed_ && lock_) (void)remove();
}

Status JobDir::remove() {
  if (removed_) return {};
  removed_ = true;
  // Renamed first, still locked: a concurrent sweep never mistakes a
  // directory that is being removed for one left by a dead airlock.
  std::string gone = path_.substr(0, path_.rfind('/') + 1) + ".gone-" + path_.substr(path_.rfind('/') + 1);
  if (::rename(path_.c_str(), gone.c_str()) < 0) return fail_errno("rename " + path_);
  auto st = sys::remove_tree(gone);
  lock_.reset();
  return st;
}

namespace {

// A directory in jobs/: "<id>" (a job), ".new-<id>" (being created) or
// ".gone-<id>" (being removed). Returns the id, or "" for anything else.
std::string job_id_of(const std::string& name, bool& transient) {
  transient = false;
  for (const char* prefix : {".new-", ".gone-"}) {
    if (name.rfind(prefix, 0) == 0) {
      transient = true;
      return valid_id(name.substr(std::strlen(prefix))) ? name.substr(std::strlen(prefix)) : "";
    }
  }
  return valid_id(name) ? name : "";
}

bool older_than(const std::string& path, int seconds) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && ::time(nullptr) - st.st_mtime > seconds;
}

}  // namespace

SweepReport sweep(const std::string& state_dir, sandbox::CgroupBackend& cgroups) {
  SweepReport report;
  std::string jobs = state_dir + "/jobs";
  DIR* dir = ::opendir(jobs.c_str());
  if (!dir) return report;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir)) names.push_back(e->d_name);
  ::closedir(dir);
  for (const auto& name : names) {
    bool transient = false;
    std::string id = job_id_of(name, transient);
    if (id.empty()) continue;
    std::string path = jobs + "/" + name;
    // A directory being created is locked only after its lock file exists:
    // taking that lock first would break a live creation. Creation takes
    // microseconds, so only old ".new-" directories are a dead airlock's.
    if (name.rfind(".new-", 0) == 0 && !older_than(path, 60)) continue;
    UniqueFd lock(::open((path + "/lock").c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    if (lock && ::flock(lock.get(), LOCK_EX | LOCK_NB) < 0) continue;  // a live airlock holds it
    if (!lock) {
      // No lock file: a directory being created (give it a minute) or the
      // remains of a removal; anything else is not ours to judge.
      if (errno != ENOENT || !transient || !older_than(path, 60)) continue;
    }
    if (auto cg = cgroups.open(id); cg) {
      if (auto st = (*cg)->kill_all(); !st) report.failed.push_back(id + ": " + st.error().message());
      if (auto st = (*cg)->remove(); !st) report.failed.push_back(id + ": " + st.error().message());
    }
    if (auto st = sys::remove_tree(path); !st) report.failed.push_back(id + ": " + st.error().message());
    report.swept.push_back(id);
  }
  return report;
}

}  // namespace airlock::jobs
