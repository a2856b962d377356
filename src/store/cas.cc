#include "store/cas.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "base/unique_fd.h"

namespace airlock::store {

namespace {

Status make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) < 0 && errno != EEXIST) return fail_errno("create " + path);
  return {};
}

}  // namespace

Status ContentStore::create_dirs() const {
  for (const auto& d : {root_, root_ + "/sha256", root_ + "/tmp"})
    if (auto st = make_dir(d); !st) return st;
  return {};
}

Result<ContentStore::Put> ContentStore::put(const std::string& source,
                                            const std::string& expected_sha256) const {
  if (path(expected_sha256).empty())
    return fail("artifact sha256 '" + expected_sha256 + "' is not valid");
  UniqueFd in(::open(source.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (!in) return fail_errno("open artifact " + source);
  struct stat st{};
  if (::fstat(in.get(), &st) < 0) return fail_errno("stat artifact " + source);
  if (!S_ISREG(st.st_mode)) return fail("artifact " + source + " is not a regular file");
  auto stored = put_fd(in.get(), UINT64_MAX, expected_sha256);
  if (!stored) return fail_with("artifact " + source + " " + stored.error().what, stored.error().err);
  return Put{stored->path, stored->existed};
}

Status ContentStore::remove(const std::string& sha256) const {
  std::string p = path(sha256);
  if (p.empty()) return fail("artifact sha256 '" + sha256 + "' is not valid");
  if (::unlink(p.c_str()) < 0 && errno != ENOENT) return fail_errno("remove " + p);
  return {};
}

}  // namespace airlock::store
