#include "sandbox/image_mount.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <unistd.h>

#include <memory>

#include "sys/syscalls.h"

namespace airlock::sandbox {
namespace {

std::unexpected<ImageMountError> failed(ImageMountFailure kind, std::string what) {
  int saved = errno;
  return std::unexpected(ImageMountError{kind, Error{std::move(what), saved}});
}

}  // namespace

std::string_view image_mount_failure_name(ImageMountFailure kind) {
  switch (kind) {
    case ImageMountFailure::kOpenFile:
      return "open_file";
    case ImageMountFailure::kNotAnImage:
      return "not_an_image";
    case ImageMountFailure::kMountApi:
      return "mount_api";
  }
  return "mount_api";
}

ImageMountResult<ImageMount> ImageMount::mount_file(const std::string& image_file) {
  UniqueFd file(::open(image_file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!file) return failed(ImageMountFailure::kOpenFile, "open the image " + image_file);
  return mount_fd(file.get());
}

ImageMountResult<ImageMount> ImageMount::mount_fd(int image_fd) {
  UniqueFd fs(::fsopen("erofs", FSOPEN_CLOEXEC));
  if (!fs) return failed(ImageMountFailure::kMountApi, "fsopen erofs");
  // The kernel opens the source by this name in our own fd table; the name is
  // what mountinfo shows.
  std::string source = "/proc/self/fd/" + std::to_string(image_fd);
  if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "source", source.c_str(), 0) < 0)
    return failed(ImageMountFailure::kMountApi, "configure the image's source");
  if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
    return failed(ImageMountFailure::kNotAnImage, "mount the image (erofs)");
  UniqueFd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC,
                         MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
  if (!mnt) return failed(ImageMountFailure::kMountApi, "fsmount the image");
  return ImageMount(std::move(mnt));
}

ImageMountResult<ImageMount> ImageMount::overlay_over(int image_root, int empty_layer) {
  UniqueFd fs(::fsopen("overlay", FSOPEN_CLOEXEC));
  if (!fs) return failed(ImageMountFailure::kMountApi, "fsopen overlay");
  // Uppermost first. The kernel keeps these strings: they are what the
  // sandbox's mountinfo shows as lowerdir.
  std::string lower = "/proc/self/fd/" + std::to_string(image_root) + ":/proc/self/fd/" +
                      std::to_string(empty_layer);
  // xino=off: a file's inode number is the image's own (the layers are on
  // two file systems, so its device is one the overlay makes per layer).
  if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "source", "image", 0) < 0 ||
      ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "lowerdir", lower.c_str(), 0) < 0 ||
      ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "xino", "off", 0) < 0)
    return failed(ImageMountFailure::kMountApi, "configure the image's overlay");
  if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
    return failed(ImageMountFailure::kMountApi, "make the image's overlay");
  UniqueFd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC,
                         MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
  if (!mnt) return failed(ImageMountFailure::kMountApi, "fsmount the image's overlay");
  return ImageMount(std::move(mnt));
}

Result<UniqueFd> ImageMount::clone_subtree(const std::string& path) const {
  UniqueFd clone(::open_tree(mount_.get(), path.c_str(),
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW));
  if (!clone) return fail_errno("clone " + path + " of the image");
  return clone;
}

size_t ImageMount::prefetch_loader() const {
  // The loader, libc and the loader's cache: what the exec of /bin/true reads.
  static constexpr const char* kLoaderFiles[] = {
      "etc/ld.so.cache",
#if defined(__x86_64__)
      "usr/lib64/ld-linux-x86-64.so.2", "usr/lib/x86_64-linux-gnu/libc.so.6",
#elif defined(__aarch64__)
      "usr/lib/ld-linux-aarch64.so.1", "usr/lib/aarch64-linux-gnu/libc.so.6",
#endif
  };
  size_t total = 0;
  // On the heap and not zeroed: a thread_local array this size was 64 KiB of
  // every airlock thread's TLS block, zeroed (16 page faults) at each thread's
  // start and at every process start, whether it prefetched or not.
  constexpr size_t kChunk = 1 << 16;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  for (const char* path : kLoaderFiles) {
    // Links resolve inside the image (Debian's ld.so link is absolute).
    open_how how{};
    how.flags = O_RDONLY | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    auto fd = sys::openat2(mount_.get(), path, how);
    if (!fd) continue;
    for (ssize_t n; (n = ::read(fd->get(), buf.get(), kChunk)) > 0;) total += static_cast<size_t>(n);
  }
  return total;
}

Status attach_image_subtree(int image_root, const std::string& path, const std::string& target) {
  UniqueFd clone(::open_tree(image_root, path.c_str(),
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW));
  if (!clone) return fail_errno("clone " + path + " of the image");
  if (::move_mount(clone.get(), "", AT_FDCWD, target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return fail_errno("attach the image's " + path + " on " + target);
  return {};
}

}  // namespace airlock::sandbox
