// Relationships parts of Office packages (src/validate/office.cc): the input
// is a .rels document, parsed and judged as the office check judges it.
// Property: a relationship parsed as external is refused unless it is a
// hyperlink and hyperlinks are allowed.
#include "fuzz/fuzz.h"
#include "validate/office.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace airlock::validate;
  std::string text(airlock::fuzz::text(data, size));
  auto rels = parse_relationships(text);
  ArchiveScan scan;
  scan.members.push_back({"[Content_Types].xml", MemberKind::kFile, 0, "", ""});
  scan.rels.emplace_back("_rels/.rels", text);
  auto strict = office_refusal(scan, false);
  if (!rels) {
    AIRLOCK_CHECK(strict.has_value());
    return 0;
  }
  bool external = false;
  for (const auto& r : *rels) external = external || r.external;
  AIRLOCK_CHECK(strict.has_value() == external);
  return 0;
}
