#include "sandbox/image_mount.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <linux/mount.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstring>
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

namespace {

// An erofs superblock from `source` (a /proc/self/fd/N name: of the image
// file, or of a loop device over it), mounted read-only, nosuid, nodev.
ImageMountResult<UniqueFd> mount_erofs(const std::string& source) {
  UniqueFd fs(::fsopen("erofs", FSOPEN_CLOEXEC));
  if (!fs) return failed(ImageMountFailure::kMountApi, "fsopen erofs");
  // "ro": the superblock is read-only from the start, so a loop device is
  // opened for reading only (a read-only one refuses a writer with EACCES).
  if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "source", source.c_str(), 0) < 0 ||
      ::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "ro", nullptr, 0) < 0)
    return failed(ImageMountFailure::kMountApi, "configure the image's source");
  if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
    return failed(ImageMountFailure::kNotAnImage, "mount the image (erofs)");
  UniqueFd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC,
                         MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
  if (!mnt) return failed(ImageMountFailure::kMountApi, "fsmount the image");
  return mnt;
}

// A loop device of its own over the open image file: read-only, and cleared
// by the kernel once its last user is gone (LO_FLAGS_AUTOCLEAR), so the
// mount made from it owns it and nothing is left behind when that mount goes.
Result<UniqueFd> attach_loop_device(int image_fd) {
  UniqueFd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (!control) return fail_errno("open /dev/loop-control");
  // Another process may take the free device between the two calls: the
  // configure then answers EBUSY and the next free one is tried.
  for (int attempt = 0; attempt < 8; ++attempt) {
    int n = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (n < 0) return fail_errno("find a free loop device");
    std::string path = "/dev/loop" + std::to_string(n);
    UniqueFd device(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!device) return fail_errno("open " + path);
    loop_config config{};
    config.fd = static_cast<uint32_t>(image_fd);
    config.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
    if (::ioctl(device.get(), LOOP_CONFIGURE, &config) == 0) return device;
    if (errno != EBUSY) return fail_errno("set up " + path + " over the image");
  }
  return fail_with("no loop device stayed free to set up over the image", EBUSY);
}

}  // namespace

ImageMountResult<ImageMount> ImageMount::mount_fd(int image_fd) {
  // The kernel opens the source by this name in our own fd table; the name is
  // what mountinfo shows.
  auto mounted = mount_erofs("/proc/self/fd/" + std::to_string(image_fd));
  if (mounted) return ImageMount(std::move(*mounted));
  // ENOTBLK: erofs cannot read this file directly. A kernel without
  // file-backed erofs (before 6.12, or built without
  // CONFIG_EROFS_FS_BACKED_BY_FILE) answers so for every file; a newer one for
  // a file whose filesystem gives erofs no page reads, tmpfs among them (a
  // store on /tmp of a fresh machine). The same open file goes on a loop
  // device and is mounted from there: the file checked is still the file
  // mounted.
  const ImageMountError& direct = mounted.error();
  if (direct.kind != ImageMountFailure::kNotAnImage || direct.error.err != ENOTBLK)
    return std::unexpected(direct);
  auto device = attach_loop_device(image_fd);
  if (!device) {
    std::string what = "mount the image (erofs): the kernel cannot read it file-backed (" +
                       std::string(std::strerror(ENOTBLK)) +
                       ") and no loop device: " + device.error().what;
    return std::unexpected(
        ImageMountError{ImageMountFailure::kMountApi, Error{what, device.error().err}});
  }
  auto from_device = mount_erofs("/proc/self/fd/" + std::to_string(device->get()));
  if (!from_device) return std::unexpected(from_device.error());
  return ImageMount(std::move(*from_device));  // the mount holds the device; our fd goes
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
