// Workspace snapshots on disk: capture an untrusted tree into a content
// directory and a manifest, and restore a manifest into an empty directory.
// The host reaches a sandbox's /workspace through the fd of its detached
// tmpfs (openat(mount_fd, ".", O_RDONLY | O_DIRECTORY) gives the root).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "workspace/content_dir.h"
#include "workspace/snapshot_manifest.h"

namespace airlock::workspace {

struct CaptureLimits {
  uint64_t max_bytes = 1ull << 30;  // all regular files together
  size_t max_entries = 100000;      // every name seen, skipped ones included
  size_t max_depth = 32;            // path components of any entry
};

struct SkippedEntry {
  std::string path;    // printable() form
  std::string reason;  // "fifo", "socket", "device", "bad name: ...", "symlink target: ..."
};

struct Capture {
  SnapshotManifest manifest;
  std::vector<SkippedEntry> skipped;
};

// Walks the tree beneath `root_dir_fd` without following anything (openat2
// beneath-only, no symlinks, no magic links, no xdev; O_NOFOLLOW) and stores
// each regular file's bytes in `contents`, hashed as they are copied. Records
// directories and symlinks (their target text only: a symlink is never
// followed or resolved). Skips fifos, sockets, devices, names refused by
// check_component and symlinks whose target is not printable ASCII, listing
// each in `skipped`. Hard links are stored as separate files; modes keep the
// permission bits only. Fails (naming the limit and the path) when the tree
// is over a limit, or changes under the walk in a way that matters (a file
// replaced by another object between stat and open). Files keep their holes
// in `contents` (copy_hashing). Whether it succeeds or fails, `created` gets
// the sha256 of every content this call stored that was not stored before:
// nothing references them until a snapshot row does, so a caller that keeps
// no snapshot removes them (store::Store::release_contents) and a refused
// capture leaves the content directory as it was.
Result<Capture> capture_tree(int root_dir_fd, const ContentDir& contents,
                             const CaptureLimits& limits, std::vector<std::string>& created);

// Recreates `manifest` beneath `dest_root_dir_fd`, which must be an empty
// directory: directories, files (copied from `contents` keeping holes,
// copy_keeping_holes; sizes checked against the manifest, bytes not
// re-hashed: stored files are 0400 and written once) and
// symlinks, each owned by owner:group with the recorded mode. Never follows
// anything: every directory is created here and reopened beneath its parent
// without following links. A file the content directory does not hold fails
// with err ENOENT and names it; a full destination fails with ENOSPC.
// On failure the destination holds a partial tree; the caller discards it.
Status restore_tree(const SnapshotManifest& manifest, const ContentDir& contents,
                    int dest_root_dir_fd, uid_t owner, gid_t group);

}  // namespace airlock::workspace
