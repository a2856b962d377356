#include "images/image_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "images/build_dir.h"
#include "images/image_use.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"

namespace airlock::images {
namespace {

constexpr std::string_view kBlobSuffix = ".erofs";
constexpr size_t kNameFileLimit = 128;
constexpr size_t kManifestLimit = 16 << 20;

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// File names in a directory (no "." and ".."), sorted; a missing directory is empty.
Result<std::vector<std::string>> entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return names;
  if (ec) return fail_with("list " + dir, ec.value());
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return fail_with("list " + dir, ec.value());
    names.push_back(it->path().filename().string());
  }
  if (ec) return fail_with("list " + dir, ec.value());
  std::sort(names.begin(), names.end());
  return names;
}

Status unlink_if_present(const std::string& path) {
  if (::unlink(path.c_str()) < 0 && errno != ENOENT) return fail_errno("remove " + path);
  return {};
}

}  // namespace

Result<std::string> sha256_of_fd(int fd) {
  Sha256 hash;
  std::string buf(1 << 20, '\0');
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read");
    }
    if (n == 0) break;
    hash.update(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  return "sha256:" + hash.hex_digest();
}

ImageStore::ImageStore(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string ImageStore::default_root(const std::string& state_dir) { return state_dir + "/images"; }

std::string ImageStore::choose_root(const std::string& flag, const std::string& state_dir) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("AIRLOCK_IMAGE_DIR"); env && *env) return env;
  return default_root(state_dir);
}

std::string ImageStore::blob_path(std::string_view digest) const {
  return root_ + "/blobs/" + digest_hex(digest) + std::string(kBlobSuffix);
}
std::string ImageStore::manifest_path(std::string_view digest) const {
  return root_ + "/manifests/" + digest_hex(digest) + ".json";
}
std::string ImageStore::recipe_path(std::string_view recipe_digest) const {
  return root_ + "/recipes/" + digest_hex(recipe_digest);
}
std::string ImageStore::inuse_path(std::string_view digest) const {
  return root_ + "/inuse/" + digest_hex(digest) + ".lock";
}

Status ImageStore::create_layout() const {
  for (const char* dir : {"", "/blobs", "/manifests", "/names", "/inuse", "/recipes", "/tmp"})
    if (auto st = sys::make_dirs(root_ + dir, 0755); !st) return st;
  return {};
}

Result<UniqueFd> ImageStore::lock(StoreLock mode) const {
  std::string path = root_ + "/lock";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return fail_errno("open " + path);
  int op = mode == StoreLock::kExclusive ? LOCK_EX : LOCK_SH;
  while (::flock(fd.get(), op) < 0)
    if (errno != EINTR) return fail_errno("lock " + path);
  return fd;
}

Result<std::string> ImageStore::read_name(std::string_view name) const {
  std::string path = root_ + "/names/" + std::string(name);
  auto text = sys::read_file(path, kNameFileLimit);
  if (!text) {
    if (text.error().err == ENOENT)
      return fail("unknown image " + in_quotes(name) + " (no such name in the store " + root_ +
                  ")");
    return fail_with("read " + path, text.error().err);
  }
  std::string digest = *text;
  if (!digest.empty() && digest.back() == '\n') digest.pop_back();
  if (!is_image_digest(digest))
    return fail("image " + in_quotes(name) + ": the store's name file " + path +
                " is corrupt (not one 'sha256:<hex>' line)");
  return digest;
}

Result<StoredImage> ImageStore::describe(std::string name, std::string digest) const {
  StoredImage image;
  image.name = std::move(name);
  image.digest = std::move(digest);
  image.blob_path = blob_path(image.digest);
  std::string label =
      image.name.empty() ? image.digest : in_quotes(image.name) + " (" + image.digest + ")";
  struct stat st {};
  if (::lstat(image.blob_path.c_str(), &st) < 0) {
    if (errno == ENOENT) return fail("image " + label + ": its blob is missing from the store");
    return fail_errno("stat " + image.blob_path);
  }
  if (!S_ISREG(st.st_mode)) return fail("image " + label + ": its blob is not a regular file");
  image.size = static_cast<uint64_t>(st.st_size);
  auto manifest = sys::read_file(manifest_path(image.digest), kManifestLimit);
  if (!manifest) {
    if (manifest.error().err == ENOENT)
      return fail("image " + label + ": its manifest is missing from the store");
    return fail_with("read " + manifest_path(image.digest), manifest.error().err);
  }
  image.manifest_digest = "sha256:" + Sha256::of(*manifest);
  return image;
}

Result<StoredImage> ImageStore::resolve(const ImageRef& ref) const {
  if (auto st = check_image_name(ref.name); !st) return std::unexpected(st.error());
  if (ref.name == kHostImage)
    return fail("'host' is the machine's own /usr, not an image in the store");
  if (!ref.digest.empty() && !is_image_digest(ref.digest))
    return fail("image digest " + in_quotes(ref.digest) + " is not 'sha256:' and 64 hex digits");
  auto digest = read_name(ref.name);
  if (!digest) return std::unexpected(digest.error());
  if (!ref.digest.empty() && ref.digest != *digest)
    return fail("image " + in_quotes(format_image_ref(ref)) + ": the name means " + *digest +
                " now; the pinned digest is not that image");
  return describe(ref.name, *digest);
}

