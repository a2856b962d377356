#include "egress/scrub.h"

#include <algorithm>
#include <utility>

namespace airlock::egress {

std::string Scrubber::feed(std::string_view data) {
  pending_.append(data);
  if (needle_.empty()) return std::exchange(pending_, {});
  for (size_t at = pending_.find(needle_); at != std::string::npos; at = pending_.find(needle_, at + needle_.size()))
    std::fill_n(pending_.begin() + static_cast<long>(at), needle_.size(), '*');
  // Keep the longest tail that is a prefix of the needle.
  size_t keep = std::min(pending_.size(), needle_.size() - 1);
  while (keep > 0 && pending_.compare(pending_.size() - keep, keep, needle_, 0, keep) != 0) --keep;
  std::string out = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return out;
}

std::string Scrubber::finish() { return std::exchange(pending_, {}); }

}  // namespace airlock::egress
