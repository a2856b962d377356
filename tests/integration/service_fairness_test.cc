// Issue 11 items 16 and 17 through a running airlock serve: tenants share the
// queue fairly and none can fill it for the others; the store keeps holes,
// removes what refused captures stored, and holds each tenant to its quota.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "base/sha256.h"
#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

json get(HttpClient& http, const TestKey& k, const std::string& target) {
  auto r = http.request("GET", target, "", k.auth());
  return r.status == 200 ? r.json() : json{{"http_status", r.status}};
}

json wait_for_state(HttpClient& http, const TestKey& k, const std::string& id,
                    const std::string& state, int timeout_ms = 30000) {
  json j;
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    j = get(http, k, "/v1/jobs/" + id);
    if (j.value("state", "") == state) return j;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return j;
}

std::string post_job(HttpClient& http, const TestKey& k, const json& body, int* status = nullptr,
                     std::string* reply = nullptr) {
  auto r = http.request("POST", "/v1/jobs", body.dump(), k.auth());
  if (status) *status = r.status;
  if (reply) *reply = r.body;
  return r.status == 201 ? r.json()["id"].get<std::string>() : "";
}

void cancel_all(HttpClient& http, const TestKey& k, const std::vector<std::string>& ids) {
  for (const auto& id : ids) (void)http.request("POST", "/v1/jobs/" + id + "/cancel", "", k.auth());
}

// A configuration file for the test's service, removed with the object.
struct ConfigFile {
  explicit ConfigFile(const std::string& text) {
    char tmpl[] = "/tmp/airlock-fairdisk-config-XXXXXX";
    int fd = ::mkstemp(tmpl);
    path = tmpl;
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
  }
  ~ConfigFile() { ::unlink(path.c_str()); }
  std::string path;
};

// Files and bytes of the service's content directory.
std::pair<size_t, uint64_t> content_dir_usage(const std::string& data_dir) {
  size_t files = 0;
  uint64_t bytes = 0;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(data_dir + "/artifacts/sha256"))
    if (e.is_regular_file()) {
      ++files;
      bytes += e.file_size();
    }
  return {files, bytes};
}

}  // namespace

// Before: first come, first served; beta's job started after all of alpha's.
TEST(ServiceFairness, ASingleJobOfAnotherTenantStartsNextBehindALongQueue) {
  ServiceProcess svc({"--max-running", "1"});
  HttpClient http(svc.port());
  std::vector<std::string> alpha_jobs;
  for (int i = 0; i < 4; ++i) {
    alpha_jobs.push_back(post_job(http, svc.alpha, {{"command", {"sleep", "2"}}}));
    ASSERT_FALSE(alpha_jobs.back().empty());
  }
  ASSERT_EQ(wait_for_state(http, svc.alpha, alpha_jobs[0], "running")["state"], "running");
  std::string beta_job = post_job(http, svc.beta, {{"command", {"true"}}});
  ASSERT_FALSE(beta_job.empty());
  json b = wait_for_state(http, svc.beta, beta_job, "finished");
  ASSERT_EQ(b["outcome"], "succeeded") << b.dump();
  const std::string b_started = b["record"]["states"]["started_at"];
  // From the records' times: only alpha's first job started before beta's.
  json a0 = wait_for_state(http, svc.alpha, alpha_jobs[0], "finished");
  EXPECT_LT(a0["record"]["states"]["started_at"].get<std::string>(), b_started);
  EXPECT_LE(a0["record"]["states"]["finished_at"].get<std::string>(), b_started);
  for (size_t i = 1; i < alpha_jobs.size(); ++i) {
    json a = get(http, svc.alpha, "/v1/jobs/" + alpha_jobs[i]);
    if (!a["started_at"].is_null()) {
      EXPECT_GT(a["started_at"].get<std::string>(), b_started)
          << "alpha's job " << i << " started before beta's";
    }
  }
  cancel_all(http, svc.alpha, alpha_jobs);
}

