// Store: workspace snapshots (rows, tenant isolation, deletion, expiry,
// records in the chain) and retention keeping contents a snapshot uses.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"
#include "workspace/snapshot_tree.h"

namespace airlock::store {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string at(int day) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "2026-01-%02dT12:00:00.000Z", day);
  return buf;
}

class StoreSnapshots : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(tmp_.path() + "/data", store_, options_);
    a_ = store_->create_tenant("acme", {})->id;
    b_ = store_->create_tenant("globex", {})->id;
  }

  // Captures a tree of {name: bytes} files through the store's contents.
  std::string capture(const std::map<std::string, std::string>& files) {
    std::string dir = tmp_.path() + "/tree" + std::to_string(++trees_);
    fs::create_directory(dir);
    for (const auto& [name, bytes] : files) std::ofstream(dir + "/" + name) << bytes;
    UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    std::vector<std::string> created;
    auto captured = workspace::capture_tree(root.get(), store_->contents(), {}, created);
    EXPECT_TRUE(captured) << captured.error().message();
    fs::remove_all(dir);
    return captured->manifest.to_json();
  }

  SnapshotRow add(const std::string& tenant, const std::string& manifest, int day,
                  const std::string& expires = "") {
    SnapshotRow row{.tenant_id = tenant, .manifest_json = manifest, .source = "session-1",
                    .created_at = at(day), .expires_at = expires};
    auto added = store_->add_snapshot(row);
    EXPECT_TRUE(added) << added.error().message();
    EXPECT_TRUE(added->second);
    return added->first;
  }

  bool stored(const std::string& bytes) { return fs::exists(store_->artifact_path(Sha256::of(bytes))); }

  // The json of `tenant`'s records without a job, oldest first, read from the
  // database directly (the store looks records up by job id only).
  std::vector<nlohmann::json> store_records(const std::string& tenant) {
    std::vector<nlohmann::json> out;
    auto db = testing::raw_connection(options_, tmp_.path() + "/data");
    EXPECT_TRUE(db) << db.error().message();
    if (!db) return out;
    auto stmt = (*db)->prepare("SELECT json FROM records WHERE tenant_id = ?1 AND job_id = '' ORDER BY seq");
    EXPECT_TRUE(stmt) << stmt.error().message();
    if (!stmt) return out;
    stmt->bind(1, tenant);
    auto st = each_row(*stmt, [&](const Statement& r) { out.push_back(nlohmann::json::parse(r.text(0))); });
    EXPECT_TRUE(st) << st.error().message();
    return out;
  }

  TempDir tmp_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  std::string a_, b_;
  int trees_ = 0;
};

TEST_P(StoreSnapshots, AddGetListAndAddingAgain) {
  std::string m1 = capture({{"a.txt", "one"}});
  std::string m2 = capture({{"a.txt", "two"}, {"b.txt", "three"}});
  SnapshotRow s1 = add(a_, m1, 1);
  SnapshotRow s2 = add(a_, m2, 2, at(9));
  EXPECT_EQ(s2.digest, "sha256:" + Sha256::of(m2));
  EXPECT_EQ(s2.size_bytes, 8u);
  EXPECT_EQ(s2.entries, 2u);
  auto got = store_->snapshot(a_, s2.digest);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->manifest_json, m2);
  EXPECT_EQ((*got)->expires_at, at(9));
  EXPECT_EQ((*got)->source, "session-1");
  auto list = store_->snapshots(a_);
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].digest, s2.digest);  // newest first
  EXPECT_EQ((*list)[1].digest, s1.digest);

  // The same content again returns the existing row, unchanged.
  SnapshotRow again{.tenant_id = a_, .manifest_json = m1, .source = "other", .created_at = at(5)};
  auto added = store_->add_snapshot(again);
  ASSERT_TRUE(added);
  EXPECT_FALSE(added->second);
  EXPECT_EQ(added->first.created_at, at(1));
  EXPECT_EQ(added->first.source, "session-1");
  EXPECT_EQ(store_->snapshots(a_)->size(), 2u);
}

