#include "jobs/uid_lease.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

namespace airlock::jobs {

Result<UidLease> UidLease::acquire(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos < dir.size() && dir[pos] != '/') continue;
    std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0700) < 0 && errno != EEXIST) return fail_errno("create " + prefix);
  }
  // Start at a random slot: a slot just freed is then not handed out again at
  // once (a warm pool refills right after each job), which keeps "no process
  // of this uid is left" a meaningful check after a job.
  unsigned start = 0;
  (void)!::getrandom(&start, sizeof(start), 0);
  for (unsigned i = 0; i < kSlots; ++i) {
    unsigned slot = (start + i) % kSlots;
    std::string path = dir + "/" + std::to_string(slot);
    UniqueFd fd(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return fail_errno("open " + path);
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return UidLease(slot, std::move(fd));
    if (errno != EWOULDBLOCK) return fail_errno("lock " + path);
  }
  return fail("all " + std::to_string(kSlots) + " sandbox uid slots are in use");
}

}  // namespace airlock::jobs
