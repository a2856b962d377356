#include "service/move_file.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace airlock::service {

Status move_file(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return {};
  if (errno != EXDEV) return fail_errno("store the upload");
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!in) return fail_errno("open the spooled upload");
  struct stat st{};
  if (::fstat(in.get(), &st) != 0) return fail_errno("stat the spooled upload");
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!out) return fail_errno("create the upload in the content directory");
  off_t offset = 0;
  while (offset < st.st_size) {
    ssize_t n = ::sendfile(out.get(), in.get(), &offset, static_cast<size_t>(st.st_size - offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      auto failed = fail_errno("copy the upload into the content directory");
      ::unlink(to.c_str());
      return failed;
    }
  }
  if (::fsync(out.get()) != 0) {
    auto failed = fail_errno("sync the upload");
    ::unlink(to.c_str());
    return failed;
  }
  ::unlink(from.c_str());
  return {};
}

}  // namespace airlock::service
