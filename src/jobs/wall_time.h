// The wall time a job's record bills (usage.wall_ms, docs/usage.md): the
// payload's elapsed time on the monotonic clock, from the moment airlock asked
// init to start it to the moment init reported it ended, in whole
// milliseconds rounded up. A job that ran is billed at least 1 ms: its memory
// charge (peak x wall) is never zero. Pure.
#pragma once

#include <chrono>
#include <cstdint>

namespace airlock::jobs {

uint64_t billed_wall_ms(std::chrono::nanoseconds elapsed);

}  // namespace airlock::jobs
