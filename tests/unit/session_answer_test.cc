// The host reads a session kernel's answers as untrusted input.
#include <gtest/gtest.h>

#include "jobs/session.h"

namespace airlock::jobs {
namespace {

TEST(KernelAnswer, ReadsEveryFieldOfAWellFormedAnswer) {
  auto r = parse_kernel_answer(R"({"id": "call-1", "status": "ok", "stdout": "hi\n", "stderr": "",
      "result": "42", "html": "<table></table>", "error": null, "figures": ["iVBO"], "ms": 1.5})");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->id, "call-1");
  EXPECT_EQ(r->result, "42");
  EXPECT_EQ(r->html, "<table></table>");
  EXPECT_EQ(r->error, "");
  EXPECT_EQ(r->figures_png_base64, std::vector<std::string>{"iVBO"});
  EXPECT_DOUBLE_EQ(r->ms, 1.5);
}

TEST(KernelAnswer, WrongTypesAreIgnoredAndNonObjectsRefused) {
  auto r = parse_kernel_answer(R"({"id": 7, "status": ["ok"], "figures": [1, "x", null], "ms": "slow"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, "");
  EXPECT_EQ(r->status, "");
  EXPECT_EQ(r->figures_png_base64, std::vector<std::string>{"x"});
  EXPECT_EQ(r->ms, 0);
  EXPECT_FALSE(parse_kernel_answer("[1, 2]"));
  EXPECT_FALSE(parse_kernel_answer("{\"id\": "));
  EXPECT_FALSE(parse_kernel_answer(""));
}

}  // namespace
}  // namespace airlock::jobs