TEST_P(StoreSnapshots, RefusesBadManifestsWrongDigestsAndMissingContents) {
  std::string m = capture({{"a.txt", "one"}});
  SnapshotRow bad{.tenant_id = a_, .manifest_json = R"({"version":1,"entries":[{"kind":"fifo"}]})"};
  auto r = store_->add_snapshot(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("snapshot manifest"), std::string::npos);
  SnapshotRow wrong{.tenant_id = a_, .digest = "sha256:" + std::string(64, '0'), .manifest_json = m};
  r = store_->add_snapshot(wrong);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("does not match its manifest"), std::string::npos);
  ASSERT_TRUE(store_->contents().remove(Sha256::of("one")));
  r = store_->add_snapshot(SnapshotRow{.tenant_id = a_, .manifest_json = m});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find(Sha256::of("one") + " is not stored"), std::string::npos);
  EXPECT_TRUE(store_->snapshots(a_)->empty());
}

TEST_P(StoreSnapshots, AnotherTenantsSnapshotAnswersAsMissing) {
  SnapshotRow s = add(a_, capture({{"a.txt", "acme's"}}), 1);
  EXPECT_FALSE(*store_->snapshot(b_, s.digest));
  EXPECT_TRUE(store_->snapshots(b_)->empty());
  auto deleted = store_->delete_snapshot(b_, s.digest);
  ASSERT_TRUE(deleted);
  EXPECT_FALSE(*deleted);
  EXPECT_TRUE(*store_->snapshot(a_, s.digest));
  EXPECT_TRUE(stored("acme's"));
}

// For an admin key: every tenant's snapshots, newest first, and every tenant's
// snapshot with one digest (two tenants capturing the same tree share it).
TEST_P(StoreSnapshots, EveryTenantsSnapshotsAndEveryTenantsWithOneDigest) {
  SnapshotRow same_a = add(a_, capture({{"a.txt", "same"}}), 1);
  SnapshotRow same_b = add(b_, capture({{"a.txt", "same"}}), 3);
  SnapshotRow other = add(b_, capture({{"b.txt", "globex's"}}), 2);
  ASSERT_EQ(same_a.digest, same_b.digest);
  auto all = store_->snapshots_of_every_tenant();
  ASSERT_TRUE(all) << all.error().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].tenant_id, b_);
  EXPECT_EQ((*all)[0].digest, same_b.digest);
  EXPECT_EQ((*all)[1].digest, other.digest);
  EXPECT_EQ((*all)[2].tenant_id, a_);
  auto shared = store_->snapshots_with_digest(same_a.digest);
  ASSERT_TRUE(shared);
  ASSERT_EQ(shared->size(), 2u);
  EXPECT_EQ((*shared)[0].tenant_id, a_);  // the first taken first
  EXPECT_EQ((*shared)[1].tenant_id, b_);
  EXPECT_TRUE(store_->snapshots_with_digest("sha256:" + std::string(64, '0'))->empty());
  // The tenant queries still see only their own.
  EXPECT_EQ(store_->snapshots(a_)->size(), 1u);
}

TEST_P(StoreSnapshots, DeleteRemovesUnsharedContentsAndAppendsARecord) {
  SnapshotRow s1 = add(a_, capture({{"a.txt", "shared"}, {"b.txt", "only s1"}}), 1);
  SnapshotRow s2 = add(b_, capture({{"c.txt", "shared"}}), 2);
  auto deleted = store_->delete_snapshot(a_, s1.digest, at(3));
  ASSERT_TRUE(deleted && *deleted);
  EXPECT_FALSE(*store_->snapshot(a_, s1.digest));
  EXPECT_FALSE(stored("only s1"));
  EXPECT_TRUE(stored("shared"));  // globex's snapshot still holds it
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << report->problems[0];
  EXPECT_EQ(report->records, 1u);
  auto records = store_records(a_);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["reason"], "deleted");
  EXPECT_EQ(records[0]["released_contents"], 1);  // "only s1"; "shared" is still used
  ASSERT_TRUE(store_->delete_snapshot(b_, s2.digest, at(4)));
  EXPECT_FALSE(stored("shared"));
  EXPECT_TRUE(store_->verify()->ok);
  EXPECT_FALSE(*store_->delete_snapshot(a_, s1.digest));  // already gone
}

