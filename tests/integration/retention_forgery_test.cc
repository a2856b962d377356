// A forged retention record against signed checkpoints (docs/store.md,
// "Retention" and "Checkpoints"), with a real serve and the real `airlock
// verify`: the service's own retention, signed with its checkpoint key, passes
// `verify --checkpoints`; a tenant's records and jobs deleted behind its back
// with a retention record claiming them (through the last checkpointed seq,
// with that checkpoint's signed head) pass plain verify and are refused by
// `verify --checkpoints`, which says why.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "jobs/record.h"
#include "checkpoint_helpers.h"
#include "run_helpers.h"
#include "service_fixture.h"
#include "store/chain.h"
#include "store/store.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

// Runs SQL on the database file, the store stopped. Returns the error text, "" on success.
std::string sql(const std::string& db_path, const std::string& text) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) return "open failed";
  char* err = nullptr;
  int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  std::string msg = rc == SQLITE_OK ? "" : (err ? err : "error");
  sqlite3_free(err);
  sqlite3_close(db);
  return msg;
}

// The first column of the first row of `query`, "" when none.
std::string sql_value(const std::string& db_path, const std::string& query) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, query.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr)
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

std::vector<json> lines_of(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(json::parse(l));
  return out;
}

}  // namespace

TEST(RetentionForgery, AForgedRemovalOfCheckpointedRecordsIsRefusedTheServicesOwnIsNot) {
  KeyDir keys;
  const std::string key = keys.path + "/checkpoint.pem", file = keys.path + "/checkpoints.jsonl",
                    config = keys.path + "/serve.toml";
  ASSERT_EQ(run_airlock({"keys", "checkpoint-key", "--out", key}).status, 0);
  std::ofstream(config) << "checkpoint_key = \"" << key << "\"\ncheckpoint_file = \"" << file
                        << "\"\ncheckpoint_interval_s = 3600\nretention_days = 30\n";

  // Two lives of the service, each ending with a checkpoint of both tenants: 4 lines.
  ServiceProcess svc({"--config", config});
  for (int life = 0; life < 2; ++life) {
    if (life > 0) svc.start();
    HttpClient http = svc.client();
    for (int i = 0; i < 2 - life; ++i)
      EXPECT_EQ(run_job(http, svc.alpha, {{"command", {"true"}}})["outcome"], "succeeded");
    EXPECT_EQ(run_job(http, svc.beta, {{"command", {"true"}}})["outcome"], "succeeded");
    ASSERT_EQ(svc.stop(), 0) << svc.log();
  }
  ASSERT_EQ(lines_of(file).size(), 4u);
  const std::string alpha = tenant_id(svc.data_dir(), "alpha");
  const std::string db = svc.data_dir() + "/airlock.db";
  const std::vector<std::string> with_checkpoints = {
      "verify",    "--data-dir", svc.data_dir(), "--checkpoints", file, "--checkpoint-public-key",
      key + ".pub"};
  auto intact = run_airlock(with_checkpoints);
  EXPECT_EQ(intact.status, 0) << intact.out << intact.err;
  EXPECT_NE(intact.out.find("chains intact, 4 checkpoints match"), std::string::npos) << intact.out;

  // The service's own retention: alpha's first two records made 40 days old
  // (created_at is not hashed), then a start runs retention at once.
  const std::string old =
      airlock::jobs::rfc3339(std::chrono::system_clock::now() - std::chrono::hours(24 * 40));
  ASSERT_EQ(
      sql(db, "BEGIN; DROP TRIGGER records_append_only; UPDATE records SET created_at = '" + old +
                  "' WHERE tenant_id = '" + alpha +
                  "' AND seq <= 2; CREATE TRIGGER records_append_only BEFORE UPDATE ON records "
                  "BEGIN SELECT RAISE(ABORT, 'records are append-only'); END; COMMIT"),
      "");
  svc.start();
  const std::string retention_query = "SELECT json FROM records WHERE tenant_id = '" + alpha +
                                      "' AND job_id = '' ORDER BY seq DESC LIMIT 1";
  for (int waited = 0; waited < 10000 && sql_value(db, retention_query).empty(); waited += 50)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(svc.stop(), 0) << svc.log();
  json retention = json::parse(sql_value(db, retention_query), nullptr, false);
  ASSERT_TRUE(retention.is_object()) << svc.log();
  EXPECT_EQ(retention["removed_through_seq"], 2);
  EXPECT_EQ(retention["retention_days"], 30);
  EXPECT_EQ(retention["removed_through_time"], old);
  EXPECT_TRUE(retention.contains("sig")) << retention.dump();
  auto after_retention = run_airlock(with_checkpoints);
  EXPECT_EQ(after_retention.status, 0) << after_retention.out << after_retention.err;
  // Both heads again: a service signs every head at its first checkpoint.
  EXPECT_NE(after_retention.out.find("chains intact, 6 checkpoints match"), std::string::npos)
      << after_retention.out;

  // The forgery: alpha's records and jobs deleted, a retention record claiming
  // them through alpha's last checkpointed seq with its signed head, the chain
  // head moved to it.
  json last;
  for (const auto& l : lines_of(file))
    if (l["tenant"] == alpha) last = l;
  const int64_t through = last["seq"];
  const std::string head = last["head"];
  std::vector<std::string> jobs;
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2(h, ("SELECT id FROM jobs WHERE tenant_id = '" + alpha + "'").c_str(), -1,
                           &st, nullptr),
        SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
      jobs.push_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    sqlite3_close(h);
  }
  const std::string forged = airlock::store::retention_record_json(jobs, through, head);
  const std::string hash = airlock::store::record_hash(head, forged);
  const std::string seq = std::to_string(through + 1);
  auto quoted = [](std::string s) {
    for (size_t at = 0; (at = s.find('\'', at)) != std::string::npos; at += 2) s.insert(at, "'");
    return "'" + s + "'";
  };
  ASSERT_EQ(
      sql(db, "BEGIN; DELETE FROM records WHERE tenant_id = '" + alpha +
                  "'; DELETE FROM jobs WHERE tenant_id = '" + alpha +
                  "'; INSERT INTO records (tenant_id, seq, job_id, prev_hash, hash, json, "
                  "created_at) VALUES ('" +
                  alpha + "', " + seq + ", '', '" + head + "', '" + hash + "', " + quoted(forged) +
                  ", '" + airlock::jobs::now_rfc3339() + "'); UPDATE chain_heads SET seq = " + seq +
                  ", hash = '" + hash + "' WHERE tenant_id = '" + alpha + "'; COMMIT"),
      "");

  auto plain = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(plain.status, 0) << "the forgery is consistent: " << plain.out << plain.err;
  auto caught = run_airlock(with_checkpoints);
  EXPECT_EQ(caught.status, 1) << caught.out << caught.err;
  EXPECT_NE(caught.out.find("tenant " + alpha + ": retention record at seq " + seq +
                            " (removing through seq " + std::to_string(through) +
                            ") is not signed by the checkpoint key"),
            std::string::npos)
      << caught.out;
  EXPECT_NE(caught.err.find("1 problem(s)"), std::string::npos) << caught.err;
}
