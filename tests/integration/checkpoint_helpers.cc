#include "checkpoint_helpers.h"

#include <stdlib.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "store/store.h"

namespace airlock::testing {

KeyDir::KeyDir() {
  std::string tmpl = std::filesystem::temp_directory_path() / "airlock-ckpt-XXXXXX";
  if (::mkdtemp(tmpl.data())) path = tmpl;
  EXPECT_FALSE(path.empty()) << "mkdtemp " << tmpl;
}

KeyDir::~KeyDir() {
  std::error_code ec;
  if (!path.empty()) std::filesystem::remove_all(path, ec);
}

std::string tenant_id(const std::string& data_dir, const std::string& name) {
  auto store = airlock::store::Store::open(data_dir);
  EXPECT_TRUE(store);
  if (!store) return "";
  auto t = (*store)->tenant_by_name(name);
  EXPECT_TRUE(t && *t);
  return t && *t ? (*t)->id : "";
}

}  // namespace airlock::testing
