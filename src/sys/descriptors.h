// This process's file descriptors: the RLIMIT_NOFILE soft limit raised to the
// hard limit at start, and how many are free now.
#pragma once

#include <cstdint>

#include "base/result.h"

namespace airlock::sys {

struct DescriptorLimit {
  uint64_t before = 0;  // the soft limit found
  uint64_t soft = 0;    // the soft limit now
  uint64_t hard = 0;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (capped at what the kernel
// takes, fs.nr_open). Children inherit it.
Result<DescriptorLimit> raise_descriptor_limit();

// The hard RLIMIT_NOFILE of this process: what a child may be given at most.
Result<uint64_t> descriptor_hard_limit();

// The soft limit minus the descriptors open now (counted in /proc/self/fd).
Result<uint64_t> free_descriptors();

}  // namespace airlock::sys
