// The image a job's sandbox runs on, once chosen: its name and digests, and
// the image file in the store ("" for the built-in host image). Opening the
// file checks its sha256 against the digest, and mounts it for one sandbox.
//
// Verification cost: the sha256 of an image file is computed once per
// (device, inode, size, mtime, ctime) of the file and the answer kept in the
// state directory's cache (cache/image-verified/<hex>), so a 500 MB image is
// read once, not per job; any change to the file (rewrite, truncation, touch,
// replacement) changes the key and the file is hashed again. The check and
// the mount use the same open file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sandbox/host_image.h"
#include "sandbox/image_mount.h"

namespace airlock::jobs {

struct ImageSource {
  sandbox::ImageInfo info{"host", "", ""};  // digest "" until the host image is applied
  std::string blob_path;                    // "" = the host image
  bool pinned = false;                      // named by digest in the request
  std::map<std::string, std::string> env;   // the manifest's "env" (the recipe's environment)
  bool is_host() const { return blob_path.empty(); }
};

// The image's environment in a job's `env` (NAME=VALUE): it replaces the
// base variables of the same name, and the job's own --env (`job_vars`)
// replaces it.
void apply_image_env(const ImageSource& image,
                     const std::vector<std::pair<std::string, std::string>>& job_vars,
                     std::vector<std::string>& env);

// A refusal (the reason) when the open file's sha256 is not `digest`
// ("sha256:<hex>"), which also releases the machine's shared mount of that
// digest (it may have been made from this file before it changed); an Error
// only when airlock itself failed.
Result<std::optional<std::string>> check_image_file(int fd, const std::string& digest,
                                                    const std::string& cache_dir);

// Opens the image file and mounts it for one sandbox: an overlay of its own
// over the machine's shared mount of the image (sandbox/shared_image.h),
// which is made, after the file is checked (above), when there is none or
// the store's file changed since it was made. A refusal (missing,
// corrupt, not an image) is the Error's message, with err 0 for a refusal
// of the image and errno for airlock's own failure.
struct OpenedImage {
  std::optional<sandbox::ImageMount> mount;
  std::string refusal;  // set when the image itself is at fault
};
Result<OpenedImage> open_image(const ImageSource& image, const std::string& cache_dir);

}  // namespace airlock::jobs
