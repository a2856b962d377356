// Store, on both backends: the database itself refuses to rewrite a record,
// hostile text is stored inert and byte for byte, and the schema is the same.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/postgres.h"
#include "store/schema.h"
#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

class StoreBackend : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(tmp_.path(), store_, options_);
    a_ = store_->create_tenant("acme", {})->id;
  }
  StoredRecord finished_job(const std::string& record_json) {
    JobRow row;
    row.tenant_id = a_;
    row.key_id = "k";
    row.request_json = record_json;
    auto created = store_->create_job(row);
    EXPECT_TRUE(created) << created.error().message();
    auto stored = store_->finish_job(created->first.id, "succeeded", "", record_json, {});
    EXPECT_TRUE(stored) << stored.error().message();
    return stored ? *stored : StoredRecord{};
  }
  TempDir tmp_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  std::string a_;
};

TEST_P(StoreBackend, UpdatingARecordIsRefusedByTheDatabase) {
  StoredRecord r = finished_job(R"({"outcome":"succeeded"})");
  auto db = testing::raw_connection(options_, tmp_.path());
  ASSERT_TRUE(db) << db.error().message();
  auto changed = (*db)->exec("UPDATE records SET json = '{}' WHERE seq = 1");
  ASSERT_FALSE(changed);
  EXPECT_NE(changed.error().what.find("append-only"), std::string::npos) << changed.error().what;
  EXPECT_EQ((*store_->record(a_, r.job_id))->json, r.json);
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok);
}

TEST_P(StoreBackend, HostileTextIsStoredInertByteForByte) {
  // SQL, both backends' placeholders, quotes and a comment, in a record and a file name.
  const std::string nasty = "x'); DROP TABLE jobs; -- ?1 $1 \"?2\" \\ \xc3\xa9";
  nlohmann::json rec = {{"outcome", "succeeded"}, {"note", nasty}};
  StoredRecord r = finished_job(rec.dump());
  EXPECT_EQ((*store_->record(a_, r.job_id))->json, rec.dump());
  FileRow file{.tenant_id = a_, .name = nasty, .size = 1, .sha256 = std::string(64, 'c'),
               .path = tmp_.path() + "/upload"};
  std::ofstream(file.path) << "x";
  auto added = store_->add_file(file);
  ASSERT_TRUE(added) << added.error().message();
  EXPECT_EQ((*store_->file(a_, added->id))->name, nasty);
  EXPECT_EQ(store_->jobs(a_, {})->jobs.size(), 1u);  // the jobs table is still there
}

TEST_P(StoreBackend, ATextWithANulByteIsStoredWholeOrRefusedNeverCut) {
  FileRow file{.tenant_id = a_, .name = std::string("a\0b", 3), .size = 1,
               .sha256 = std::string(64, 'd'), .path = tmp_.path() + "/upload"};
  std::ofstream(file.path) << "x";
  auto added = store_->add_file(file);
  if (GetParam() == testing::Backend::kPostgres) {
    // PostgreSQL's text cannot hold NUL; libpq would cut the value at it.
    ASSERT_FALSE(added);
    EXPECT_NE(added.error().what.find("NUL byte"), std::string::npos) << added.error().what;
  } else {
    ASSERT_TRUE(added) << added.error().message();
    EXPECT_EQ((*store_->file(a_, added->id))->name, file.name);
  }
}

TEST_P(StoreBackend, OneSchemaAtTheCurrentVersionAndReopeningKeepsTheRows) {
  StoredRecord r = finished_job(R"({"outcome":"succeeded"})");
  store_.reset();
  auto reopened = Store::open(tmp_.path(), options_);  // migrate() again: nothing to do
  ASSERT_TRUE(reopened) << reopened.error().message();
  store_ = std::move(*reopened);
  EXPECT_EQ((*store_->record(a_, r.job_id))->hash, r.hash);
  auto db = testing::raw_connection(options_, tmp_.path());
  ASSERT_TRUE(db) << db.error().message();
  auto version = schema_version(**db);
  ASSERT_TRUE(version) << version.error().message();
  EXPECT_EQ(*version, kSchemaVersion);
  // Integers are 64-bit on both (PostgreSQL: BIGINT, not INTEGER).
  auto t = store_->create_tenant("big", TenantLimits{.max_memory_bytes = uint64_t{1} << 40});
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ((*store_->tenant(t->id))->limits.max_memory_bytes, uint64_t{1} << 40);
}

AIRLOCK_STORE_BACKENDS(StoreBackend);

TEST(StorePostgresUrl, ARefusedConnectionNeverRepeatsThePassword) {
  // Port 1 of loopback: nothing listens there; the connection is refused at once.
  auto c = open_postgres("postgresql://airlock:sekrit-pw@127.0.0.1:1/airlock?connect_timeout=2");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().what.find("connect to PostgreSQL"), std::string::npos) << c.error().what;
  EXPECT_EQ(c.error().what.find("sekrit-pw"), std::string::npos) << c.error().what;
  TempDir tmp;
  auto store = Store::open(tmp.path(), StoreOptions{.database_url = "postgresql://airlock:sekrit-pw@127.0.0.1:1/x"});
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().what.find("sekrit-pw"), std::string::npos) << store.error().what;
}

TEST(StorePostgresUrl, OnlyAPostgresUrlIsADatabaseUrl) {
  EXPECT_TRUE(is_postgres_url("postgresql://u@h:5432/db"));
  EXPECT_TRUE(is_postgres_url("postgres://u@h/db"));
  EXPECT_FALSE(is_postgres_url("sqlite:///var/lib/x.db"));
  EXPECT_FALSE(is_postgres_url("host=127.0.0.1 dbname=x"));  // libpq's key=value form is not accepted
  auto c = open_postgres("host=127.0.0.1 port=1 dbname=x");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::kInvalid);
}

}  // namespace
}  // namespace airlock::store
