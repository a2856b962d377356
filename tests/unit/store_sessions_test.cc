// Store: sessions, their calls, and closing into the tenant's chain.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

struct Fixture {
  TempDir dir;
  std::unique_ptr<Store> store;
  Tenant a, b;
  Fixture() {
    store = std::move(*Store::open(dir.path()));
    a = *store->create_tenant("a", {});
    b = *store->create_tenant("b", {});
  }
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

TEST(StoreSessions, CreateListAndTenantIsolation) {
  Fixture f;
  ASSERT_TRUE(f.store->create_session(f.row("s1", f.a, "2026-01-01T00:00:00Z")));
  ASSERT_TRUE(f.store->create_session(f.row("s2", f.a, "2026-01-02T00:00:00Z")));
  ASSERT_TRUE(f.store->create_session(f.row("s3", f.b, "2026-01-02T00:00:00Z")));
  EXPECT_FALSE(f.store->create_session(f.row("s1", f.b, "2026-01-03T00:00:00Z")));  // ids are unique

  auto got = f.store->session(f.a.id, "s1");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->state, "open");
  auto other = f.store->session(f.b.id, "s1");  // another tenant's session answers as missing
  ASSERT_TRUE(other);
  EXPECT_FALSE(*other);

  auto list = f.store->sessions(f.a.id, 10);
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, "s2");  // newest first
  auto open = f.store->open_sessions();
  ASSERT_TRUE(open);
  EXPECT_EQ(open->size(), 3u);
}

// For an admin key: any tenant's session and call, every tenant's sessions newest first.
TEST(StoreSessions, EveryTenantsSessionsAndCalls) {
  Fixture f;
  ASSERT_TRUE(f.store->create_session(f.row("s1", f.a, "2026-01-01T00:00:00Z")));
  ASSERT_TRUE(f.store->create_session(f.row("s2", f.b, "2026-01-02T00:00:00Z")));
  ASSERT_TRUE(f.store->create_session(f.row("s3", f.a, "2026-01-03T00:00:00Z")));
  ASSERT_TRUE(f.store->add_session_call({"s2", "c1", 1, R"({"status":"ok"})"}));
  auto all = f.store->sessions_of_every_tenant(10);
  ASSERT_TRUE(all) << all.error().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, "s3");
  EXPECT_EQ((*all)[1].id, "s2");
  EXPECT_EQ((*all)[1].tenant_id, f.b.id);
  EXPECT_EQ(f.store->sessions_of_every_tenant(2)->size(), 2u);
  auto any = f.store->session_of_any_tenant("s2");
  ASSERT_TRUE(any && *any);
  EXPECT_EQ((*any)->tenant_id, f.b.id);
  EXPECT_FALSE(*f.store->session_of_any_tenant("no-such"));
  auto call = f.store->session_call_of_any_tenant("c1");
  ASSERT_TRUE(call && *call);
  EXPECT_EQ((*call)->session_id, "s2");
  EXPECT_FALSE(*f.store->session_call_of_any_tenant("c2"));
  EXPECT_FALSE(*f.store->session_call(f.a.id, "c1"));  // the tenant query still hides it
}

TEST(StoreSessions, CallsAndCloseAppendToTheChain) {
  Fixture f;
  ASSERT_TRUE(f.store->create_session(f.row("s1", f.a, "2026-01-01T00:00:00Z")));
  ASSERT_TRUE(f.store->add_session_call({"s1", "c1", 1, R"({"status":"ok"})"}));
  ASSERT_TRUE(f.store->add_session_call({"s1", "c2", 2, R"({"status":"error"})"}));
  EXPECT_FALSE(f.store->add_session_call({"s1", "c3", 3, "not json"}));
  auto calls = f.store->session_calls("s1");
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[1].id, "c2");
  auto call = f.store->session_call(f.a.id, "c1");
  ASSERT_TRUE(call && *call);
  EXPECT_EQ((*call)->session_id, "s1");
  auto hidden = f.store->session_call(f.b.id, "c1");
  ASSERT_TRUE(hidden);
  EXPECT_FALSE(*hidden);

  auto rec = f.store->close_session("s1", "idle_timeout", "2026-01-01T00:10:00Z", R"({"kind":"session"})");
  ASSERT_TRUE(rec) << rec.error().message();
  EXPECT_EQ(rec->job_id, "s1");
  auto closed = f.store->session(f.a.id, "s1");
  ASSERT_TRUE(closed && *closed);
  EXPECT_EQ((*closed)->state, "closed");
  EXPECT_EQ((*closed)->close_reason, "idle_timeout");
  EXPECT_FALSE(f.store->close_session("s1", "closed", "", "{}"));  // once only
  auto stored = f.store->record(f.a.id, "s1");
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ(nlohmann::json::parse((*stored)->json)["kind"], "session");
  auto report = f.store->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok);
}

}  // namespace
}  // namespace airlock::store
