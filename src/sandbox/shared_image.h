// The machine's one mount of each stored image, shared by every sandbox on
// it: /run/airlock/images/<hex>, the image file as read-only erofs, made by
// the first sandbox that needs the image (after its file was checked against
// the digest) and kept until `airlock image rm`, `gc` or `release` (or a
// reboot: /run is a tmpfs). A sandbox never attaches it: it gets an overlay
// of its own over it (ImageMount::overlay_over), so the page cache is shared
// and the inodes are not (docs/security.md, "Images").
//
// Why a mount that outlives the process: a superblock made per sandbox reads
// the loader and libc into its own page cache for every job (~1.3 ms of a
// cold start) and registers and removes a backing device each time; a
// detached mount held by one process would serve only that process, not the
// next `airlock run`.
//
// Next to each mount, <hex>.file holds the identity of the store's file it
// was made from (device, inode, size, mtime, ctime: the caller's key). When
// the store's file no longer has it (replaced, touched, removed), the caller
// checks the file again and mount() replaces the mount.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sandbox/image_mount.h"

namespace airlock::sandbox {

inline constexpr const char* kSharedImageDir = "/run/airlock/images";

// The root of the shared mount of image `hex` (O_PATH) when it is mounted
// and was made from the file whose identity is `file_key`; nullopt when the
// caller must check the file and mount it.
Result<std::optional<UniqueFd>> find_shared_image(const std::string& hex, const std::string& file_key);

// Mounts the open image file `image_fd` (already checked against `hex`) as
// the shared mount of `hex`, replacing one made from another file, and
// returns its root (O_PATH). kNotAnImage when the kernel refuses the file.
ImageMountResult<UniqueFd> mount_shared_image(const std::string& hex, int image_fd,
                                              const std::string& file_key);

// A sandbox's own overlay over the shared mount's root `shared_root`.
ImageMountResult<ImageMount> overlay_shared_image(int shared_root);

// In a private mount namespace made as a copy of the host's (the preloaded
// interpreter's): detaches this namespace's copies of the shared mounts, so
// that it does not keep an image's superblock and file after the host
// released them. The host's mounts and files are untouched.
Status detach_shared_image_copies();

// Detaches the shared mount of `hex` (sandboxes running on it keep theirs:
// an overlay holds its layer) and removes its files. Nothing to do is fine.
Status release_shared_image(const std::string& hex);
// The same for every image; returns how many mounts were released.
Result<int> release_shared_images();

}  // namespace airlock::sandbox
