// The files of a live session's /workspace, seen from the host: upload,
// list, download and delete by relative path while the sandboxed code may be
// changing the same tree. The tree is the sandbox's, so nothing in it is
// followed: every path is resolved beneath the root with openat2 (no
// symlinks, no "..", no other mounts), and names are checked with
// check_relative_path() before anything is touched.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "workspace/manifest.h"

namespace airlock::workspace {

struct FileError {
  // bad_path, not_found, not_a_file, not_a_directory, too_large, type_not_allowed, internal
  std::string code;
  std::string message;
};
template <class T>
using FileResult = std::expected<T, FileError>;

struct LiveEntry {
  std::string name;  // printable() form
  std::string kind;  // file, directory, symlink, other
  uint64_t size = 0;
  int64_t modified_s = 0;  // mtime, seconds since the epoch
};

// Writes the bytes of `source_fd` (read from its start) to `path` beneath
// `root_fd`: missing directories are made, an existing file (or symlink) of
// that name is replaced atomically (rename), never written through. The new
// file and directories belong to uid:gid, mode 0644 / 0755. Returns its sha256.
FileResult<std::string> put_file(int root_fd, const std::string& path, int source_fd, uid_t uid, gid_t gid);

// The entries of directory `path` ("" for the root), sorted by name; at most
// `max_entries` (then `truncated`).
struct Listing {
  std::vector<LiveEntry> entries;
  bool truncated = false;
};
FileResult<Listing> list_dir(int root_fd, const std::string& path, size_t max_entries = 10'000);

// Reads the regular file at `path` through the output policy: at most
// policy.max_file_bytes, its detected type among policy.allowed. The bytes
// are copied once, hashed as they cross, into an unlinked file in `copy_dir`
// (on the host, out of the sandbox's reach), which is checked and handed back
// open at its start: the caller sends it from there, and nothing is held in
// memory (the type is detected on a mapping of the copy, unmapped at once).
struct Downloaded {
  UniqueFd copy;
  uint64_t size = 0;
  std::string sha256, type;
};
FileResult<Downloaded> read_checked(int root_fd, const std::string& path, const OutputPolicy& policy,
                                    const std::string& copy_dir);

// Removes the file, symlink or directory (with everything in it) at `path`.
FileResult<void> remove_path(int root_fd, const std::string& path);

}  // namespace airlock::workspace
