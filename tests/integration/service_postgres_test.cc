// airlock serve --database-url: jobs end to end with the rows in a real
// PostgreSQL (started by the test, tests/support/postgres_server.h), the
// artifacts in the data directory; a restart finds them; tenants stay apart.
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "service_fixture.h"
#include "store/store.h"
#include "support/postgres_server.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

// The URL of a new database, or "" with the test skipped.
std::string new_database(std::string* skip) {
  std::string why;
  auto* server = shared_postgres(&why);
  if (!server) {
    *skip = "PostgreSQL not tested: " + why;
    return "";
  }
  auto url = server->create_database();
  if (!url) *skip = "";
  EXPECT_TRUE(url) << url.error().message();
  return url ? *url : "";
}

}  // namespace

TEST(ServicePostgres, JobsRecordsAndOutputsLiveInPostgresAndSurviveARestart) {
  std::string skip;
  std::string url = new_database(&skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_FALSE(url.empty());
  ServiceProcess svc({"--database-url", url});
  ASSERT_NE(svc.port(), 0) << svc.log();
  HttpClient http(svc.port());

  json job = run_job(http, svc.alpha, {{"command", {"sh", "-c", "echo hi > /output/out.txt; echo done"}}});
  ASSERT_EQ(job["state"], "finished") << job.dump(2);
  EXPECT_EQ(job["outcome"], "succeeded");
  EXPECT_EQ(job["record"]["stdout"]["text"], "done\n");
  std::string id = job["id"];
  auto out = http.request("GET", "/v1/jobs/" + id + "/outputs/out.txt", "", svc.alpha.auth());
  EXPECT_EQ(out.status, 200);
  EXPECT_EQ(out.body, "hi\n");
  EXPECT_EQ(out.headers["x-content-sha256"], airlock::Sha256::of("hi\n"));

  // Idempotency and a failing job, through the same database.
  json body = {{"command", {"false"}}, {"wait_s", 60}};
  auto h = svc.alpha.auth();
  h["idempotency-key"] = "pg-1";
  auto first = http.request("POST", "/v1/jobs", body.dump(), h);
  auto again = http.request("POST", "/v1/jobs", body.dump(), h);
  ASSERT_TRUE(first.status == 201 || first.status == 200) << first.body;
  EXPECT_EQ(first.json()["id"], again.json()["id"]);
  EXPECT_EQ(first.json()["outcome"], "failed");

  // Another tenant's job answers as missing.
  EXPECT_EQ(http.request("GET", "/v1/jobs/" + id, "", svc.beta.auth()).status, 404);

  // The SQLite file was never made: the rows are in PostgreSQL.
  EXPECT_NE(::access((svc.data_dir() + "/airlock.db").c_str(), F_OK), 0);

  svc.kill_hard();
  svc.start();
  HttpClient after(svc.port());
  auto view = after.request("GET", "/v1/jobs/" + id, "", svc.alpha.auth());
  ASSERT_EQ(view.status, 200) << view.body;
  EXPECT_EQ(view.json()["outcome"], "succeeded");
  auto list = after.request("GET", "/v1/jobs?limit=10", "", svc.alpha.auth());
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.json()["jobs"].size(), 2u);

  auto store = airlock::store::Store::open(svc.data_dir(), airlock::store::StoreOptions{.database_url = url});
  ASSERT_TRUE(store) << store.error().message();
  auto report = (*store)->verify();
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_TRUE(report->ok);
  EXPECT_EQ(report->records, 2u);
}
