#include "sys/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/unique_fd.h"

namespace airlock::sys {

Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("write");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

Result<std::string> read_all(int fd, size_t limit) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read");
    }
    if (n == 0) return out;
    if (out.size() + static_cast<size_t>(n) > limit) return fail("read: more than the allowed size");
    out.append(buf, static_cast<size_t>(n));
  }
}

Result<std::string> read_file(const std::string& path, size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + path);
  auto data = read_all(fd.get(), limit);
  if (!data) return fail_with("read " + path + ": " + data.error().what, data.error().err);
  return data;
}

Status write_file(const std::string& path, std::string_view data) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC));
  if (!fd) return fail_errno("open " + path);
  if (auto st = write_all(fd.get(), data); !st) return fail_with("write " + path, st.error().err);
  return {};
}

// The deepest directory first: where the parents exist (nearly always: a
// job's directories under the service's work directory), one mkdir.
Status make_dirs(const std::string& path, int mode) {
  if (::mkdir(path.c_str(), static_cast<mode_t>(mode)) == 0 || errno == EEXIST) return {};
  if (errno != ENOENT) return fail_errno("create " + path);
  size_t end = path.find_last_not_of('/');
  size_t slash = end == std::string::npos ? std::string::npos : path.find_last_of('/', end);
  if (slash == std::string::npos || path.find_first_not_of('/') > slash) return fail_errno("create " + path);
  if (auto st = make_dirs(path.substr(0, slash), mode); !st) return st;
  if (::mkdir(path.c_str(), static_cast<mode_t>(mode)) < 0 && errno != EEXIST) return fail_errno("create " + path);
  return {};
}

Status write_file_atomic(const std::string& path, std::string_view data, int mode) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd) return fail_errno("create " + tmp);
  if (auto st = write_all(fd.get(), data); !st) {
    ::unlink(tmp.c_str());
    return fail_with("write " + tmp, st.error().err);
  }
  if (::fsync(fd.get()) < 0 || ::rename(tmp.c_str(), path.c_str()) < 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return fail_with("write " + path, e);
  }
  return {};
}

}  // namespace airlock::sys
