// Test helper: rewrites one record of a tenant's chain behind the store's back
// and recomputes every later link and the chain head consistently, as an
// attacker who can write the database would (so plain verify passes).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace airlock::testing {

// Replaces the json of the record at `seq` by edit(json) (SQLite C API on
// `db_path`, the store closed). Returns the error text, "" on success.
std::string rewrite_chain(const std::string& db_path, const std::string& tenant_id, int64_t seq,
                          const std::function<std::string(const std::string&)>& edit);

}  // namespace airlock::testing
