#include "images/image_use.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "base/strings.h"
#include "sys/file_io.h"

namespace airlock::images {
namespace {

Result<UniqueFd> open_lock_file(const ImageStore& store, std::string_view digest) {
  std::string path = store.inuse_path(digest);
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return fail_errno("open " + path);
  return fd;
}

// "pid 123 (airlock serve ...)" for each holder, or a plain phrase.
std::string describe_holders(int fd) {
  struct stat st {};
  auto locks = sys::read_file("/proc/locks", 4 << 20);
  if (::fstat(fd, &st) < 0 || !locks) return "another process holds it";
  std::string out;
  for (pid_t pid : flock_holders(*locks, st.st_dev, st.st_ino)) {
    auto cmdline = sys::read_file("/proc/" + std::to_string(pid) + "/cmdline", 4096);
    std::string command = cmdline ? *cmdline : "";
    for (char& c : command)
      if (c == '\0') c = ' ';
    while (!command.empty() && command.back() == ' ') command.pop_back();
    if (command.size() > 60) command = command.substr(0, 60) + "...";
    if (!out.empty()) out += ", ";
    out += "pid " + std::to_string(pid) + (command.empty() ? "" : " (" + command + ")");
  }
  return out.empty() ? "another process holds it" : "held by " + out;
}

}  // namespace

Result<ImageUse> ImageUse::hold(const ImageStore& store, const StoredImage& image) {
  // Under the store's shared lock, so that rm and gc (exclusive) either ran
  // before (the blob is gone: an error here) or wait until the hold is taken.
  auto store_lock = store.lock(StoreLock::kShared);
  if (!store_lock) return std::unexpected(store_lock.error());
  if (::access(image.blob_path.c_str(), F_OK) < 0)
    return fail("image " + (image.name.empty() ? image.digest : "'" + image.name + "'") +
                " was removed from the store before it could be used");
  auto fd = open_lock_file(store, image.digest);
  if (!fd) return std::unexpected(fd.error());
  while (::flock(fd->get(), LOCK_SH) < 0)
    if (errno != EINTR) return fail_errno("lock " + store.inuse_path(image.digest));
  return ImageUse(std::move(*fd), image.digest);
}

Result<UniqueFd> claim_unused(const ImageStore& store, std::string_view digest) {
  auto fd = open_lock_file(store, digest);
  if (!fd) return std::unexpected(fd.error());
  if (::flock(fd->get(), LOCK_EX | LOCK_NB) < 0) {
    if (errno == EWOULDBLOCK) return fail(describe_holders(fd->get()));
    return fail_errno("lock " + store.inuse_path(digest));
  }
  return std::move(*fd);
}

std::vector<pid_t> flock_holders(std::string_view proc_locks, dev_t dev, ino_t ino) {
  // "3: FLOCK  ADVISORY  READ 32105 fe:00:10953277 0 EOF"; waiters have "->" after the number.
  char want[64];
  std::snprintf(want, sizeof(want), "%02x:%02x:%llu", major(dev), minor(dev),
                static_cast<unsigned long long>(ino));
  std::vector<pid_t> pids;
  for (const std::string& line : split(proc_locks, '\n')) {
    std::vector<std::string> fields;
    for (std::string& f : split(line, ' '))
      if (!f.empty()) fields.push_back(std::move(f));
    if (fields.size() < 6 || fields[1] != "FLOCK") continue;
    if (fields[5] != want) continue;
    pid_t pid = 0;
    auto [ptr, ec] = std::from_chars(fields[4].data(), fields[4].data() + fields[4].size(), pid);
    if (ec != std::errc() || pid <= 0) continue;
    if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
  }
  return pids;
}

}  // namespace airlock::images
