#include "jobs/image_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "base/sha256.h"
#include "sandbox/shared_image.h"
#include "sys/file_io.h"

namespace airlock::jobs {
namespace {

constexpr std::string_view kPrefix = "sha256:";

std::string file_key(const struct stat& st) {
  auto ts = [](const timespec& t) {
    return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec);
  };
  return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " +
         std::to_string(st.st_size) + " " + ts(st.st_mtim) + " " + ts(st.st_ctim);
}

Result<std::string> hash_fd(int fd) {
  Sha256 sha;
  std::string buf(1 << 20, '\0');
  for (off_t at = 0;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read the image file");
    if (n == 0) break;
    sha.update(std::string_view(buf.data(), static_cast<size_t>(n)));
    at += n;
  }
  return sha.hex_digest();
}

// The hex part of "sha256:<64 chars>".
Result<std::string> digest_hex(const std::string& digest) {
  if (digest.rfind(kPrefix, 0) != 0 || digest.size() != kPrefix.size() + 64)
    return fail("not an image digest: " + digest);
  return digest.substr(kPrefix.size());
}

}  // namespace

void apply_image_env(const ImageSource& image,
                     const std::vector<std::pair<std::string, std::string>>& job_vars,
                     std::vector<std::string>& env) {
  for (const auto& [name, value] : image.env) {
    if (std::any_of(job_vars.begin(), job_vars.end(),
                    [&](const auto& v) { return v.first == name; }))
      continue;
    std::string entry = name + "=" + value;
    auto same = [&](const std::string& e) {
      return e.compare(0, name.size() + 1, name + "=") == 0;
    };
    if (auto it = std::find_if(env.begin(), env.end(), same); it != env.end())
      *it = entry;
    else
      env.push_back(entry);
  }
}

Result<std::optional<std::string>> check_image_file(int fd, const std::string& digest,
                                                    const std::string& cache_dir) {
  auto hex_of = digest_hex(digest);
  if (!hex_of) return std::unexpected(hex_of.error());
  const std::string& hex = *hex_of;
  struct stat st {};
  if (::fstat(fd, &st) < 0) return fail_errno("stat the image file");
  if (!S_ISREG(st.st_mode))
    return std::optional<std::string>("the image file is not a regular file");
  const std::string key = file_key(st);
  const std::string dir = cache_dir + "/image-verified";
  const std::string cached = dir + "/" + hex;
  if (!cache_dir.empty())
    if (auto seen = sys::read_file(cached, 4096); seen && *seen == key)
      return std::optional<std::string>();
  auto actual = hash_fd(fd);
  if (!actual) return std::unexpected(actual.error());
  if (*actual != hex) {
    // The machine's mount of this image may have been made from this file
    // before it changed: no sandbox gets it any more.
    (void)sandbox::release_shared_image(hex);
    return std::optional<std::string>("image is corrupt: its sha256 is " + *actual + ", not " +
                                      hex);
  }
  // Only inside a cache directory that exists: making it here would make the
  // state directory above it too, with a mode the sandbox cannot pass through
  // (jobs/state_dir.cc makes both; the first job then just hashes again).
  struct stat cache_st {};
  if (!cache_dir.empty() && ::stat(cache_dir.c_str(), &cache_st) == 0 && sys::make_dirs(dir, 0700))
    (void)sys::write_file_atomic(cached, key, 0600);  // a lost cache entry only costs a rehash
  return std::optional<std::string>();
}

Result<OpenedImage> open_image(const ImageSource& image, const std::string& cache_dir) {
  OpenedImage opened;
  const std::string& digest = image.info.digest;
  auto hex_of = digest_hex(digest);
  if (!hex_of) return std::unexpected(hex_of.error());
  const std::string& hex = *hex_of;
  UniqueFd file(::open(image.blob_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!file) {
    if (errno == ENOENT) {
      opened.refusal = "image " + image.info.name + " (" + digest + ") is missing from the store";
      return opened;
    }
    return fail_errno("open the image file " + image.blob_path);
  }
  struct stat st {};
  if (::fstat(file.get(), &st) < 0) return fail_errno("stat the image file");
  const std::string key = file_key(st);
  // The machine's mount of this image, when it was made from this very file
  // as it is now; else the file is checked and mounted anew.
  auto shared = sandbox::find_shared_image(hex, key);
  if (!shared) return std::unexpected(shared.error());
  if (!*shared) {
    auto refusal = check_image_file(file.get(), digest, cache_dir);
    if (!refusal) return std::unexpected(refusal.error());
    if (*refusal) {
      opened.refusal = "image " + image.info.name + ": " + **refusal;
      return opened;
    }
    auto made = sandbox::mount_shared_image(hex, file.get(), key);
    if (!made) {
      if (made.error().kind == sandbox::ImageMountFailure::kNotAnImage) {
        opened.refusal = "image " + image.info.name + " is not a mountable erofs image (" +
                         made.error().error.message() + ")";
        return opened;
      }
      return std::unexpected(made.error().error);
    }
    shared->emplace(std::move(*made));
  }
  auto mount = sandbox::overlay_shared_image((*shared)->get());
  if (!mount) return std::unexpected(mount.error().error);
  opened.mount.emplace(std::move(*mount));
  return opened;
}

}  // namespace airlock::jobs