// Before: alpha alone filled the global queue (64) and beta and gamma got 429.
TEST(ServiceFairness, OneTenantAloneCannotMakeOthersGetTooManyRequests) {
  ServiceProcess svc({"--max-running", "1", "--max-queued", "8"});  // default tenant cap: 8 / 4 = 2
  HttpClient http(svc.port());
  std::vector<std::string> alpha_jobs;
  alpha_jobs.push_back(post_job(http, svc.alpha, {{"command", {"sleep", "30"}}}));
  ASSERT_EQ(wait_for_state(http, svc.alpha, alpha_jobs[0], "running")["state"], "running");
  std::vector<int> statuses;
  std::string refusal;
  for (int i = 0; i < 10; ++i) {
    int status = 0;
    std::string body;
    std::string id = post_job(http, svc.alpha, {{"command", {"sleep", "30"}}}, &status, &body);
    statuses.push_back(status);
    if (!id.empty()) alpha_jobs.push_back(id);
    if (status == 429) refusal = body;
  }
  EXPECT_EQ(statuses, (std::vector<int>{201, 201, 429, 429, 429, 429, 429, 429, 429, 429}));
  EXPECT_NE(refusal.find("tenant alpha"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("its cap (tenant_max_queued 2)"), std::string::npos) << refusal;
  int beta_status = 0, gamma_status = 0;
  std::string beta_job = post_job(http, svc.beta, {{"command", {"true"}}}, &beta_status);
  std::string gamma_job = post_job(http, svc.gamma, {{"command", {"true"}}}, &gamma_status);
  EXPECT_EQ(beta_status, 201);
  EXPECT_EQ(gamma_status, 201);
  cancel_all(http, svc.alpha, alpha_jobs);
  EXPECT_EQ(wait_for_state(http, svc.beta, beta_job, "finished")["outcome"], "succeeded");
  EXPECT_EQ(wait_for_state(http, svc.gamma, gamma_job, "finished")["outcome"], "succeeded");
}

// Before: every queued job of a killed service ended sandbox_error "service
// restarted". Now those that never started run after the restart, fairly.
TEST(ServiceFairness, QueuedJobsRunAfterARestartInTheFairOrder) {
  ServiceProcess svc({"--max-running", "1"});
  std::string running, a1, a2, b1;
  {
    HttpClient http(svc.port());
    running = post_job(http, svc.alpha, {{"command", {"sleep", "30"}}});
    ASSERT_EQ(wait_for_state(http, svc.alpha, running, "running")["state"], "running");
    a1 = post_job(http, svc.alpha, {{"command", {"true"}}});
    a2 = post_job(http, svc.alpha, {{"command", {"true"}}});
    b1 = post_job(http, svc.beta, {{"command", {"true"}}});
    ASSERT_FALSE(a1.empty() || a2.empty() || b1.empty());
  }
  svc.kill_hard();
  svc.start();
  HttpClient http(svc.port());
  json lost = wait_for_state(http, svc.alpha, running, "finished");
  EXPECT_EQ(lost["record"]["reason"], "service restarted");
  json ja1 = wait_for_state(http, svc.alpha, a1, "finished");
  json ja2 = wait_for_state(http, svc.alpha, a2, "finished");
  json jb1 = wait_for_state(http, svc.beta, b1, "finished");
  for (const json* j : {&ja1, &ja2, &jb1}) EXPECT_EQ((*j)["outcome"], "succeeded") << j->dump();
  const std::string s_a1 = ja1["started_at"], s_a2 = ja2["started_at"], s_b1 = jb1["started_at"];
  EXPECT_LT(s_a1, s_b1);
  EXPECT_LT(s_b1, s_a2) << "beta's job waited behind both of alpha's";
}

// Before: the artifact of a 32 MiB sparse output took 32 MiB of the data disk.
TEST(ServiceStorage, ASparseOutputIsStoredSparse) {
  ServiceProcess svc;
  HttpClient http(svc.port());
  json job = run_job(
      http, svc.alpha,
      {{"command",
        {"python3", "-c",
         "f = open('/output/sparse.jpg', 'wb'); f.write(b'\\xff\\xd8\\xff\\xe0' + b'x' * 8188); "
         "f.seek(32 << 20); f.write(b'\\xff\\xd9'); f.close()"}}});
  ASSERT_EQ(job["outcome"], "succeeded") << job.dump(2);
  const json& out = job["record"]["outputs"][0];
  ASSERT_EQ(out["verdict"], "accepted") << out.dump();
  std::string logical = std::string("\xff\xd8\xff\xe0") + std::string(8188, 'x');
  logical.resize(32 << 20, '\0');
  logical += "\xff\xd9";
  EXPECT_EQ(out["size"], logical.size());
  EXPECT_EQ(out["sha256"], airlock::Sha256::of(logical));
  std::string sha = out["sha256"];
  std::string stored = svc.data_dir() + "/artifacts/sha256/" + sha.substr(0, 2) + "/" + sha;
  struct stat st {};
  ASSERT_EQ(::stat(stored.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), logical.size());
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, 1u << 20) << "the stored artifact is dense";
  auto served =
      http.request("GET", "/v1/jobs/" + job["id"].get<std::string>() + "/outputs/sparse.jpg", "",
                   svc.alpha.auth());
  EXPECT_EQ(served.status, 200);
  EXPECT_EQ(airlock::Sha256::of(served.body), sha);
}

