// Store: opening, schema, tenants, API keys (hashed, revocable), uploaded files.
#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "store/schema.h"
#include "store/sqlite.h"
#include "store/secrets.h"
#include "store/store.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

using testing::slurp;

void raw_exec(const std::string& db_path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

TEST(StoreOpen, CreatesPrivateLayoutInWalModeAtCurrentVersion) {
  TempDir tmp;
  std::string dir = tmp.path() + "/data/service";
  auto store = Store::open(dir);
  ASSERT_TRUE(store) << store.error().message();
  struct stat st{};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((dir + "/airlock.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/artifacts/sha256"));

  auto db = Database::open(dir + "/airlock.db");
  ASSERT_TRUE(db);
  auto version = schema_version(*db);
  ASSERT_TRUE(version);
  EXPECT_EQ(*version, kSchemaVersion);
  auto mode = db->prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode && *mode->step());
  EXPECT_EQ(mode->text(0), "wal");
}

TEST(StoreOpen, ReopensAndKeepsData) {
  TempDir tmp;
  std::string id;
  {
    auto store = Store::open(tmp.path());
    ASSERT_TRUE(store);
    auto t = (*store)->create_tenant("acme", {});
    ASSERT_TRUE(t);
    id = t->id;
  }
  auto store = Store::open(tmp.path());
  ASSERT_TRUE(store) << store.error().message();
  auto t = (*store)->tenant(id);
  ASSERT_TRUE(t && *t);
  EXPECT_EQ((*t)->name, "acme");
}

TEST(StoreOpen, RefusesANewerSchema) {
  TempDir tmp;
  { ASSERT_TRUE(Store::open(tmp.path())); }
  raw_exec(tmp.path() + "/airlock.db", "PRAGMA user_version = 99");
  auto store = Store::open(tmp.path());
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message().find("newer"), std::string::npos);
}

TEST(StoreOpen, RefusesAFileWhereTheDirectoryShouldBe) {
  TempDir tmp;
  std::ofstream(tmp.path() + "/file") << "x";
  EXPECT_FALSE(Store::open(tmp.path() + "/file"));
}

TEST(StoreTenants, CreateLookUpListAndRefuseDuplicates) {
  TempDir tmp;
  auto store = std::move(*Store::open(tmp.path()));
  TenantLimits limits;
  limits.max_running = 4;
  limits.max_memory_bytes = 123456789;
  auto a = store->create_tenant("acme", limits);
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a->id.size(), 16u);
  EXPECT_FALSE(a->created_at.empty());
  ASSERT_TRUE(store->create_tenant("globex", {}));

  auto got = store->tenant(a->id);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->limits.max_running, 4);
  EXPECT_EQ((*got)->limits.max_memory_bytes, 123456789u);
  EXPECT_EQ((*got)->limits.max_queued, 50);
  auto by_name = store->tenant_by_name("acme");
  ASSERT_TRUE(by_name && *by_name);
  EXPECT_EQ((*by_name)->id, a->id);
  auto missing = store->tenant("nope");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  auto all = store->tenants();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "acme");

  EXPECT_FALSE(store->create_tenant("acme", {}));
  EXPECT_FALSE(store->create_tenant("", {}));
  EXPECT_FALSE(store->create_tenant("a b", {}));
  EXPECT_FALSE(store->create_tenant("../x", {}));
  TenantLimits bad;
  bad.max_running = 0;
  EXPECT_FALSE(store->create_tenant("zero", bad));
}

TEST(StoreKeys, SecretIsShownOnceAndOnlyItsHashIsStored) {
  TempDir tmp;
  std::string secret;
  {
    auto store = std::move(*Store::open(tmp.path()));
    auto t = store->create_tenant("acme", {});
    ASSERT_TRUE(t);
    auto created = store->create_key(t->id, "ci", {"run", "read"});
    ASSERT_TRUE(created) << created.error().message();
    auto& [key, s] = *created;
    secret = s;
    EXPECT_EQ(secret.rfind("alk_", 0), 0u);
    EXPECT_EQ(secret.size(), 4u + 43u);  // 32 bytes, base64url without padding
    EXPECT_EQ(key.id.size(), 16u);
    EXPECT_EQ(key.scopes, (std::set<std::string>{"read", "run"}));
    EXPECT_FALSE(key.revoked);
  }
  // Neither the secret nor its random part is anywhere in the files.
  std::string body = secret.substr(4);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(tmp.path())) {
    if (!entry.is_regular_file()) continue;
    std::string bytes = slurp(entry.path());
    EXPECT_EQ(bytes.find(body), std::string::npos) << entry.path();
  }
  std::string db = slurp(tmp.path() + "/airlock.db");
  EXPECT_NE(db.find(key_secret_hash(secret)), std::string::npos);
}

