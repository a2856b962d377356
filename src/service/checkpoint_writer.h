// Writes signed checkpoints of each tenant's chain head that changed since the
// last one (docs/store.md, "Checkpoints") to an append-only file, synced.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "store/checkpoint.h"
#include "store/store.h"

namespace airlock::service {

class CheckpointWriter {
 public:
  // Reads the private key at `key_path` (refused inside `data_dir`: whoever
  // can write the store must not hold the key) and opens `file` for appending.
  static Result<CheckpointWriter> open(const std::string& key_path, const std::string& file,
                                       const std::string& data_dir);

  // Appends one line per tenant whose head changed since the last call (all
  // at the first), syncs, and returns the lines written.
  Result<std::vector<std::string>> write_changed(store::Store& store, const std::string& now);

  // The private key, which also signs retention records (store/retention_proof.h).
  EVP_PKEY* key() const { return key_.get(); }

 private:
  CheckpointWriter(store::EvpKey key, UniqueFd fd) : key_(std::move(key)), fd_(std::move(fd)) {}
  store::EvpKey key_;
  UniqueFd fd_;
  std::map<std::string, store::ChainHead> written_;  // tenant id -> head last checkpointed
};

}  // namespace airlock::service
