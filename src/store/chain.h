// The per-tenant record chain, as pure functions: the hash of a link, the
// retention record, and a verifier that walks one tenant's records in seq
// order (streaming: it never holds more than one record).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/types.h"

namespace airlock::store {

// prev_hash of a tenant's first record.
inline constexpr std::string_view kZeroHash =
    "0000000000000000000000000000000000000000000000000000000000000000";

// sha256(prev_hash + "\n" + json), lower-case hex.
std::string record_hash(std::string_view prev_hash, std::string_view json);

// {"kind":"retention","removed_jobs":[...],"removed_through_seq":N,"last_removed_hash":"..."}
std::string retention_record_json(const std::vector<std::string>& removed_jobs,
                                   int64_t removed_through_seq,
                                   const std::string& last_removed_hash);

// {"kind":"snapshot_removed","reason":"deleted"|"expired","digest":"sha256:...",
//  "source":"...","created_at":"...","expires_at":"...","released_contents":N}:
// appended (with an empty job_id) when a snapshot is deleted or expires.
std::string snapshot_removal_record_json(const SnapshotRow& snapshot, const std::string& reason,
                                         uint64_t released_contents);
bool is_snapshot_removal_record(std::string_view json);

// {"kind":"data_request_answer","job_id":"...","request_id":"r1","answer":"refused",
//  "reason":"...","key_id":"...","at":"..."}, or with "answer":"job","by_job":"...":
// appended (with an empty job_id) when the application answers a job's request.
std::string data_request_answer_record_json(const DataRequestAnswer& answer);
bool is_data_request_answer_record(std::string_view json);

// What a retention record says it removed; nullopt when `json` is not one.
struct RetentionCover {
  int64_t through_seq = 0;
  std::string last_hash;
};
std::optional<RetentionCover> parse_retention_record(std::string_view json);

// The last link of a tenant's chain, kept apart from the records so that a
// removed tail is noticed too.
struct ChainHead {
  int64_t seq = 0;
  std::string hash;
};

// Records with an empty job_id are retention, snapshot-removal or
// data-request-answer records.
// Usage: note_retention() for every record with an empty job_id, then
// add() for every record in ascending seq, then finish().
class ChainVerifier {
 public:
  explicit ChainVerifier(std::string tenant_id) : tenant_(std::move(tenant_id)) {}

  void note_retention(const StoredRecord& record);
  void add(const StoredRecord& record);
  void finish(const std::optional<ChainHead>& head);

  uint64_t records() const { return records_; }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void problem(const StoredRecord& record, const std::string& what);
  void start();

  std::string tenant_;
  std::optional<RetentionCover> cover_;
  bool started_ = false;
  int64_t expected_seq_ = 1;
  std::string expected_prev_;
  std::optional<ChainHead> last_;
  uint64_t records_ = 0;
  std::vector<std::string> problems_;
};

}  // namespace airlock::store
