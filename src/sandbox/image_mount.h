// A sandbox's mount of a read-only filesystem image, made on the host side
// with the new mount API and held as a detached mount: it belongs to no
// mount namespace until a sandbox child attaches (parts of) it. Two kinds:
//  - mount_file/mount_fd: the image file itself as erofs (file-backed, no
//    loop device), a superblock of its own. The machine's shared mount of an
//    image is one of these (sandbox/shared_image.h). Where the kernel cannot
//    read the file directly (ENOTBLK: a file on tmpfs, or a kernel without
//    file-backed erofs), the same open file is put on a loop device of the
//    mount's own, which the kernel clears when the mount goes.
//  - overlay_over: what a sandbox gets, a read-only overlayfs of its own over
//    that shared mount. Its inodes are the overlay's, so two sandboxes on one
//    image share no inode: an inotify watch, a lock or a lease in one is not
//    seen by the other. The page cache is the shared mount's: the loader and
//    libc are read from the image once per machine, not once per sandbox.
// Layers and image files are passed to the kernel as /proc/self/fd/N, so the
// sandbox's mountinfo names those, never a host path. Closing the fd frees
// the mount once no sandbox has it attached.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::sandbox {

enum class ImageMountFailure {
  kOpenFile,    // the image file cannot be opened
  kNotAnImage,  // the kernel refused it as erofs (not erofs, or corrupt)
  kMountApi,    // fsopen/fsmount/open_tree failed (kernel without erofs, ...)
};
std::string_view image_mount_failure_name(ImageMountFailure kind);

struct ImageMountError {
  ImageMountFailure kind;
  Error error;
};

template <class T>
using ImageMountResult = std::expected<T, ImageMountError>;

// Attaches a clone of the subtree `path` of the detached image mount
// `image_root` over `target` in this process's mount namespace (which the
// caller made private): the preloaded interpreter of an image sees the
// image's /usr and /etc in place of the host's.
Status attach_image_subtree(int image_root, const std::string& path, const std::string& target);

class ImageMount {
 public:
  // Opens `image_file` (O_RDONLY, no symlink at the last component) and
  // mounts it read-only, nosuid, nodev.
  static ImageMountResult<ImageMount> mount_file(const std::string& image_file);
  // The same from an open image file (its offset and flags do not matter).
  static ImageMountResult<ImageMount> mount_fd(int image_fd);
  // A read-only overlay whose only content is the directory `image_root`
  // (the root of a mounted image); `empty_layer` is an empty directory, the
  // second lower layer an overlay without an upper layer needs.
  static ImageMountResult<ImageMount> overlay_over(int image_root, int empty_layer);

  int fd() const { return mount_.get(); }  // the detached mount (root of the image)

  // A detached copy of the subtree `path` (relative, inside the image; no
  // symlink is followed at its last component): what a sandbox attaches as
  // its /usr. The mount's root in mountinfo is then "/usr", a path inside
  // the image.
  Result<UniqueFd> clone_subtree(const std::string& path) const;

  // Reads what every dynamically linked program of a Debian image loads
  // first (kLoaderFiles) through this mount, so that the page cache holds
  // them decompressed before a job execs. Used by the warm pool's refills,
  // off the job's path. Best effort: a file the image lacks is skipped.
  // Returns the bytes read.
  size_t prefetch_loader() const;

 private:
  explicit ImageMount(UniqueFd mount) : mount_(std::move(mount)) {}
  UniqueFd mount_;
};

}  // namespace airlock::sandbox
