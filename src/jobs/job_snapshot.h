// `airlock run --snapshot-manifest FILE --content-dir DIR`: the job's
// /workspace starts as a copy of a workspace snapshot (docs/snapshots.md).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "base/result.h"
#include "jobs/run_request.h"
#include "workspace/snapshot_manifest.h"

namespace airlock::jobs {

struct SnapshotPlan {
  workspace::SnapshotManifest manifest;
  std::string content_dir;
};

// Reads and strictly parses the manifest file, before any sandbox is taken.
// Every error is about the request (the job is input_rejected with it): a
// missing or malformed file, or a snapshot larger than the workspace.
Result<SnapshotPlan> load_snapshot(const RunRequest& request);

// Restores the snapshot into the workspace tmpfs (`workspace_mount_fd`, the
// host's fd of the detached mount), owned by the job's host uid and gid.
// Returns a refusal (input_rejected) when the request cannot be met: a file
// the content directory does not hold, or more than the workspace holds. An
// Error is airlock's own failure.
Result<std::optional<std::string>> restore_snapshot(const SnapshotPlan& plan,
                                                    int workspace_mount_fd, uid_t uid, gid_t gid);

}  // namespace airlock::jobs
