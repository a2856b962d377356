// Store: sessions, their calls, and closing into the tenant's chain.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

class StoreSessions : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(dir.path(), store, options);
    a = *store->create_tenant("a", {});
    b = *store->create_tenant("b", {});
  }
  TempDir dir;
  StoreOptions options;
  std::unique_ptr<Store> store;
  Tenant a, b;
  SessionRow row(const std::string& id, const Tenant& t, const std::string& at) {
    SessionRow r;
    r.id = id;
    r.tenant_id = t.id;
    r.key_id = "k1";
    r.request_json = "{}";
    r.created_at = at;
    return r;
  }
};

TEST_P(StoreSessions, CreateListAndTenantIsolation) {

  ASSERT_TRUE(store->create_session(row("s1", a, "2026-01-01T00:00:00Z")));
  ASSERT_TRUE(store->create_session(row("s2", a, "2026-01-02T00:00:00Z")));
  ASSERT_TRUE(store->create_session(row("s3", b, "2026-01-02T00:00:00Z")));
  EXPECT_FALSE(store->create_session(row("s1", b, "2026-01-03T00:00:00Z")));  // ids are unique

  auto got = store->session(a.id, "s1");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->state, "open");
  auto other = store->session(b.id, "s1");  // another tenant's session answers as missing
  ASSERT_TRUE(other);
  EXPECT_FALSE(*other);

  auto list = store->sessions(a.id, 10);
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, "s2");  // newest first
  auto open = store->open_sessions();
  ASSERT_TRUE(open);
  EXPECT_EQ(open->size(), 3u);
}

// For an admin key: any tenant's session and call, every tenant's sessions newest first.
TEST_P(StoreSessions, EveryTenantsSessionsAndCalls) {

  ASSERT_TRUE(store->create_session(row("s1", a, "2026-01-01T00:00:00Z")));
  ASSERT_TRUE(store->create_session(row("s2", b, "2026-01-02T00:00:00Z")));
  ASSERT_TRUE(store->create_session(row("s3", a, "2026-01-03T00:00:00Z")));
  ASSERT_TRUE(store->add_session_call({"s2", "c1", 1, R"({"status":"ok"})"}));
  auto all = store->sessions_of_every_tenant(10);
  ASSERT_TRUE(all) << all.error().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, "s3");
  EXPECT_EQ((*all)[1].id, "s2");
  EXPECT_EQ((*all)[1].tenant_id, b.id);
  EXPECT_EQ(store->sessions_of_every_tenant(2)->size(), 2u);
  auto any = store->session_of_any_tenant("s2");
  ASSERT_TRUE(any && *any);
  EXPECT_EQ((*any)->tenant_id, b.id);
  EXPECT_FALSE(*store->session_of_any_tenant("no-such"));
  auto call = store->session_call_of_any_tenant("c1");
  ASSERT_TRUE(call && *call);
  EXPECT_EQ((*call)->session_id, "s2");
  EXPECT_FALSE(*store->session_call_of_any_tenant("c2"));
  EXPECT_FALSE(*store->session_call(a.id, "c1"));  // the tenant query still hides it
}

TEST_P(StoreSessions, CallsAndCloseAppendToTheChain) {

  ASSERT_TRUE(store->create_session(row("s1", a, "2026-01-01T00:00:00Z")));
  ASSERT_TRUE(store->add_session_call({"s1", "c1", 1, R"({"status":"ok"})"}));
  ASSERT_TRUE(store->add_session_call({"s1", "c2", 2, R"({"status":"error"})"}));
  EXPECT_FALSE(store->add_session_call({"s1", "c3", 3, "not json"}));
  auto calls = store->session_calls("s1");
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[1].id, "c2");
  auto call = store->session_call(a.id, "c1");
  ASSERT_TRUE(call && *call);
  EXPECT_EQ((*call)->session_id, "s1");
  auto hidden = store->session_call(b.id, "c1");
  ASSERT_TRUE(hidden);
  EXPECT_FALSE(*hidden);

  auto rec = store->close_session("s1", "idle_timeout", "2026-01-01T00:10:00Z", R"({"kind":"session"})");
  ASSERT_TRUE(rec) << rec.error().message();
  EXPECT_EQ(rec->job_id, "s1");
  auto closed = store->session(a.id, "s1");
  ASSERT_TRUE(closed && *closed);
  EXPECT_EQ((*closed)->state, "closed");
  EXPECT_EQ((*closed)->close_reason, "idle_timeout");
  EXPECT_FALSE(store->close_session("s1", "closed", "", "{}"));  // once only
  auto stored = store->record(a.id, "s1");
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ(nlohmann::json::parse((*stored)->json)["kind"], "session");
  auto report = store->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok);
}

AIRLOCK_STORE_BACKENDS(StoreSessions);

}  // namespace
}  // namespace airlock::store
