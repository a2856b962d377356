// A build's directory under the store's tmp/: made unique, locked while the
// build runs (gc leaves a locked one alone), removed afterwards, and never
// removed while something is mounted beneath it (a mounted host tree would
// be removed with it).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::images {

class BuildDir {
 public:
  // tmp_dir/<prefix>-XXXXXX, locked (flock LOCK_EX on the directory).
  [[nodiscard]] static Result<BuildDir> create(const std::string& tmp_dir,
                                               const std::string& prefix);
  BuildDir(BuildDir&& other) noexcept
      : path_(std::exchange(other.path_, {})), lock_(std::move(other.lock_)) {}
  BuildDir& operator=(BuildDir&&) = delete;
  ~BuildDir();

  const std::string& path() const { return path_; }
  // Removes it now; the error says why it could not.
  [[nodiscard]] Status remove();

 private:
  BuildDir(std::string path, UniqueFd lock) : path_(std::move(path)), lock_(std::move(lock)) {}
  std::string path_;
  UniqueFd lock_;
};

// Mount points at or beneath `path` in /proc/self/mountinfo text. Pure.
[[nodiscard]] std::vector<std::string> mounts_beneath(std::string_view mountinfo,
                                                      std::string_view path);

// Removes a build directory, refusing while anything is mounted beneath it.
[[nodiscard]] Status remove_build_dir(const std::string& path);

}  // namespace airlock::images
