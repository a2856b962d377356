// Archives for the archive and office checks (src/validate/archive_scan.cc):
// the input is an archive (ZIP, tar, tar.gz) walked in process with small
// bounds, as the confined child walks it, with member types and .rels kept.
// Properties: the bounds hold (members, each size, the total); the answer the
// child would print reads back (scan_from_json) to the same members.
#include "fuzz/fuzz.h"
#include "validate/archive_scan.h"
#include "validate/office.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace airlock::validate;
  ArchiveBounds bounds{.max_members = 64, .max_member_bytes = 1 << 20, .max_total_bytes = 4 << 20, .max_ratio = 100,
                       .ratio_floor_bytes = 64 << 10, .typed_member_bytes = 1 << 20, .max_depth = 1};
  auto scan = scan_archive_memory(airlock::fuzz::text(data, size), bounds, {.type_members = true, .keep_rels = true});
  AIRLOCK_CHECK(scan.has_value());
  AIRLOCK_CHECK(scan->members.size() <= bounds.max_members);
  uint64_t total = 0;
  for (const auto& m : scan->members) {
    AIRLOCK_CHECK(m.size <= bounds.max_member_bytes);
    AIRLOCK_CHECK(check_member_name(m.name).has_value());
    total += m.size;
  }
  AIRLOCK_CHECK(total <= bounds.max_total_bytes);
  auto back = scan_from_json(scan_to_json(*scan), bounds);
  AIRLOCK_CHECK(back.has_value() && back->members.size() == scan->members.size());
  (void)office_refusal(*scan, false);
  return 0;
}
