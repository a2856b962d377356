// What the checkpoint and retention-forgery tests share: a private directory
// for a checkpoint key and its file, and a tenant's id read from the store.
#pragma once

#include <string>

namespace airlock::testing {

// A directory under the temp dir (mkdtemp: 0700), removed with the object.
struct KeyDir {
  KeyDir();
  ~KeyDir();
  KeyDir(const KeyDir&) = delete;
  KeyDir& operator=(const KeyDir&) = delete;
  std::string path;
};

// The id of the tenant `name` in the store at `data_dir` (a failed expectation when none).
std::string tenant_id(const std::string& data_dir, const std::string& name);

}  // namespace airlock::testing
