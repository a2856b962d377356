// GET /v1/jobs query parsing: filters, and who may name another tenant.
#include "service/job_query.h"

#include <gtest/gtest.h>

namespace airlock::service {
namespace {

const JobQueryCaller kRunner{false, "t-acme", "acme"};
const JobQueryCaller kAdmin{true, "t-ops", "ops"};

TEST(JobQuery, ParsesTheFiltersIntoTheStoreFilter) {
  auto q = parse_job_query({{"state", "finished"}, {"outcome", "failed"}, {"limit", "20"}, {"image", "python"},
                            {"created_after", "2026-01-01T00:00:00.000Z"}},
                           kRunner);
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->filter.state, store::JobState::kFinished);
  EXPECT_EQ(q->filter.outcome, "failed");
  EXPECT_EQ(q->filter.limit, 20);
  EXPECT_EQ(q->filter.image, "python");
  EXPECT_EQ(q->filter.created_after, "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(q->tenant, "");  // the caller's own
}

TEST(JobQuery, AnAdminNamesAnyTenantOrAll) {
  auto all = parse_job_query({{"tenant", "*"}}, kAdmin);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->tenant, "*");
  auto other = parse_job_query({{"tenant", "acme"}}, kAdmin);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->tenant, "acme");
  auto own = parse_job_query({{"tenant", "ops"}}, kAdmin);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->tenant, "");
}

// Hostile: a run/read key tries another tenant's name, its id, and "*": each is
// refused with 403 (not 404, which would differ between existing and missing tenants).
TEST(JobQuery, AnyOtherKeyNamingAnotherTenantIsForbidden) {
  for (const char* t : {"ops", "t-ops", "*", "no-such-tenant"}) {
    auto q = parse_job_query({{"tenant", t}}, kRunner);
    ASSERT_FALSE(q) << t;
    EXPECT_EQ(q.error().status, 403) << t;
    EXPECT_EQ(q.error().code, "forbidden") << t;
    EXPECT_NE(q.error().message.find("admin"), std::string::npos) << q.error().message;
  }
  // Its own tenant, by id or name, is the default and allowed.
  for (const char* t : {"acme", "t-acme"}) {
    auto q = parse_job_query({{"tenant", t}}, kRunner);
    ASSERT_TRUE(q) << t;
    EXPECT_EQ(q->tenant, "");
  }
}

TEST(JobQuery, RefusesBadValuesAndUnknownParameters) {
  auto expect_400 = [](const std::map<std::string, std::string>& m, const char* word) {
    auto q = parse_job_query(m, kAdmin);
    ASSERT_FALSE(q);
    EXPECT_EQ(q.error().status, 400);
    EXPECT_NE(q.error().message.find(word), std::string::npos) << q.error().message;
  };
  expect_400({{"state", "done"}}, "state");
  expect_400({{"limit", "0"}}, "limit");
  expect_400({{"limit", "501"}}, "limit");
  expect_400({{"image", ""}}, "image");
  expect_400({{"image", std::string(257, 'a')}}, "image");
  expect_400({{"image", "py\x1b[31mthon"}}, "image");
  expect_400({{"tenant", ""}}, "tenant");
  expect_400({{"tenant", "a\nb"}}, "tenant");
  expect_400({{"tenants", "*"}}, "unknown query parameter");
}

}  // namespace
}  // namespace airlock::service
