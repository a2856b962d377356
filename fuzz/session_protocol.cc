// Lines the session kernel prints (src/sessions/session_protocol.cc): hostile,
// since the session's code writes the same streams. Each input line is
// parsed as one protocol line; output events go through an OutputCollector.
// Property: the collector keeps at most its cap plus the note about the cut.
#include "fuzz/fuzz.h"
#include "sessions/session_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = airlock::fuzz::text(data, size);
  constexpr size_t kCap = 256;
  airlock::jobs::OutputCollector collector(kCap);
  while (!in.empty()) {
    size_t end = in.find('\n');
    std::string_view line = in.substr(0, end);
    in = end == std::string_view::npos ? std::string_view() : in.substr(end + 1);
    auto event = airlock::jobs::parse_kernel_event(line);
    if (event && event->kind == airlock::jobs::KernelEvent::Kind::kOutput) collector.append(event->text);
  }
  std::string kept = collector.take();
  AIRLOCK_CHECK(kept.size() <= kCap + 200);
  return 0;
}
