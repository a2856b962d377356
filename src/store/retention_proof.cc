#include "store/retention_proof.h"

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/sha256.h"
#include "store/types.h"
#include "usage/ledger.h"

namespace airlock::store {
namespace {

constexpr int64_t kDayMs = 86'400'000;

std::string jobs_digest(const std::vector<std::string>& jobs) {
  Sha256 h;
  for (const auto& j : jobs) {
    h.update(j);
    h.update("\n");
  }
  return h.hex_digest();
}

}  // namespace

std::string retention_signed_bytes(const std::string& tenant_id, const RetentionClaim& c) {
  return "airlock-retention-v1\n" + tenant_id + "\n" + std::to_string(c.removed_through_seq) +
         "\n" + c.last_removed_hash + "\n" + c.removed_through_time + "\n" +
         std::to_string(c.retention_days.value_or(0)) + "\n" + c.at + "\n" +
         jobs_digest(c.removed_jobs) + "\n" + c.key_id;
}

Result<std::string> retention_record_text(const std::string& tenant_id, RetentionClaim c,
                                          EVP_PKEY* private_key) {
  if (!c.retention_days) c.retention_days = 0;
  if (private_key != nullptr) {
    auto id = checkpoint_key_id(private_key);
    if (!id) return forward(id);
    c.key_id = *id;
    auto sig = sign_with_checkpoint_key(retention_signed_bytes(tenant_id, c), private_key);
    if (!sig) return fail("cannot sign the retention record: " + sig.error().message());
    c.signature = *sig;
  }
  nlohmann::ordered_json j;
  j["kind"] = "retention";
  j["removed_jobs"] = c.removed_jobs;
  j["removed_through_seq"] = c.removed_through_seq;
  j["last_removed_hash"] = c.last_removed_hash;
  j["removed_through_time"] = c.removed_through_time;
  j["retention_days"] = *c.retention_days;
  j["at"] = c.at;
  if (private_key != nullptr) {
    j["key_id"] = c.key_id;
    j["sig"] = c.signature;
  }
  return j.dump();
}

std::optional<RetentionClaim> parse_retention_claim(std::string_view json) {
  auto j = parse_json_or_discarded(json, kMaxStoredJsonDepth);
  if (!j.is_object()) return std::nullopt;
  auto kind = j.find("kind");
  auto through = j.find("removed_through_seq");
  auto last = j.find("last_removed_hash");
  if (kind == j.end() || *kind != "retention" || through == j.end() ||
      !through->is_number_integer() || last == j.end() || !last->is_string())
    return std::nullopt;
  RetentionClaim c;
  c.removed_through_seq = through->get<int64_t>();
  c.last_removed_hash = last->get<std::string>();
  if (auto jobs = j.find("removed_jobs"); jobs != j.end() && jobs->is_array())
    for (const auto& id : *jobs)
      if (id.is_string()) c.removed_jobs.push_back(id.get<std::string>());
  auto text = [&](const char* name, std::string& out) {
    if (auto it = j.find(name); it != j.end() && it->is_string()) out = it->get<std::string>();
  };
  text("removed_through_time", c.removed_through_time);
  text("at", c.at);
  text("key_id", c.key_id);
  text("sig", c.signature);
  if (auto days = j.find("retention_days"); days != j.end() && days->is_number_unsigned())
    c.retention_days = days->get<uint64_t>();
  return c;
}

bool names_its_policy(const RetentionClaim& c) {
  return c.retention_days && !c.removed_through_time.empty() && !c.at.empty();
}

std::string retention_age_problem(const RetentionClaim& c) {
  if (!names_its_policy(c))
    return "names no retention policy (retention_days, removed_through_time and at)";
  auto removed = usage::parse_time_ms(c.removed_through_time);
  auto at = usage::parse_time_ms(c.at);
  if (!removed || !at) return "has a time that is not RFC 3339 UTC";
  // Days beyond any clock (more than a million years) cannot be met.
  if (*c.retention_days > 365'000'000 ||
      *removed + static_cast<int64_t>(*c.retention_days) * kDayMs > *at)
    return "removed records as recent as " + c.removed_through_time + " at " + c.at +
           ", under retention_days " + std::to_string(*c.retention_days) +
           ": younger than the policy allows";
  return "";
}

std::string retention_signature_problem(const std::string& tenant_id, const RetentionClaim& c,
                                        EVP_PKEY* public_key) {
  if (c.signature.empty() || c.key_id.empty()) return "is not signed by the checkpoint key";
  auto id = checkpoint_key_id(public_key);
  if (!id) return id.error().message();
  if (*id != c.key_id) return "is signed by key " + c.key_id + ", not by the given key " + *id;
  auto st = verify_checkpoint_key_signature(retention_signed_bytes(tenant_id, c), c.signature,
                                            public_key, "the retention record");
  return st ? "" : st.error().message();
}

}  // namespace airlock::store
