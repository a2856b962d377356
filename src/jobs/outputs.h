// The job side of outputs: collect them from the job's /output filesystem
// into the job's private area, and copy accepted ones to the user's
// --output-dir (only after the job succeeded).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "workspace/manifest.h"

namespace airlock::jobs {

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
