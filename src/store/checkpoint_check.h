// What `airlock verify --checkpoints` checks beyond the plain chains
// (docs/store.md "Checkpoints"):
//  - every line of the checkpoint file parses, is signed by the given key, and
//    the chain's hash at its seq now is the signed head (or that seq was
//    removed by retention);
//  - every retention record of a tenant after its first checkpoint is signed
//    by the same key and removed nothing younger than the policy it names
//    (store/retention_proof.h): a removal that no signature covers is refused,
//    so deleting checkpointed records and writing a retention record that
//    claims them is found.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/checkpoint.h"
#include "store/store.h"

namespace airlock::store {

struct CheckpointCheck {
  long checked = 0;                   // checkpoint lines that verified and were compared
  std::vector<std::string> problems;  // one a line
};

// An Error only when the store cannot be read.
Result<CheckpointCheck> check_checkpoints(Store& store, std::string_view checkpoint_file_text,
                                          EVP_PKEY* public_key);

}  // namespace airlock::store
