// The job side of outputs: collect them from the job's /output filesystem
// into the job's private area, and copy accepted ones to the user's
// --output-dir (only after the job succeeded).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "workspace/manifest.h"

namespace airlock::jobs {

// Where `path` lies inside `dir` (both absolute and normalized): its
// relative path, or nullopt when outside. An error when `path` is `dir`
// itself or one of its parents (the record cannot be the output directory).
Result<std::optional<std::string>> path_inside(const std::string& dir, const std::string& path);

// `output_mount_fd` is the host's fd of the job's /output tmpfs.
Result<workspace::Collection> collect_job_outputs(int output_mount_fd, const std::string& dest_dir,
                                                  const workspace::OutputPolicy& policy);

// Copies every accepted entry from `collected_dir` (host files airlock wrote)
// to `output_dir` (created if missing), each through a temporary name and a
// rename, so a reader never sees a partial file.
Status publish_outputs(const std::string& collected_dir,
                       const std::vector<workspace::ManifestEntry>& outputs,
                       const std::string& output_dir);

}  // namespace airlock::jobs
