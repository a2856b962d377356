// The `tenant` parameter of GET /v1/sessions, /v1/snapshots and
// /v1/snapshots/{digest}: only an admin key names another tenant.
#include "service/tenant_param.h"

#include <gtest/gtest.h>

namespace airlock::service {
namespace {

const TenantParamCaller kRunner{false, "t-acme", "acme"};
const TenantParamCaller kAdmin{true, "t-ops", "ops"};

TEST(TenantParam, AnAdminNamesAnyTenantOrAll) {
  auto all = parse_tenant_only_query({{"tenant", "*"}}, kAdmin);
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, "*");
  auto other = parse_tenant_only_query({{"tenant", "t-acme"}}, kAdmin);
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, "t-acme");
  for (const char* own : {"ops", "t-ops"}) {
    auto q = parse_tenant_only_query({{"tenant", own}}, kAdmin);
    ASSERT_TRUE(q) << own;
    EXPECT_EQ(*q, "") << own;
  }
  auto none = parse_tenant_only_query({}, kAdmin);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, "");
}

// Hostile: a run/read key names another tenant, its id, "*" and a tenant that
// does not exist: each is 403 (the same answer, so none tells which exist).
TEST(TenantParam, AnyOtherKeyNamingAnotherTenantIsForbidden) {
  for (const char* t : {"ops", "t-ops", "*", "no-such-tenant"}) {
    auto q = parse_tenant_only_query({{"tenant", t}}, kRunner);
    ASSERT_FALSE(q) << t;
    EXPECT_EQ(q.error().status, 403) << t;
    EXPECT_EQ(q.error().code, "forbidden") << t;
    EXPECT_NE(q.error().message.find("admin"), std::string::npos) << q.error().message;
  }
  for (const char* t : {"acme", "t-acme"}) {
    auto q = parse_tenant_only_query({{"tenant", t}}, kRunner);
    ASSERT_TRUE(q) << t;
    EXPECT_EQ(*q, "");
  }
}

TEST(TenantParam, RefusesBadValuesAndOtherParameters) {
  for (const std::string& bad : {std::string(), std::string(129, 'a'), std::string("ops\n"), std::string("a\x7f"),
                                 std::string("x\0y", 3)}) {
    auto q = parse_tenant_only_query({{"tenant", bad}}, kAdmin);
    ASSERT_FALSE(q);
    EXPECT_EQ(q.error().status, 400);
    EXPECT_EQ(q.error().code, "bad_request");
  }
  // A parameter the route does not take is refused, not ignored (a typo like
  // "tenants=*" would otherwise quietly show the caller's own tenant only).
  auto q = parse_tenant_only_query({{"tenants", "*"}}, kAdmin);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().status, 400);
  EXPECT_NE(q.error().message.find("tenants"), std::string::npos) << q.error().message;
  auto runner = parse_tenant_only_query({{"limit", "5"}}, kRunner);
  ASSERT_FALSE(runner);
  EXPECT_EQ(runner.error().status, 400);
}

}  // namespace
}  // namespace airlock::service
