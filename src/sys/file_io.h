// Whole-file and whole-buffer I/O with errors as values; retries EINTR and
// short reads/writes.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::sys {

Status write_all(int fd, std::string_view data);
// Reads until EOF, failing if more than `limit` bytes arrive.
Result<std::string> read_all(int fd, size_t limit = 64 << 20);
Result<std::string> read_file(const std::string& path, size_t limit = 64 << 20);
// Writes (truncating) `path`; for kernel interface files such as cgroup knobs.
Status write_file(const std::string& path, std::string_view data);
// Creates `path` and any missing parents (like mkdir -p).
Status make_dirs(const std::string& path, int mode = 0755);
// Writes to a temporary sibling and renames it over `path`: never a partial file.
Status write_file_atomic(const std::string& path, std::string_view data, int mode = 0644);

// Whether two stat results describe the same file (device and inode): what
// was opened is what was looked at, not something swapped in between.
inline bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace airlock::sys
