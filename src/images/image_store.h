// The image store: content-addressed erofs images with their manifests and
// the names that point at them (IMAGES-CONTRACT.md, docs/images.md).
//
//   <root>/blobs/<hex>.erofs      the image, 0444; <hex> = sha256 of the file
//   <root>/manifests/<hex>.json   its manifest
//   <root>/names/<name>           "sha256:<hex>\n": what the name means now
//   <root>/inuse/<hex>.lock       users hold flock(LOCK_SH) while they use it
//   <root>/recipes/<recipe hex>   "sha256:<hex>\n": the image a recipe digest was built into
//   <root>/tmp/                   builds in progress
//   <root>/lock                   flock(LOCK_EX) for add / rm / gc
//
// Readers (resolve, list, verify) take no lock: every file is written to a
// temporary sibling and renamed into place, so a reader sees the old file or
// the new one, never a part.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "images/image_ref.h"

namespace airlock::images {

struct StoredImage {
  std::string name;             // "" for a blob no name points to
  std::string digest;           // "sha256:<hex>" of the blob
  std::string manifest_digest;  // "sha256:<hex>" of the manifest file
  std::string blob_path;
  uint64_t size = 0;
};

struct RemoveReport {
  StoredImage image;          // what the name meant
  bool blob_removed = false;  // false when another name still points to it
};

struct GcReport {
  struct Kept {
    std::string digest;
    std::string reason;  // who holds it
  };
  std::vector<StoredImage> removed;  // blobs no name pointed to and nobody held
  std::vector<Kept> kept;            // unnamed but in use
  uint64_t freed_bytes = 0;
  int stale_builds = 0;  // tmp/ entries of builds that are no longer running
};

enum class StoreLock { kShared, kExclusive };

class ImageStore {
 public:
  explicit ImageStore(std::string root);

  // <state_dir>/images.
  static std::string default_root(const std::string& state_dir);
  // `flag` (--image-dir) if given, else $AIRLOCK_IMAGE_DIR, else default_root.
  static std::string choose_root(const std::string& flag, const std::string& state_dir);

  const std::string& root() const { return root_; }
  std::string blob_path(std::string_view digest) const;
  std::string manifest_path(std::string_view digest) const;
  std::string inuse_path(std::string_view digest) const;
  std::string recipe_path(std::string_view recipe_digest) const;
  std::string tmp_dir() const { return root_ + "/tmp"; }

  // Creates the directories of the layout (root-owned, 0755).
  [[nodiscard]] Status create_layout() const;
  // flock on <root>/lock (the root must exist); held until the fd closes.
  [[nodiscard]] Result<UniqueFd> lock(StoreLock mode) const;

  // The image a reference means: a name's current digest, or a pinned digest
  // that must be the name's current one. Errors: unknown name, the name "host"
  // (not a stored image), a pinned digest the name does not mean, a blob or
  // manifest missing from the store. Does not hash the blob: see verify.
  [[nodiscard]] Result<StoredImage> resolve(const ImageRef& ref) const;
  // The blob's sha256 is its digest (reads the whole file).
  [[nodiscard]] Status verify(const StoredImage& image) const;
  // Every name, sorted.
  [[nodiscard]] Result<std::vector<StoredImage>> list() const;
  // Blobs no name points to (what gc would consider).
  [[nodiscard]] Result<std::vector<StoredImage>> unnamed() const;
  [[nodiscard]] Result<std::string> read_manifest(const StoredImage& image) const;
  // The name's image, if it is the one `recipe_digest` was built into (a
  // build of that recipe can be skipped); an error otherwise.
  [[nodiscard]] Result<StoredImage> built_from(std::string_view name,
                                               std::string_view recipe_digest) const;

  // Moves `image_file` (a file under tmp/, same filesystem) into blobs/ under
  // its sha256, writes the manifest (with "digest" and "size" filled in),
  // records which image the manifest's "recipe_digest" became and points
  // `name` at it. The file is consumed on success.
  [[nodiscard]] Result<StoredImage> add(std::string_view name, const std::string& image_file,
                                        nlohmann::json manifest) const;
  // Removes a name, and its blob when no other name points to it. Refuses an
  // image in use (someone holds its in-use lock), saying who.
  [[nodiscard]] Result<RemoveReport> remove(std::string_view name) const;
  // Removes blobs (and their manifests and lock files) that no name points to
  // and nobody holds, and leftovers of builds that are no longer running.
  [[nodiscard]] Result<GcReport> gc() const;

 private:
  Result<StoredImage> describe(std::string name, std::string digest) const;
  Result<std::string> read_name(std::string_view name) const;
  Result<std::vector<std::string>> named_digests() const;

  std::string root_;
};

// "sha256:<hex>" of everything readable from `fd` (from its current offset).
[[nodiscard]] Result<std::string> sha256_of_fd(int fd);

}  // namespace airlock::images