Status ImageStore::verify(const StoredImage& image) const {
  UniqueFd fd(::open(image.blob_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return fail_errno("open " + image.blob_path);
  auto actual = sha256_of_fd(fd.get());
  if (!actual) return fail_with("read " + image.blob_path, actual.error().err);
  if (*actual != image.digest)
    return fail("image " + in_quotes(image.name.empty() ? image.digest : image.name) +
                " is corrupt: " + image.blob_path + " hashes to " + *actual +
                ", not to its digest " + image.digest);
  return {};
}

Result<std::vector<StoredImage>> ImageStore::list() const {
  auto names = entries(root_ + "/names");
  if (!names) return std::unexpected(names.error());
  std::vector<StoredImage> images;
  for (const std::string& name : *names) {
    if (!check_image_name(name) || name == kHostImage) continue;  // temporaries, strays
    auto digest = read_name(name);
    if (!digest) return std::unexpected(digest.error());
    auto image = describe(name, *digest);
    if (!image) return std::unexpected(image.error());
    images.push_back(std::move(*image));
  }
  return images;
}

Result<std::vector<std::string>> ImageStore::named_digests() const {
  auto names = entries(root_ + "/names");
  if (!names) return std::unexpected(names.error());
  std::vector<std::string> digests;
  for (const std::string& name : *names) {
    if (!check_image_name(name)) continue;
    auto digest = read_name(name);
    if (!digest) return std::unexpected(digest.error());
    digests.push_back(std::move(*digest));
  }
  return digests;
}

Result<std::vector<StoredImage>> ImageStore::unnamed() const {
  auto named = named_digests();
  if (!named) return std::unexpected(named.error());
  auto blobs = entries(root_ + "/blobs");
  if (!blobs) return std::unexpected(blobs.error());
  std::vector<StoredImage> out;
  for (const std::string& file : *blobs) {
    if (!file.ends_with(kBlobSuffix)) continue;
    std::string digest = "sha256:" + file.substr(0, file.size() - kBlobSuffix.size());
    if (!is_image_digest(digest)) continue;
    if (std::find(named->begin(), named->end(), digest) != named->end()) continue;
    StoredImage image;
    image.digest = digest;
    image.blob_path = blob_path(digest);
    struct stat st {};
    if (::lstat(image.blob_path.c_str(), &st) == 0) image.size = static_cast<uint64_t>(st.st_size);
    if (auto manifest = sys::read_file(manifest_path(digest), kManifestLimit))
      image.manifest_digest = "sha256:" + Sha256::of(*manifest);
    out.push_back(std::move(image));
  }
  return out;
}

Result<std::string> ImageStore::read_manifest(const StoredImage& image) const {
  return sys::read_file(manifest_path(image.digest), kManifestLimit);
}

Result<StoredImage> ImageStore::add(std::string_view name, const std::string& image_file,
                                    nlohmann::json manifest) const {
  if (auto st = check_image_name(name); !st) return std::unexpected(st.error());
  if (name == kHostImage) return fail("'host' is reserved for the machine's own /usr");
  if (auto st = create_layout(); !st) return std::unexpected(st.error());
  auto held = lock(StoreLock::kExclusive);
  if (!held) return std::unexpected(held.error());

  UniqueFd fd(::open(image_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return fail_errno("open " + image_file);
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return fail_errno("stat " + image_file);
  if (!S_ISREG(st.st_mode)) return fail(image_file + " is not a regular file");
  auto digest = sha256_of_fd(fd.get());
  if (!digest) return fail_with("read " + image_file, digest.error().err);

  // The same content is already stored: keep its manifest (records name its
  // digest) and drop the new file.
  std::string blob = blob_path(*digest);
  if (::access(blob.c_str(), F_OK) == 0 && ::access(manifest_path(*digest).c_str(), F_OK) == 0) {
    if (auto s = unlink_if_present(image_file); !s) return std::unexpected(s.error());
  } else {
    manifest["digest"] = *digest;
    manifest["size"] = static_cast<uint64_t>(st.st_size);
    std::string manifest_text = manifest.dump(2) + "\n";
    if (auto s = sys::write_file_atomic(manifest_path(*digest), manifest_text, 0444); !s)
      return std::unexpected(s.error());
    if (::fchmod(fd.get(), 0444) < 0) return fail_errno("chmod " + image_file);
    if (::rename(image_file.c_str(), blob.c_str()) < 0)
      return fail_errno("move " + image_file + " to " + blob);
  }
  // Which image this recipe digest became (the manifest kept may name an
  // earlier recipe digest that gave the same bytes).
  std::string recipe = manifest.value("recipe_digest", "");
  if (is_image_digest(recipe))
    if (auto s = sys::write_file_atomic(recipe_path(recipe), *digest + "\n", 0644); !s)
      return std::unexpected(s.error());
  if (auto s = sys::write_file_atomic(root_ + "/names/" + std::string(name), *digest + "\n", 0644);
      !s)
    return std::unexpected(s.error());
  return describe(std::string(name), *digest);
}

Result<StoredImage> ImageStore::built_from(std::string_view name,
                                           std::string_view recipe_digest) const {
  auto image = resolve({std::string(name), ""});
  if (!image) return image;
  auto built = sys::read_file(recipe_path(recipe_digest), kNameFileLimit);
  if (!built || *built != image->digest + "\n")
    return fail("image '" + std::string(name) + "' was not built from recipe " +
                std::string(recipe_digest));
  return image;
}

Result<RemoveReport> ImageStore::remove(std::string_view name) const {
  if (auto st = check_image_name(name); !st) return std::unexpected(st.error());
  if (name == kHostImage)
    return fail("'host' is the machine's own /usr: there is nothing to remove");
  if (auto known = read_name(name); !known) return std::unexpected(known.error());
  auto held = lock(StoreLock::kExclusive);
  if (!held) return std::unexpected(held.error());
  auto digest = read_name(name);
  if (!digest) return std::unexpected(digest.error());
  RemoveReport report;
  report.image.name = std::string(name);
  report.image.digest = *digest;
  report.image.blob_path = blob_path(*digest);
  if (auto image = describe(std::string(name), *digest)) report.image = *image;

  auto claim = claim_unused(*this, *digest);
  if (!claim)
    return fail("image " + in_quotes(name) + " is in use, not removed: " + claim.error().what);
  auto named = named_digests();
  if (!named) return std::unexpected(named.error());
  bool shared = std::count(named->begin(), named->end(), *digest) > 1;
  if (auto s = unlink_if_present(root_ + "/names/" + std::string(name)); !s)
    return std::unexpected(s.error());
  if (!shared) {
    for (const std::string& path :
         {blob_path(*digest), manifest_path(*digest), inuse_path(*digest)})
      if (auto s = unlink_if_present(path); !s) return std::unexpected(s.error());
    report.blob_removed = true;
  }
  return report;
}

Result<GcReport> ImageStore::gc() const {
  if (::access(root_.c_str(), F_OK) < 0 && errno == ENOENT)
    return GcReport{};  // no store: nothing to do
  if (auto st = create_layout(); !st) return std::unexpected(st.error());
  auto held = lock(StoreLock::kExclusive);
  if (!held) return std::unexpected(held.error());
  GcReport report;
  auto candidates = unnamed();
  if (!candidates) return std::unexpected(candidates.error());
  for (StoredImage& image : *candidates) {
    auto claim = claim_unused(*this, image.digest);
    if (!claim) {
      report.kept.push_back({image.digest, claim.error().what});
      continue;
    }
    for (const std::string& path :
         {blob_path(image.digest), manifest_path(image.digest), inuse_path(image.digest)})
      if (auto s = unlink_if_present(path); !s) return std::unexpected(s.error());
    report.freed_bytes += image.size;
    report.removed.push_back(std::move(image));
  }
  // Manifests and lock files whose blob is gone (a crash between two unlinks).
  for (const char* dir : {"/manifests", "/inuse"}) {
    auto files = entries(root_ + dir);
    if (!files) return std::unexpected(files.error());
    for (const std::string& file : *files) {
      size_t dot = file.find('.');
      std::string digest = "sha256:" + file.substr(0, dot);
      if (!is_image_digest(digest) || ::access(blob_path(digest).c_str(), F_OK) == 0) continue;
      if (std::string_view(dir) == "/inuse" && !claim_unused(*this, digest)) continue;
      if (auto s = unlink_if_present(root_ + dir + "/" + file); !s)
        return std::unexpected(s.error());
    }
  }
  // Recipe digests whose image is gone.
  auto recipes = entries(root_ + "/recipes");
  if (!recipes) return std::unexpected(recipes.error());
  for (const std::string& file : *recipes) {
    auto built = sys::read_file(root_ + "/recipes/" + file, kNameFileLimit);
    std::string digest = built ? built->substr(0, built->find('\n')) : "";
    if (is_image_digest(digest) && ::access(blob_path(digest).c_str(), F_OK) == 0) continue;
    if (auto s = unlink_if_present(root_ + "/recipes/" + file); !s)
      return std::unexpected(s.error());
  }
  // Builds in progress hold flock on their tmp/ directory; the others are leftovers.
  auto builds = entries(tmp_dir());
  if (!builds) return std::unexpected(builds.error());
  for (const std::string& entry : *builds) {
    std::string path = tmp_dir() + "/" + entry;
    UniqueFd dir(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (dir && ::flock(dir.get(), LOCK_EX | LOCK_NB) < 0) continue;  // a build is running
    if (auto s = remove_build_dir(path); !s) return std::unexpected(s.error());
    ++report.stale_builds;
  }
  return report;
}

}  // namespace airlock::images
