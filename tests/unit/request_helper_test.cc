// The helper compiled into airlock is the file in the repository (the
// sandbox gets exactly what tests/requests_py tested).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "requests/request_helper.h"

namespace airlock::requests {
namespace {

TEST(RequestHelper, IsTheRepositorysFile) {
  std::ifstream in(std::string(AIRLOCK_SOURCE_DIR) + "/src/requests/airlock_request.py");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(helper_source(), text.str());
  EXPECT_NE(helper_source().find("def ask("), std::string::npos);
}

}  // namespace
}  // namespace airlock::requests