TEST_P(StoreSnapshots, ExpiryRemovesExpiredSnapshotsFromDiskWithARecord) {
  SnapshotRow old1 = add(a_, capture({{"a.txt", "old one"}}), 1, at(5));
  SnapshotRow keep = add(a_, capture({{"a.txt", "kept"}}), 2, at(20));
  SnapshotRow forever = add(b_, capture({{"a.txt", "forever"}}), 3);
  SnapshotRow old2 = add(b_, capture({{"a.txt", "old two"}}), 4, at(6));

  auto removed = store_->expire_snapshots(at(6));
  ASSERT_TRUE(removed) << removed.error().message();
  EXPECT_EQ(*removed, 2u);
  EXPECT_FALSE(*store_->snapshot(a_, old1.digest));
  EXPECT_FALSE(*store_->snapshot(b_, old2.digest));
  EXPECT_TRUE(*store_->snapshot(a_, keep.digest));
  EXPECT_TRUE(*store_->snapshot(b_, forever.digest));
  EXPECT_FALSE(stored("old one"));
  EXPECT_FALSE(stored("old two"));
  EXPECT_TRUE(stored("kept"));
  EXPECT_TRUE(stored("forever"));
  EXPECT_EQ(*store_->expire_snapshots(at(6)), 0u);

  // One record per removal, in each tenant's chain, and the chains verify.
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << report->problems[0];
  EXPECT_EQ(report->records, 2u);
  auto records = store_records(a_);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["kind"], "snapshot_removed");
  EXPECT_EQ(records[0]["reason"], "expired");
  EXPECT_EQ(records[0]["digest"], old1.digest);
  EXPECT_EQ(records[0]["released_contents"], 1);
  records = store_records(b_);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["digest"], old2.digest);
}

TEST_P(StoreSnapshots, RetentionKeepsContentsASnapshotStillUses) {
  // A job's artifact and a snapshot hold the same bytes.
  std::string bytes = "chart bytes";
  std::string src = tmp_.path() + "/out";
  std::ofstream(src) << bytes;
  ASSERT_TRUE(store_->put_artifact(src, Sha256::of(bytes)));
  JobRow row{.tenant_id = a_, .key_id = "k", .request_json = "{}", .created_at = at(1)};
  auto job = store_->create_job(row);
  ASSERT_TRUE(job);
  ASSERT_TRUE(store_->finish_job(job->first.id, "succeeded", at(1), "{}",
                                 {{"", "chart.txt", Sha256::of(bytes), "text", bytes.size()}}));
  add(a_, capture({{"same.txt", bytes}}), 2);

  auto removed = store_->remove_older_than(at(10), at(11));
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 1u);
  EXPECT_TRUE(stored(bytes));  // the artifact row is gone; the snapshot still needs the file
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << report->problems[0];
}

TEST_P(StoreSnapshots, RetentionRemovesOldSnapshotRecords) {
  SnapshotRow s1 = add(a_, capture({{"a.txt", "1"}}), 1);
  SnapshotRow s2 = add(a_, capture({{"a.txt", "2"}}), 1);
  ASSERT_TRUE(store_->delete_snapshot(a_, s1.digest, at(2)));
  ASSERT_TRUE(store_->delete_snapshot(a_, s2.digest, at(3)));
  ASSERT_EQ(store_->verify()->records, 2u);
  // Only removal records are old: retention takes them (and records that it did).
  ASSERT_TRUE(store_->remove_older_than(at(10), at(11)));
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << report->problems[0];
  EXPECT_EQ(report->records, 1u);  // the retention record
  // And it is not replaced again at the next run.
  ASSERT_TRUE(store_->remove_older_than(at(12), at(13)));
  EXPECT_EQ(store_->verify()->records, 1u);
}

// Files and bytes under the content directory, walked behind the store's back.
std::pair<size_t, uint64_t> content_dir_usage(const std::string& data_dir) {
  size_t files = 0;
  uint64_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(data_dir + "/artifacts"))
    if (e.is_regular_file()) {
      ++files;
      bytes += e.file_size();
    }
  return {files, bytes};
}