TEST(StoreKeys, AuthenticateRefusesWrongAndRevokedKeys) {
  TempDir tmp;
  auto store = std::move(*Store::open(tmp.path()));
  auto t = store->create_tenant("acme", {});
  auto created = store->create_key(t->id, "ci", {"run"});
  ASSERT_TRUE(created);
  const auto& [key, secret] = *created;

  auto ok = store->authenticate(secret);
  ASSERT_TRUE(ok && *ok);
  EXPECT_EQ((*ok)->id, key.id);
  EXPECT_EQ((*ok)->tenant_id, t->id);

  std::string wrong = secret;
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  for (const std::string& guess : {wrong, std::string(), std::string("alk_"), secret + "x",
                                   key_secret_hash(secret), std::string(100000, 'a')}) {
    auto r = store->authenticate(guess);
    ASSERT_TRUE(r);
    EXPECT_FALSE(*r) << guess.substr(0, 80);
  }

  ASSERT_TRUE(store->revoke_key(key.id));
  auto revoked = store->authenticate(secret);
  ASSERT_TRUE(revoked);
  EXPECT_FALSE(*revoked);
  EXPECT_TRUE(store->revoke_key(key.id));  // again: no-op
  EXPECT_FALSE(store->revoke_key("0000000000000000"));
  auto listed = store->keys(t->id);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE((*listed)[0].revoked);
}

TEST(StoreKeys, ListsPerTenantAndRefusesBadScopesAndTenants) {
  TempDir tmp;
  auto store = std::move(*Store::open(tmp.path()));
  auto a = store->create_tenant("acme", {});
  auto b = store->create_tenant("globex", {});
  ASSERT_TRUE(store->create_key(a->id, "one", {"run"}));
  ASSERT_TRUE(store->create_key(a->id, "two", {"admin", "publish"}));
  ASSERT_TRUE(store->create_key(b->id, "three", {"read"}));
  EXPECT_EQ(store->keys(a->id)->size(), 2u);
  EXPECT_EQ(store->keys(b->id)->size(), 1u);
  EXPECT_EQ(store->keys("")->size(), 3u);
  auto k = store->key((*store->keys(b->id))[0].id);
  ASSERT_TRUE(k && *k);
  EXPECT_EQ((*k)->name, "three");

  EXPECT_FALSE(store->create_key(a->id, "x", {"root"}));
  EXPECT_FALSE(store->create_key(a->id, "x", {}));
  EXPECT_FALSE(store->create_key("no-such-tenant", "x", {"run"}));
  EXPECT_FALSE(store->create_key(a->id, "bad\nname", {"run"}));
}

TEST(StoreFiles, AddAndLookUpOnlyWithinTheTenant) {
  TempDir tmp;
  auto store = std::move(*Store::open(tmp.path()));
  auto a = store->create_tenant("acme", {});
  auto b = store->create_tenant("globex", {});
  FileRow row;
  row.tenant_id = a->id;
  row.name = "data.csv";
  row.size = 42;
  row.sha256 = std::string(64, 'a');
  row.path = tmp.path() + "/data.csv";  // add_file syncs it before its row commits
  std::ofstream(row.path) << "data";
  auto added = store->add_file(row);
  ASSERT_TRUE(added) << added.error().message();
  EXPECT_FALSE(added->id.empty());
  EXPECT_FALSE(added->created_at.empty());

  auto mine = store->file(a->id, added->id);
  ASSERT_TRUE(mine && *mine);
  EXPECT_EQ((*mine)->name, "data.csv");
  EXPECT_EQ((*mine)->size, 42u);
  EXPECT_EQ((*mine)->path, row.path);
  auto theirs = store->file(b->id, added->id);
  ASSERT_TRUE(theirs);
  EXPECT_FALSE(*theirs);

  row.sha256 = "not-a-hash";
  EXPECT_FALSE(store->add_file(row));
  row.sha256 = std::string(64, 'b');
  row.tenant_id = "no-such-tenant";
  EXPECT_FALSE(store->add_file(row));  // foreign key
}

TEST(StoreSecrets, Base64UrlRoundTripsAndIsCanonical) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00\x01"}) {
    auto enc = base64url_encode(s);
    EXPECT_EQ(enc.find('='), std::string::npos);
    auto dec = base64url_decode(enc);
    ASSERT_TRUE(dec) << enc;
    EXPECT_EQ(*dec, s);
  }
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
  EXPECT_FALSE(base64url_decode("a"));
  EXPECT_FALSE(base64url_decode("ab+/"));
  EXPECT_FALSE(base64url_decode("Zh"));  // non-zero leftover bits
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  auto a = new_key_secret();
  auto b = new_key_secret();
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
}

}  // namespace
}  // namespace airlock::store
