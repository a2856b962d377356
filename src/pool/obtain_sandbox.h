// Where a job's sandbox comes from: the warm pool of the state directory
// (preloaded for plain python3 jobs, else warm) when the start mode allows and
// one of the job's class is ready, fitted to the job's limits; else prepared
// now (cold). Sets the record's sandbox.start, prepared and start_note.
#pragma once

#include <optional>

#include "base/result.h"
#include "jobs/image_source.h"
#include "pool/prepared.h"
#include "jobs/record.h"
#include "jobs/run_job.h"
#include "jobs/run_request.h"
#include "sandbox/command.h"

namespace airlock::jobs {

Status obtain_sandbox(const RunRequest& request, const RunEnvironment& env, const sandbox::Command& command,
                      const ImageSource& image, JobRecord& record, std::optional<PreparedSandbox>& sandbox);

}  // namespace airlock::jobs
