// The job filter takes ~2 ms to build with libseccomp; it only changes when
// airlock or libseccomp changes. This keeps the built program in a file,
// keyed by the airlock executable's identity and libseccomp's version, and
// checked by its sha256 when loaded.
#pragma once

#include <string>

#include "base/result.h"
#include "sandbox/seccomp_filter.h"

namespace airlock::sandbox {

// Loads `cache_dir`/job-filter.bpf if it was built by this executable and
// this libseccomp and is intact; otherwise builds the filter and stores it.
// An empty `cache_dir` only builds.
Result<SeccompProgram> load_or_build_job_filter(const std::string& cache_dir);

}  // namespace airlock::sandbox
