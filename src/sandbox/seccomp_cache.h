// The job filter takes ~2 ms to build with libseccomp; it only changes when
// airlock or libseccomp changes. This keeps the built program in a file,
// keyed by the airlock executable's identity and libseccomp's version, and
// checked by its sha256 when loaded.
//
// One file per key (`job-filter-<key>.bpf`): two airlock executables that
// share a state directory (an upgraded CLI beside a pool still running the
// old one, or two builds) each keep their own, instead of rebuilding and
// rewriting the other's on every cold start. When one is stored, the oldest
// beyond kKeptJobFilters are removed.
#pragma once

#include <string>

#include "base/result.h"
#include "sandbox/seccomp_filter.h"

namespace airlock::sandbox {

inline constexpr size_t kKeptJobFilters = 4;

// Loads the cached filter of this executable and this libseccomp from
// `cache_dir` if it is there and intact; otherwise builds the filter and
// stores it. An empty `cache_dir` only builds.
Result<SeccompProgram> load_or_build_job_filter(const std::string& cache_dir);

// The same for a given key (the cache's identity of an executable); tests
// use it to stand for several executables.
Result<SeccompProgram> load_or_build_job_filter(const std::string& cache_dir,
                                                const std::string& key);

// The identity of the running executable and libseccomp: a sha256 in hex.
std::string job_filter_key();

// The file that holds the filter of `key` in `cache_dir`.
std::string job_filter_path(const std::string& cache_dir, const std::string& key);

}  // namespace airlock::sandbox
