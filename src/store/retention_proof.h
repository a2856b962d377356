// What makes a retention record a proof of a legitimate removal
// (docs/store.md "Retention" and "Checkpoints"). A retention record names the
// policy it removed under (retention_days), the time of the newest record it
// removed and its own time, and is signed with the checkpoint key when the
// service has one, so that a removal forged by whoever can write the database
// (records deleted, a retention record claiming them) is told apart from one
// the service made: `airlock verify --checkpoints` refuses a removal after a
// tenant's first checkpoint that the key did not sign, and any removal younger
// than the policy it names allows. Pure: no store, no clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/checkpoint.h"

namespace airlock::store {

// {"kind":"retention","removed_jobs":[...],"removed_through_seq":N,"last_removed_hash":H,
//  "removed_through_time":T,"retention_days":D,"at":A[,"key_id":K,"sig":S]}
struct RetentionClaim {
  std::vector<std::string> removed_jobs;
  int64_t removed_through_seq = 0;
  std::string last_removed_hash;
  std::string removed_through_time;        // created_at of the newest record removed
  std::optional<uint64_t> retention_days;  // nullopt: a record that names no policy (older ones)
  std::string at;                          // when the removal ran
  std::string key_id, signature;           // "" when not signed
};

// "airlock-retention-v1\n" tenant "\n" N "\n" H "\n" T "\n" D "\n" A "\n"
// sha256(removed jobs, one a line) "\n" key_id: what the signature covers.
std::string retention_signed_bytes(const std::string& tenant_id, const RetentionClaim& claim);

// The record's JSON, signed with `private_key` (the checkpoint key) when it
// is not null (key_id and signature are then filled in).
Result<std::string> retention_record_text(const std::string& tenant_id, RetentionClaim claim,
                                          EVP_PKEY* private_key);

// Reads a record's JSON (untrusted); nullopt when it is not a retention record.
std::optional<RetentionClaim> parse_retention_claim(std::string_view json);

// Whether the claim names its policy and times (retention_days,
// removed_through_time, at): records written before they were named do not.
bool names_its_policy(const RetentionClaim& claim);

// "" when the newest record removed was at least retention_days old at the
// removal (removed_through_time + retention_days <= at); else why not. A claim
// that names no policy, or whose times do not parse, has a problem too.
std::string retention_age_problem(const RetentionClaim& claim);

// "" when `public_key` signed the claim for `tenant_id`; else why not (not
// signed, another key, a changed field).
std::string retention_signature_problem(const std::string& tenant_id, const RetentionClaim& claim,
                                        EVP_PKEY* public_key);

}  // namespace airlock::store
