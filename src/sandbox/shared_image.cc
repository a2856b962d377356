#include "sandbox/shared_image.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "sys/file_io.h"

namespace airlock::sandbox {
namespace {

std::string mount_path(const std::string& hex) { return std::string(kSharedImageDir) + "/" + hex; }
std::string file_key_path(const std::string& hex) { return mount_path(hex) + ".file"; }
std::string empty_path() { return std::string(kSharedImageDir) + "/empty"; }

bool is_hex_digest(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Only root can mount here, and only airlock mounts erofs here.
bool is_image_mount(int dir_fd) {
  struct statfs sf {};
  return ::fstatfs(dir_fd, &sf) == 0 && static_cast<unsigned long>(sf.f_type) == EROFS_SUPER_MAGIC_V1;
}

bool image_mounted_at(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  return fd && is_image_mount(fd.get());
}

// flock(LOCK_EX) on the directory's lock file: one process mounts or
// releases at a time.
Result<UniqueFd> lock_dir() {
  if (auto st = sys::make_dirs(kSharedImageDir, 0700); !st) return std::unexpected(st.error());
  std::string path = std::string(kSharedImageDir) + "/.lock";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return fail_errno("open " + path);
  while (::flock(fd.get(), LOCK_EX) < 0)
    if (errno != EINTR) return fail_errno("lock " + path);
  return fd;
}

Status remove_file_if_present(const std::string& path) {
  if (::unlink(path.c_str()) < 0 && errno != ENOENT) return fail_errno("remove " + path);
  return {};
}

// Under the lock. Returns whether a mount was there.
Result<bool> release_locked(const std::string& hex) {
  const std::string path = mount_path(hex);
  if (auto st = remove_file_if_present(file_key_path(hex)); !st) return std::unexpected(st.error());
  bool mounted = false;
  while (image_mounted_at(path)) {
    if (::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
      return fail_errno("unmount the shared image " + path);
    mounted = true;
  }
  if (::rmdir(path.c_str()) < 0 && errno != ENOENT) return fail_errno("remove " + path);
  return mounted;
}

// The images the directory has a mount point or an identity file of
// (<hex>, <hex>.file), each once; none when there is no directory.
Result<std::vector<std::string>> listed_images() {
  std::vector<std::string> names;
  UniqueFd dir(::open(kSharedImageDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) {
    if (errno == ENOENT) return names;
    return fail_errno(std::string("open ") + kSharedImageDir);
  }
  DIR* d = ::fdopendir(dir.release());
  if (!d) return fail_errno(std::string("read ") + kSharedImageDir);
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > 5 && name.ends_with(".file")) name.resize(name.size() - 5);
    if (is_hex_digest(name) && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  }
  ::closedir(d);
  return names;
}

std::unexpected<ImageMountError> mount_api_error(const Error& e) {
  return std::unexpected(ImageMountError{ImageMountFailure::kMountApi, e});
}

}  // namespace

Result<std::optional<UniqueFd>> find_shared_image(const std::string& hex, const std::string& file_key) {
  if (!is_hex_digest(hex)) return fail("not an image digest: " + hex);
  auto recorded = sys::read_file(file_key_path(hex), 4096);
  if (!recorded || *recorded != file_key) return std::optional<UniqueFd>();
  UniqueFd root(::open(mount_path(hex).c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root || !is_image_mount(root.get())) return std::optional<UniqueFd>();
  return std::optional<UniqueFd>(std::move(root));
}

ImageMountResult<UniqueFd> mount_shared_image(const std::string& hex, int image_fd,
                                              const std::string& file_key) {
  if (!is_hex_digest(hex)) return mount_api_error(Error{"not an image digest: " + hex, 0});
  auto lock = lock_dir();
  if (!lock) return mount_api_error(lock.error());
  // Another process may have mounted it while this one waited.
  auto found = find_shared_image(hex, file_key);
  if (!found) return mount_api_error(found.error());
  if (*found) return std::move(**found);
  auto released = release_locked(hex);  // one made from another file
  if (!released) return mount_api_error(released.error());
  if (::mkdir(empty_path().c_str(), 0755) < 0 && errno != EEXIST)
    return mount_api_error(Error{"make " + empty_path(), errno});
  const std::string path = mount_path(hex);
  if (::mkdir(path.c_str(), 0700) < 0) return mount_api_error(Error{"make " + path, errno});
  auto image = ImageMount::mount_fd(image_fd);
  if (!image) {
    (void)::rmdir(path.c_str());
    return std::unexpected(image.error());
  }
  if (::move_mount(image->fd(), "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return mount_api_error(Error{"attach the shared image on " + path, errno});
  if (auto st = sys::write_file_atomic(file_key_path(hex), file_key, 0600); !st) {
    (void)release_locked(hex);
    return mount_api_error(st.error());
  }
  UniqueFd root(::open(path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root) return mount_api_error(Error{"open " + path, errno});
  return root;
}

ImageMountResult<ImageMount> overlay_shared_image(int shared_root) {
  UniqueFd empty(::open(empty_path().c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!empty && errno == ENOENT) {  // removed by hand since the mount was made
    if (::mkdir(empty_path().c_str(), 0755) < 0 && errno != EEXIST)
      return mount_api_error(Error{"make " + empty_path(), errno});
    empty.reset(::open(empty_path().c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!empty) return mount_api_error(Error{"open " + empty_path(), errno});
  return ImageMount::overlay_over(shared_root, empty.get());
}

Status detach_shared_image_copies() {
  auto names = listed_images();
  if (!names) return std::unexpected(names.error());
  for (const std::string& hex : *names)
    while (image_mounted_at(mount_path(hex)))
      if (::umount2(mount_path(hex).c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
        return fail_errno("detach the copy of " + mount_path(hex));
  return {};
}

Status release_shared_image(const std::string& hex) {
  if (!is_hex_digest(hex)) return fail("not an image digest: " + hex);
  if (::access(kSharedImageDir, F_OK) < 0 && errno == ENOENT) return {};
  auto lock = lock_dir();
  if (!lock) return std::unexpected(lock.error());
  auto released = release_locked(hex);
  if (!released) return std::unexpected(released.error());
  return {};
}

Result<int> release_shared_images() {
  auto names = listed_images();
  if (!names) return std::unexpected(names.error());
  if (names->empty()) return 0;
  auto lock = lock_dir();
  if (!lock) return std::unexpected(lock.error());
  int count = 0;
  for (const std::string& hex : *names) {
    auto released = release_locked(hex);
    if (!released) return std::unexpected(released.error());
    count += *released ? 1 : 0;
  }
  return count;
}

}  // namespace airlock::sandbox
