#include "jobs/wall_time.h"

namespace airlock::jobs {

uint64_t billed_wall_ms(std::chrono::nanoseconds elapsed) {
  const int64_t ns = elapsed.count();
  if (ns <= 0) return 1;  // a clock read twice in one tick: the job still ran
  return (static_cast<uint64_t>(ns) + 999'999) / 1'000'000;
}

}  // namespace airlock::jobs
