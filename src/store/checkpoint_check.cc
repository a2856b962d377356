#include "store/checkpoint_check.h"

#include <map>
#include <sstream>

#include "store/retention_proof.h"

namespace airlock::store {

Result<CheckpointCheck> check_checkpoints(Store& store, std::string_view text, EVP_PKEY* key) {
  CheckpointCheck out;
  std::map<std::string, int64_t> first_checkpoint;  // tenant id -> lowest seq signed
  std::istringstream in{std::string(text)};
  std::string line;
  for (long n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    std::string where = "checkpoint file line " + std::to_string(n) + ": ";
    auto c = parse_checkpoint_line(line);
    if (!c) {
      out.problems.push_back(where + c.error().message());
      continue;
    }
    if (auto st = verify_checkpoint(*c, key); !st) {
      out.problems.push_back(where + "tenant " + c->tenant_id + " seq " + std::to_string(c->seq) +
                             ": " + st.error().message());
      continue;
    }
    auto link = store.link_at(c->tenant_id, c->seq);
    if (!link) return std::unexpected(link.error());
    if (auto p = checkpoint_mismatch(*c, link->hash, link->removed_by_retention); !p.empty())
      out.problems.push_back(p);
    auto [it, added] = first_checkpoint.emplace(c->tenant_id, c->seq);
    if (!added) it->second = std::min(it->second, c->seq);
    ++out.checked;
  }
  // Every removal made since checkpoints began must be the service's own. (A
  // retention record at or before the first checkpointed seq is older than
  // the checkpoints; its bytes are covered by the signed hashes after it.)
  for (const auto& [tenant, first] : first_checkpoint) {
    auto records = store.retention_records(tenant);
    if (!records) return std::unexpected(records.error());
    for (const auto& r : *records) {
      if (r.seq <= first) continue;
      auto claim = parse_retention_claim(r.json);
      if (!claim) continue;  // retention_records() returns only those that parse
      std::string who = "tenant " + tenant + ": retention record at seq " + std::to_string(r.seq) +
                        " (removing through seq " + std::to_string(claim->removed_through_seq) +
                        ") ";
      if (auto p = retention_signature_problem(tenant, *claim, key); !p.empty())
        out.problems.push_back(who + p + " (a removal after the tenant's first checkpoint, seq " +
                               std::to_string(first) +
                               ", must be: this one was forged, or made by a service without "
                               "checkpoint_key)");
      else if (auto age = retention_age_problem(*claim); !age.empty())
        out.problems.push_back(who + age);
    }
  }
  return out;
}

}  // namespace airlock::store
