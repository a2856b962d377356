// The manifest of a workspace snapshot: every directory, regular file and
// symlink of the tree, with permission bits, file sizes and sha256, symlink
// targets as text. Pure: no files are touched here. Format and digest are
// described in docs/snapshots.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::workspace {

enum class SnapshotKind { kDir, kFile, kSymlink };
std::string_view to_string(SnapshotKind kind);  // "dir", "file", "symlink"

struct SnapshotEntry {
  std::string path;  // relative, passes check_relative_path
  SnapshotKind kind = SnapshotKind::kFile;
  uint32_t mode = 0;   // permission bits only (0777 mask); 0 for symlinks
  uint64_t size = 0;   // files
  std::string sha256;  // files: 64 lower-case hex
  std::string target;  // symlinks: 1..4095 printable ASCII bytes, never followed
};

// The order of entries in a manifest: by path, component by component, so a
// directory's whole subtree follows it directly ("a", "a/b", "a-c").
bool snapshot_path_less(std::string_view a, std::string_view b);

// Why a symlink target cannot be recorded, or nullopt.
std::optional<std::string> check_symlink_target(std::string_view target);

class SnapshotManifest {
 public:
  static constexpr size_t kMaxEntries = 1'000'000;
  static constexpr size_t kMaxJsonBytes = 256ull << 20;

  SnapshotManifest() = default;  // the empty tree

  // Sorts the entries and checks them: valid paths and fields, no
  // duplicates, every parent a directory listed too, at most kMaxEntries.
  static Result<SnapshotManifest> from_entries(std::vector<SnapshotEntry> entries);
  // Parses a manifest from untrusted or stored text, strictly: exactly the
  // canonical fields, right types, entries in canonical order. Errors name
  // the entry: `entry 3 ("a/b"): mode "0x1" is not 4 octal digits`.
  static Result<SnapshotManifest> from_json(std::string_view text);

  const std::vector<SnapshotEntry>& entries() const { return entries_; }
  // Canonical JSON: compact, keys sorted, entries in snapshot_path_less order.
  std::string to_json() const;
  // "sha256:" + hex sha256 of to_json().
  std::string digest() const;
  uint64_t total_bytes() const;  // sum of file sizes
  // The distinct sha256 of the files, sorted.
  std::vector<std::string> contents() const;

 private:
  explicit SnapshotManifest(std::vector<SnapshotEntry> entries) : entries_(std::move(entries)) {}
  std::vector<SnapshotEntry> entries_;
};

}  // namespace airlock::workspace
