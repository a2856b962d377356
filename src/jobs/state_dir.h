// airlock's state directory (default /var/lib/airlock):
//   jobs/<id>/     a running job's private area (lock, inputs, outputs, root)
//   records/<id>.json  finished job records, never rewritten
//   cache/         digests worth keeping between runs
// A job holds an exclusive flock on jobs/<id>/lock for its whole life; a job
// directory whose lock can be taken belongs to a dead airlock and is swept
// (its cgroup killed and removed, its directory deleted).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sandbox/cgroup.h"

namespace airlock::jobs {

std::string default_state_dir();  // $AIRLOCK_STATE_DIR or /var/lib/airlock

class JobDir {
 public:
  // Creates jobs/<id> (and the state layout if missing) and locks it.
  static Result<JobDir> create(const std::string& state_dir, const std::string& id);
  // A directory created (and locked) by another airlock process that handed
  // it over with its lock fd (a prepared sandbox from the warm pool).
  static JobDir adopt(std::string path, UniqueFd lock) { return JobDir(std::move(path), std::move(lock)); }
  int lock_fd() const { return lock_.get(); }
  // The moved-from JobDir owns nothing: its remove() and destructor do nothing.
  JobDir(JobDir&& other) noexcept
      : path_(std::move(other.path_)),
        lock_(std::move(other.lock_)),
        removed_(std::exchange(other.removed_, true)) {}
  ~JobDir();  // removes the directory if remove() was not called

  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }
  Status remove();  // once; a second call (or one after release()) does nothing
  // Gives the directory up without removing it (handed to another process
  // together with its lock).
  void release() { removed_ = true; lock_.reset(); }

 private:
  JobDir(std::string path, UniqueFd lock) : path_(std::move(path)), lock_(std::move(lock)) {}
  std::string path_;
  UniqueFd lock_;
  bool removed_ = false;
};

struct SweepReport {
  std::vector<std::string> swept;   // job ids whose leftovers were removed
  std::vector<std::string> failed;  // "id: why"
};

// Removes what dead airlock processes left: job directories nobody holds and
// their cgroups. A cgroup is only ever swept through its job directory:
// several state directories may share the cgroup parent, and a group with no
// directory here may belong to a live job of another one.
SweepReport sweep(const std::string& state_dir, sandbox::CgroupBackend& cgroups);

// 16 random hex characters.
std::string new_job_id();

}  // namespace airlock::jobs