class ServiceQuota : public ::testing::Test {
 protected:
  ConfigFile config{"snapshot_max_mb = 1\n[tenants.alpha]\nstorage_mb = 1\n"};
  ServiceProcess svc{{"--config", config.path}};
  HttpClient http{svc.port()};
};

// Before: alpha's 2 MiB output was stored whatever alpha kept already.
TEST_F(ServiceQuota, ATenantOverItsQuotaIsRefusedWithTheReasonAnotherIsNot) {
  json job_body = {
      {"command", {"sh", "-c", "head -c 2097152 /dev/zero | tr '\\0' a > /output/big.txt"}}};
  json a = run_job(http, svc.alpha, job_body);
  EXPECT_EQ(a["outcome"], "output_rejected") << a.dump(2);
  const std::string reason = a["record"]["reason"];
  EXPECT_NE(reason.find("storage quota: the tenant keeps 0 of its 1048576 bytes"),
            std::string::npos)
      << reason;
  EXPECT_EQ(a["record"]["outputs"][0]["verdict"], "rejected");
  EXPECT_NE(a["record"]["outputs"][0]["reason"].get<std::string>().find("storage quota"),
            std::string::npos);
  EXPECT_EQ(http.request("GET", "/v1/jobs/" + a["id"].get<std::string>() + "/outputs/big.txt", "",
                         svc.alpha.auth())
                .status,
            404);
  json b = run_job(http, svc.beta, job_body);
  EXPECT_EQ(b["outcome"], "succeeded") << b.dump(2);
  // Usage shows what each keeps against its quota.
  json ua = get(http, svc.alpha, "/v1/usage");
  json ub = get(http, svc.beta, "/v1/usage");
  EXPECT_EQ(ua["storage"]["total_bytes"], 0);
  EXPECT_EQ(ua["storage"]["quota_bytes"], 1 << 20);
  EXPECT_EQ(ub["storage"]["artifacts_bytes"], 2 << 20);
  EXPECT_EQ(ub["storage"]["quota_bytes"], 10ull << 30);
  // An upload beyond the quota is refused too, naming it.
  auto up =
      http.request("POST", "/v1/files?name=big.txt", std::string(1100000, 'u'), svc.alpha.auth());
  EXPECT_EQ(up.status, 413);
  EXPECT_NE(up.body.find("storage_quota"), std::string::npos) << up.body;
  EXPECT_EQ(
      http.request("POST", "/v1/files?name=big.txt", std::string(1100000, 'u'), svc.beta.auth())
          .status,
      201);
}

// Before: every refused capture left the files it had stored in the content directory.
TEST_F(ServiceQuota, RefusedCapturesLeaveTheContentDirectoryAsItWas) {
  auto s = http.request("POST", "/v1/sessions", "{}", svc.alpha.auth());
  ASSERT_EQ(s.status, 201) << s.body;
  std::string sid = s.json()["id"];
  auto exec = [&](const std::string& code) {
    auto r = http.request("POST", "/v1/sessions/" + sid + "/execs",
                          json{{"code", code}, {"wait_s", 60}}.dump(), svc.alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json() : json();
  };
  ASSERT_EQ(exec("import os\nopen('a.bin', 'wb').write(os.urandom(600000))\n"
                 "open('b.bin', 'wb').write(os.urandom(600000))")["status"],
            "ok");
  const auto before = content_dir_usage(svc.data_dir());
  // Over snapshot_max_mb: a.bin was stored before b.bin went over.
  auto refused = http.request("POST", "/v1/sessions/" + sid + "/snapshots", "", svc.alpha.auth());
  EXPECT_EQ(refused.status, 422);
  EXPECT_NE(refused.body.find("(limit)"), std::string::npos) << refused.body;
  EXPECT_EQ(content_dir_usage(svc.data_dir()), before);
  // Within snapshot_max_mb but over alpha's 1 MiB quota (an upload keeps 500 kB of it).
  auto up =
      http.request("POST", "/v1/files?name=keep.txt", std::string(500000, 'k'), svc.alpha.auth());
  ASSERT_EQ(up.status, 201) << up.body;
  ASSERT_EQ(exec("import os\nos.remove('b.bin')")["status"], "ok");
  for (int i = 0; i < 3; ++i) {
    refused = http.request("POST", "/v1/sessions/" + sid + "/snapshots", "", svc.alpha.auth());
    EXPECT_EQ(refused.status, 422);
    EXPECT_NE(refused.body.find("storage quota: the tenant keeps 500000 of its 1048576 bytes"),
              std::string::npos)
        << refused.body;
    EXPECT_EQ(content_dir_usage(svc.data_dir()), before);
  }
  (void)http.request("DELETE", "/v1/sessions/" + sid, "", svc.alpha.auth());
}
