#include "sys/descriptors.h"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>

namespace airlock::sys {
namespace {

uint64_t nr_open() {
  std::ifstream in("/proc/sys/fs/nr_open");
  uint64_t n = 0;
  return in >> n && n > 0 ? n : 1u << 20;
}

}  // namespace

Result<DescriptorLimit> raise_descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return fail_errno("getrlimit(RLIMIT_NOFILE)");
  DescriptorLimit out{r.rlim_cur, r.rlim_cur, r.rlim_max};
  rlim_t target = r.rlim_max == RLIM_INFINITY ? nr_open() : std::min<rlim_t>(r.rlim_max, nr_open());
  if (target > r.rlim_cur) {
    r.rlim_cur = target;
    if (::setrlimit(RLIMIT_NOFILE, &r) != 0) return fail_errno("raise RLIMIT_NOFILE");
    out.soft = target;
  }
  return out;
}

Result<uint64_t> descriptor_hard_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return fail_errno("getrlimit(RLIMIT_NOFILE)");
  return r.rlim_max;
}

Result<uint64_t> free_descriptors() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return fail_errno("getrlimit(RLIMIT_NOFILE)");
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return fail_errno("open /proc/self/fd");
  uint64_t open = 0;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++open;
  }
  ::closedir(dir);  // its own descriptor was counted: one spare for the caller
  return r.rlim_cur > open ? r.rlim_cur - open : 0;
}

}  // namespace airlock::sys
