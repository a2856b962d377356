#include "pool/refill_hold.h"

namespace airlock::jobs {

// An empty class refills at once: its next job would otherwise start cold,
// doing the same work on its own path. So under a steady load the pool
// refills as it did without the hold; it only moves work out of a lone job's way.
bool hold_back_refill(const RefillView& view, std::chrono::milliseconds hold_max) {
  return view.ready > 0 && view.running > 0 && view.waited < hold_max;
}

}  // namespace airlock::jobs
