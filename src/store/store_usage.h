// What the usage report reads from the store (store_usage.cc, docs/usage.md):
// plain rows, one per finished job, session and kept object. Plain data.
#pragma once

#include <cstdint>
#include <string>

namespace airlock::store {

struct UsageRow {
  enum class Kind { kJob, kSession, kArtifact, kSnapshot, kUpload };
  Kind kind = Kind::kJob;
  std::string id, tenant_id;
  // job: finished_at in ended_at; session: created_at .. closed_at ("" while
  // open); stored object: kept since started_at, until ended_at ("" still kept).
  std::string started_at, ended_at;
  std::string outcome;  // a job's outcome, a session's close reason
  std::string json;     // job: its record; session: its usage object
  std::string image;    // the image the work ran on, "" when not known
  uint64_t bytes = 0;   // stored objects
};

}  // namespace airlock::store
