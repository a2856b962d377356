// Store: the chain heads and links that signed checkpoints are made of and checked against.
#include "store/chain.h"
#include "store/store.h"

namespace airlock::store {

Result<std::map<std::string, ChainHead>> Store::chain_heads() {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT tenant_id, seq, hash FROM chain_heads ORDER BY tenant_id");
  if (!s) return std::unexpected(s.error());
  std::map<std::string, ChainHead> out;
  auto visited = each_row(**s, [&](const Statement& r) {
    out[r.text(0)] = ChainHead{r.int64(1), r.text(2)};
  });
  if (!visited) return std::unexpected(visited.error());
  return out;
}

Result<Store::LinkAt> Store::link_at(const std::string& tenant_id, int64_t seq) {
  std::lock_guard lock(mu_);
  LinkAt out;
  {
    auto s = sql("SELECT hash FROM records WHERE tenant_id = ?1 AND seq = ?2");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, tenant_id);
    (*s)->bind(2, seq);
    auto row = (*s)->step();
    if (!row) return std::unexpected(row.error());
    if (*row) {
      out.hash = (*s)->text(0);
      return out;
    }
  }
  auto s = sql("SELECT json FROM records WHERE tenant_id = ?1 AND job_id = '' ORDER BY seq");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id);
  auto visited = each_row(**s, [&](const Statement& r) {
    auto cover = parse_retention_record(r.text(0));
    if (!cover || cover->through_seq < seq) return;
    out.removed_by_retention = true;
    // The retention record keeps the hash of the last link it removed.
    if (cover->through_seq == seq) out.hash = cover->last_hash;
  });
  if (!visited) return std::unexpected(visited.error());
  return out;
}

}  // namespace airlock::store

namespace airlock::store {

Result<std::vector<StoredRecord>> Store::retention_records(const std::string& tenant_id) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT job_id, tenant_id, seq, prev_hash, hash, json, created_at FROM records "
      "WHERE tenant_id = ?1 AND job_id = '' ORDER BY seq");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id);
  std::vector<StoredRecord> out;
  auto visited = each_row(**s, [&](const Statement& r) {
    StoredRecord record{r.text(0), r.text(1), r.int64(2), r.text(3), r.text(4), r.text(5), r.text(6)};
    if (parse_retention_record(record.json)) out.push_back(std::move(record));
  });
  if (!visited) return std::unexpected(visited.error());
  return out;
}

}  // namespace airlock::store
