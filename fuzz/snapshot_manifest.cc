// Snapshot manifests (src/workspace/snapshot_manifest.cc), parsed from
// untrusted or stored text. Property: an accepted manifest is canonical, so
// its to_json() is the text it was parsed from, and that parses again to the
// same digest.
#include "fuzz/fuzz.h"
#include "workspace/snapshot_manifest.h"

using airlock::workspace::SnapshotManifest;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto manifest = SnapshotManifest::from_json(airlock::fuzz::text(data, size));
  if (!manifest) return 0;
  std::string canonical = manifest->to_json();
  auto again = SnapshotManifest::from_json(canonical);
  AIRLOCK_CHECK(again.has_value());
  AIRLOCK_CHECK(again->digest() == manifest->digest());
  (void)manifest->total_bytes();
  (void)manifest->contents();
  return 0;
}
