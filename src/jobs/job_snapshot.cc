#include "jobs/job_snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"
#include "sys/file_io.h"
#include "workspace/content_dir.h"
#include "workspace/snapshot_tree.h"

namespace airlock::jobs {

Result<SnapshotPlan> load_snapshot(const RunRequest& request) {
  auto text = sys::read_file(request.snapshot_manifest, workspace::SnapshotManifest::kMaxJsonBytes);
  if (!text) return fail("snapshot manifest " + request.snapshot_manifest + ": " + text.error().message());
  auto manifest = workspace::SnapshotManifest::from_json(*text);
  if (!manifest) return fail("snapshot manifest " + request.snapshot_manifest + ": " + manifest.error().what);
  const uint64_t room = request.policy.workspace_bytes;
  if (manifest->total_bytes() > room)
    return fail("snapshot " + manifest->digest() + " holds " + std::to_string(manifest->total_bytes()) +
                " bytes, more than the workspace's " + std::to_string(room) + " (--workspace-size)");
  return SnapshotPlan{std::move(*manifest), request.content_dir};
}

Result<std::optional<std::string>> restore_snapshot(const SnapshotPlan& plan,
                                                    int workspace_mount_fd, uid_t uid, gid_t gid) {
  UniqueFd root(::openat(workspace_mount_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return fail_errno("open the workspace mount");
  workspace::ContentDir contents(plan.content_dir);
  auto restored = workspace::restore_tree(plan.manifest, contents, root.get(), uid, gid);
  if (restored) return std::optional<std::string>();
  const Error& e = restored.error();
  switch (e.err) {
    case ENOENT:  // a file the content directory does not hold
    case ENOSPC:  // more files or bytes than the workspace holds
    case EDQUOT:
      return std::optional<std::string>("restore snapshot " + plan.manifest.digest() + ": " +
                                        e.message());
    default:
      return fail_with("restore snapshot " + plan.manifest.digest() + ": " + e.what, e.err);
  }
}

}  // namespace airlock::jobs
