// `airlock image build RECIPE`: mmdebstrap from the host's Debian mirror
// into a directory under the store's tmp/, the recipe's extra files, a
// cleanup of what would differ between two builds, the smoke command in
// fresh namespaces with no network, mkfs.erofs with a fixed timestamp and
// UUID, then the image and its manifest into the store. On any failure or
// interrupt nothing is added and the build directory is removed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "images/image_store.h"

namespace airlock::images {

// When neither --source-date-epoch nor $SOURCE_DATE_EPOCH says otherwise:
// 2025-01-01T00:00:00Z. A fixed value, so that two builds from the same
// packages are the same bytes.
inline constexpr int64_t kDefaultSourceDateEpoch = 1735689600;

struct BuildOptions {
  std::string recipe_path;
  int64_t source_date_epoch = kDefaultSourceDateEpoch;
  bool force = false;  // build even when the name already has this recipe digest
  std::function<void(std::string_view)> phase;   // one line per phase and tool message
  std::function<void(std::string_view)> detail;  // each line of a tool's output
  const std::atomic<bool>* interrupted = nullptr;
};

struct BuildResult {
  StoredImage image;
  std::string recipe_digest;
  bool reused = false;  // the name already had an image of this recipe digest
  double seconds = 0;
  uint64_t tree_bytes = 0;  // the root's size before compression
};

[[nodiscard]] Result<BuildResult> build_image(const ImageStore& store, const BuildOptions& options);

// The erofs UUID of an image built from a recipe: derived from its digest.
[[nodiscard]] std::string erofs_uuid(std::string_view recipe_digest);

}  // namespace airlock::images