// Issue 11 item 17: three refused captures left +450 MB in the store for good.
TEST_P(StoreSnapshots, ARefusedCaptureLeavesTheContentDirectoryAsItWas) {
  SnapshotRow kept = add(a_, capture({{"kept.txt", "kept bytes"}}), 1);
  const auto before = content_dir_usage(tmp_.path() + "/data");
  std::string dir = tmp_.path() + "/big";
  fs::create_directory(dir);
  std::ofstream(dir + "/a.txt") << "kept bytes";  // stored already: not this capture's to remove
  std::ofstream(dir + "/b.bin") << std::string(600 << 10, 'b');
  std::ofstream(dir + "/c.bin") << std::string(600 << 10, 'c');
  UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::vector<std::string> created;
  auto refused = workspace::capture_tree(root.get(), store_->contents(), {.max_bytes = 1 << 20}, created);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what.find("(limit)"), std::string::npos) << refused.error().what;
  EXPECT_EQ(created, std::vector<std::string>{Sha256::of(std::string(600 << 10, 'b'))});
  EXPECT_GT(content_dir_usage(tmp_.path() + "/data").second, before.second) << "b.bin was stored before the refusal";
  store_->release_contents(created);
  EXPECT_EQ(content_dir_usage(tmp_.path() + "/data"), before);
  EXPECT_TRUE(stored("kept bytes"));
  EXPECT_TRUE(*store_->snapshot(a_, kept.digest));
}

TEST_P(StoreSnapshots, ASnapshotBeyondTheTenantsQuotaIsRefusedAnotherTenantsIsNot) {
  add(a_, capture({{"old.bin", std::string(3000, 'o')}}), 1);  // acme keeps 3000 bytes
  const auto before = content_dir_usage(tmp_.path() + "/data");
  std::string dir = tmp_.path() + "/q";
  fs::create_directory(dir);
  std::ofstream(dir + "/new.bin") << std::string(2000, 'n');
  UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::vector<std::string> created;
  auto captured = workspace::capture_tree(root.get(), store_->contents(), {}, created);
  ASSERT_TRUE(captured);
  const std::string manifest = captured->manifest.to_json();
  auto refused = store_->add_snapshot({.tenant_id = a_, .manifest_json = manifest}, /*quota_bytes=*/4000);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().err, EDQUOT);
  EXPECT_NE(refused.error().what.find("storage quota: the tenant keeps 3000 of its 4000 bytes"), std::string::npos)
      << refused.error().what;
  EXPECT_EQ(store_->snapshots(a_)->size(), 1u);
  // globex keeps nothing: the same snapshot fits its quota.
  auto fits = store_->add_snapshot({.tenant_id = b_, .manifest_json = manifest}, 4000);
  ASSERT_TRUE(fits) << fits.error().message();
  auto used = store_->storage_usage(b_);
  ASSERT_TRUE(used);
  EXPECT_EQ(used->snapshots, 2000u);
  EXPECT_EQ(store_->storage_usage(a_)->total(), 3000u);
  // Released after the refusal, the content stays: globex's snapshot holds it now.
  store_->release_contents(created);
  EXPECT_TRUE(stored(std::string(2000, 'n')));
  EXPECT_GT(content_dir_usage(tmp_.path() + "/data").first, before.first);
}

TEST_P(StoreSnapshots, ReleasedArtifactsGoOnlyWhenNoOtherPutStillClaimsThem) {
  std::string bytes = "output of two jobs";
  std::string src = tmp_.path() + "/out";
  std::ofstream(src) << bytes;
  ASSERT_TRUE(store_->put_artifact(src, Sha256::of(bytes)));  // job one
  ASSERT_TRUE(store_->put_artifact(src, Sha256::of(bytes)));  // job two, at the same time
  store_->release_artifacts({Sha256::of(bytes)});              // job one is refused
  EXPECT_TRUE(stored(bytes)) << "job two's artifact lost its file";
  store_->release_artifacts({Sha256::of(bytes)});  // job two too
  EXPECT_FALSE(stored(bytes));
}

AIRLOCK_STORE_BACKENDS(StoreSnapshots);

}  // namespace
}  // namespace airlock::store
