// airlock serve over real HTTP: jobs, files, outputs, publication, errors,
// tenants, cancellation, SSE replay, overload, restart, idempotency, checks.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

json wait_for_state(HttpClient& c, const TestKey& k, const std::string& id, const std::string& state,
                    int timeout_ms = 20000) {
  json j;
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    auto r = c.request("GET", "/v1/jobs/" + id, "", k.auth());
    if (r.status == 200) {
      j = r.json();
      if (j["state"] == state) return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return j;
}

class ServiceTest : public ::testing::Test {
 protected:
  ServiceProcess svc;
  HttpClient http{svc.port()};
};

}  // namespace

TEST_F(ServiceTest, RunsAJobWithInputsAndServesItsOutputs) {
  std::string in = upload(http, svc.alpha, "data.csv", "a,b\n1,2\n3,4\n");
  json job = run_job(http, svc.alpha,
                     {{"command", {"sh", "-c", "cp /inputs/data.csv /output/copy.csv; echo done"}},
                      {"inputs", {in}}});
  ASSERT_EQ(job["state"], "finished") << job.dump(2);
  EXPECT_EQ(job["outcome"], "succeeded");
  const json& rec = job["record"];
  EXPECT_EQ(rec["outcome"], "succeeded");
  EXPECT_EQ(rec["stdout"]["text"], "done\n");
  EXPECT_EQ(rec["tenant"], job["tenant"]);
  EXPECT_EQ(rec["key_id"], svc.alpha.key_id);
  for (const char* k : {"created_at", "started_at", "finished_at"}) EXPECT_TRUE(rec["states"][k].is_string()) << k;
  EXPECT_EQ(rec["inputs"][0]["sha256"], airlock::Sha256::of("a,b\n1,2\n3,4\n"));

  auto out = http.request("GET", "/v1/jobs/" + job["id"].get<std::string>() + "/outputs/copy.csv", "", svc.alpha.auth());
  EXPECT_EQ(out.status, 200);
  EXPECT_EQ(out.body, "a,b\n1,2\n3,4\n");
  EXPECT_EQ(out.headers["x-content-sha256"], airlock::Sha256::of(out.body));
  EXPECT_EQ(out.headers["content-type"], "text/csv");

  // Listed, and readable with a read-only key of the same tenant.
  auto list = http.request("GET", "/v1/jobs?limit=10", "", svc.alpha_reader.auth());
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.json()["jobs"][0]["id"], job["id"]);
}

TEST_F(ServiceTest, CodeJobsAndPublication) {
  json job = run_job(http, svc.alpha, {{"code", "open('/output/r.json','w').write('{\"n\": 3}')\nprint('ok')"}});
  ASSERT_EQ(job["outcome"], "succeeded") << job.dump(2);
  std::string id = job["id"];
  EXPECT_EQ(http.request("POST", "/v1/jobs/" + id + "/outputs/r.json/publish", "", svc.alpha_reader.auth()).status, 403);
  auto pub = http.request("POST", "/v1/jobs/" + id + "/outputs/r.json/publish", "", svc.alpha.auth());
  ASSERT_EQ(pub.status, 200) << pub.body;
  EXPECT_EQ(pub.json()["published_by"], svc.alpha.key_id);
  EXPECT_EQ(http.request("POST", "/v1/jobs/" + id + "/outputs/nope.json/publish", "", svc.alpha.auth()).status, 404);
  // A failed job's outputs cannot be published.
  json failed = run_job(http, svc.alpha, {{"code", "open('/output/x.txt','w').write('x')\nraise SystemExit(2)"}});
  EXPECT_EQ(failed["outcome"], "failed");
  auto no = http.request("POST", "/v1/jobs/" + failed["id"].get<std::string>() + "/outputs/x.txt/publish", "",
                         svc.alpha.auth());
  EXPECT_TRUE(no.status == 404 || no.status == 409) << no.status;
}

TEST_F(ServiceTest, ErrorsAreClearAndChangeNothing) {
  auto count_jobs = [&] { return http.request("GET", "/v1/jobs", "", svc.alpha.auth()).json()["jobs"].size(); };
  size_t before = count_jobs();
  struct Case {
    std::string method, target, body;
    std::map<std::string, std::string> headers;
    int status;
    std::string says;
  };
  auto a = svc.alpha.auth();
  std::vector<Case> cases = {
      {"POST", "/v1/jobs", "{not json", a, 400, "not valid JSON"},
      {"POST", "/v1/jobs", "[]", a, 400, "JSON object"},
      {"POST", "/v1/jobs", R"({"command": "ls"})", a, 400, "command"},
      {"POST", "/v1/jobs", R"({"command": ["ls"], "surprise": 1})", a, 400, "surprise"},
      {"POST", "/v1/jobs", R"({"command": ["ls"], "policy": {"memory_mb": 999999}})", a, 400, "tenant's limit"},
      {"POST", "/v1/jobs", R"({"command": ["ls"], "inputs": ["nope"]})", a, 400, "no file"},
      {"POST", "/v1/jobs", R"({"command": ["ls"]})", {}, 401, "Bearer"},
      {"POST", "/v1/jobs", R"({"command": ["ls"]})", {{"authorization", "Bearer alk_wrong"}}, 401, "unknown"},
      {"POST", "/v1/jobs", R"({"command": ["ls"]})", svc.alpha_reader.auth(), 403, "run"},
      {"POST", "/v1/jobs", std::string(3 << 20, ' '), a, 413, ""},
      {"POST", "/v1/files?name=../x", "data", a, 400, "name"},
      {"POST", "/v1/files?name=.hidden", "data", a, 400, "name"},
      {"POST", "/v1/files", "data", a, 400, "name"},
      {"POST", "/v1/files?name=blob.bin", std::string("\x7f" "ELF\x02\x01\x01\x00", 8), a, 400, "type binary is not allowed"},
      {"GET", "/v1/jobs?limit=0", "", a, 400, "limit"},
      {"GET", "/v1/jobs?bogus=1", "", a, 400, "bogus"},
      {"GET", "/v1/nothing", "", a, 404, ""},
  };
  for (const auto& c : cases) {
    auto r = http.request(c.method, c.target, c.body, c.headers);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.target << ": " << r.body;
    if (!c.says.empty()) {
      EXPECT_NE(r.body.find(c.says), std::string::npos) << r.body;
    }
    if (r.status >= 400 && r.status != 413) {
      auto j = json::parse(r.body, nullptr, false);
      EXPECT_TRUE(!j.is_discarded() && j.contains("error")) << r.body;
    } else if (!c.says.empty()) {
      EXPECT_NE(r.body.find(c.says), std::string::npos) << r.body;
    }
  }
  EXPECT_EQ(count_jobs(), before);
}

TEST_F(ServiceTest, ATenantSeesNothingOfAnother) {
  std::string file = upload(http, svc.alpha, "a.csv", "x,y\n1,2\n");
  json job = run_job(http, svc.alpha, {{"command", {"sh", "-c", "echo secret > /output/s.txt"}}, {"inputs", {file}}});
  std::string id = job["id"];
  ASSERT_EQ(job["outcome"], "succeeded");
  auto b = svc.beta.auth();
  // Every endpoint that names alpha's objects answers beta as if they did not exist.
  std::vector<std::pair<std::string, std::string>> probes = {
      {"GET", "/v1/jobs/" + id},
      {"POST", "/v1/jobs/" + id + "/cancel"},
      {"GET", "/v1/jobs/" + id + "/events"},
      {"GET", "/v1/jobs/" + id + "/outputs/s.txt"},
      {"POST", "/v1/jobs/" + id + "/outputs/s.txt/publish"},
  };
  for (const auto& [m, t] : probes) {
    auto r = http.request(m, t, "", b);
    EXPECT_EQ(r.status, 404) << m << " " << t << ": " << r.body;
    EXPECT_EQ(r.body.find("secret"), std::string::npos);
  }
  auto r = http.request("POST", "/v1/jobs", json{{"command", {"true"}}, {"inputs", {file}}}.dump(), b);
  EXPECT_EQ(r.status, 400) << "beta cannot use alpha's file";
  auto list = http.request("GET", "/v1/jobs", "", b).json();
  for (const auto& j : list["jobs"]) EXPECT_NE(j["id"], id);
  // Same id as a probe of a job that does not exist at all: identical answers.
  EXPECT_EQ(http.request("GET", "/v1/jobs/" + id, "", b).body.size() - id.size(),
            http.request("GET", "/v1/jobs/ffffffffffffffff", "", b).body.size() - 16);
}

TEST_F(ServiceTest, CancelARunningJobKillsEverything) {
  auto r = http.request("POST", "/v1/jobs",
                        json{{"command", {"sh", "-c", "sleep 1000 & setsid sleep 1000 & sleep 1000"}}}.dump(),
                        svc.alpha.auth());
  ASSERT_EQ(r.status, 201) << r.body;
  std::string id = r.json()["id"];
  wait_for_state(http, svc.alpha, id, "running");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto c = http.request("POST", "/v1/jobs/" + id + "/cancel", "", svc.alpha.auth());
  EXPECT_EQ(c.status, 200) << c.body;
  json done = wait_for_state(http, svc.alpha, id, "finished");
  ASSERT_EQ(done["outcome"], "cancelled") << done.dump(2);
  uid_t uid = done["record"]["sandbox"]["host_uid"];
  EXPECT_TRUE(no_processes_of_uid(uid, 1000));
  EXPECT_TRUE(done["record"]["outputs"].empty());
}

TEST_F(ServiceTest, EventsReplayWhatAReconnectingClientMissed) {
  auto r = http.request("POST", "/v1/jobs",
                        json{{"command", {"sh", "-c", "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.2; done"}}}.dump(),
                        svc.alpha.auth());
  std::string id = r.json()["id"];
  std::string seen, last_id;
  {
    auto events = http.open_events("/v1/jobs/" + id + "/events", svc.alpha.auth());
    ASSERT_EQ(events.status(), 200);
    while (seen.find("line2") == std::string::npos) {
      auto e = events.next(5000);
      ASSERT_TRUE(e) << "no event; seen: " << seen;
      ASSERT_EQ(e->event, "stdout");
      seen += json::parse(e->data)["text"].get<std::string>();
      last_id = e->id;
    }
    events.close();  // the client drops
  }
  auto again = http.open_events("/v1/jobs/" + id + "/events", [&] {
    auto h = svc.alpha.auth();
    h["last-event-id"] = last_id;
    return h;
  }());
  std::string end_data;
  while (auto e = again.next(10000)) {
    if (e->event == "end") {
      end_data = e->data;
      break;
    }
    seen += json::parse(e->data)["text"].get<std::string>();
  }
  EXPECT_EQ(seen, "line1\nline2\nline3\nline4\nline5\nline6\n");  // nothing lost, nothing twice
  ASSERT_FALSE(end_data.empty());
  EXPECT_EQ(json::parse(end_data)["outcome"], "succeeded");
  // A finished job replays its whole output.
  wait_for_state(http, svc.alpha, id, "finished");
  std::string replay;
  auto late = http.open_events("/v1/jobs/" + id + "/events", svc.alpha.auth());
  while (auto e = late.next(5000)) {
    if (e->event == "end") break;
    replay += json::parse(e->data)["text"].get<std::string>();
  }
  EXPECT_EQ(replay, seen);
}

TEST_F(ServiceTest, IdempotencyKeyStartsOneJob) {
  auto h = svc.alpha.auth();
  h["idempotency-key"] = "retry-me-123";
  auto first = http.request("POST", "/v1/jobs", json{{"command", {"true"}}}.dump(), h);
  auto second = http.request("POST", "/v1/jobs", json{{"command", {"true"}}}.dump(), h);
  EXPECT_EQ(first.status, 201);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(first.json()["id"], second.json()["id"]);
  // The same key in another tenant is another job.
  auto hb = svc.beta.auth();
  hb["idempotency-key"] = "retry-me-123";
  auto other = http.request("POST", "/v1/jobs", json{{"command", {"true"}}}.dump(), hb);
  EXPECT_EQ(other.status, 201);
  EXPECT_NE(other.json()["id"], first.json()["id"]);
}

TEST_F(ServiceTest, ChecksDecideTheOutcome) {
  std::string in = upload(http, svc.alpha, "sales.csv", "region,revenue\nEast,10.5\nWest,4.5\n");
  std::string code =
      "import csv\n"
      "rows = list(csv.DictReader(open('/inputs/sales.csv')))\n"
      "total = sum(float(r['revenue']) for r in rows)\n"
      "open('/output/summary.csv','w').write('total\\n%s\\n' % total)\n";
  json check = {{"kind", "csv_column_sum"}, {"output", "summary.csv"}, {"column", "total"},
                {"inputs", {{{"file", "sales.csv"}, {"column", "revenue"}}}}, {"tolerance", 0.001}};
  json ok = run_job(http, svc.alpha, {{"code", code}, {"inputs", {in}}, {"checks", {check}}});
  ASSERT_EQ(ok["outcome"], "succeeded") << ok.dump(2);
  EXPECT_TRUE(ok["record"]["checks"][0]["passed"]);
  std::string wrong = code + "open('/output/summary.csv','w').write('total\\n99\\n')\n";
  json bad = run_job(http, svc.alpha, {{"code", wrong}, {"inputs", {in}}, {"checks", {check}}});
  EXPECT_EQ(bad["outcome"], "output_rejected") << bad.dump(2);
  EXPECT_FALSE(bad["record"]["checks"][0]["passed"]);
  EXPECT_NE(bad["record"]["reason"].get<std::string>().find("check failed"), std::string::npos);
  EXPECT_EQ(http.request("POST", "/v1/jobs", json{{"command", {"true"}}, {"checks", {{{"kind", "bogus"}}}}}.dump(),
                         svc.alpha.auth()).status,
            400);
}

TEST_F(ServiceTest, PerJobOutputPolicy) {
  json body = {{"command", {"sh", "-c", "echo a,b > /output/t.csv; printf '\\211PNG' > /output/x.png"}},
               {"policy", {{"outputs", {{"types", {"csv"}}}}}}};
  json job = run_job(http, svc.alpha, body);
  EXPECT_EQ(job["outcome"], "output_rejected") << job.dump(2);
  bool refused_png = false;
  for (const auto& o : job["record"]["outputs"])
    if (o["name"] == "x.png") refused_png = o["verdict"] == "rejected";
  EXPECT_TRUE(refused_png) << job["record"]["outputs"].dump();
  EXPECT_EQ(job["record"]["policy"]["outputs"]["types"], json({"csv"}));
}

TEST_F(ServiceTest, HealthMetricsAndOpenApi) {
  EXPECT_EQ(http.request("GET", "/healthz").status, 200);
  run_job(http, svc.alpha, {{"command", {"true"}}});
  auto m = http.request("GET", "/metrics");
  EXPECT_EQ(m.status, 200);
  for (const char* name : {"airlock_jobs_total{outcome=\"succeeded\"} ", "airlock_queue_depth ",
                           "airlock_running_jobs ", "airlock_job_start_latency_seconds_bucket",
                           "airlock_job_duration_seconds_count"})
    EXPECT_NE(m.body.find(name), std::string::npos) << name;
  auto doc = http.request("GET", "/openapi.json").json();
  EXPECT_EQ(doc["openapi"], "3.1.0");
  for (const char* path : {"/v1/jobs", "/v1/jobs/{id}", "/v1/jobs/{id}/events", "/v1/files", "/v1/usage",
                           "/v1/jobs/{id}/outputs/{name}/publish", "/v1/jobs/{id}/cancel", "/metrics", "/healthz"})
    EXPECT_TRUE(doc["paths"].contains(path)) << path;
  auto usage = http.request("GET", "/v1/usage", "", svc.alpha.auth());
  ASSERT_EQ(usage.status, 200) << usage.body;
  EXPECT_GE(usage.json()["jobs"].get<int>(), 1);
  // Logs are JSON lines; job events carry the job id.
  bool saw_job_line = false;
  std::istringstream lines(svc.log());
  for (std::string line; std::getline(lines, line);) {
    auto j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    if (j.value("event", "") == "job_finished") saw_job_line = j.contains("job_id");
  }
  EXPECT_TRUE(saw_job_line);
}

TEST(ServiceOverload, AnswersTooManyRequestsWithRetryAfter) {
  // A tenant cap above the queue's size, so one tenant reaches the global bound.
  ServiceProcess svc({"--max-running", "1", "--max-queued", "2", "--tenant-max-queued", "3"});
  HttpClient http(svc.port());
  const std::string body = json{{"command", {"sleep", "5"}}}.dump();
  auto first = http.request("POST", "/v1/jobs", body, svc.alpha.auth());
  ASSERT_EQ(first.status, 201);
  // Once it runs, the queue holds two more and refuses the rest.
  EXPECT_EQ(wait_for_state(http, svc.alpha, first.json()["id"], "running")["state"], "running");
  std::vector<int> statuses;
  std::string retry_after;
  for (int i = 0; i < 5; ++i) {
    auto r = http.request("POST", "/v1/jobs", body, svc.alpha.auth());
    statuses.push_back(r.status);
    if (r.status == 429) {
      retry_after = r.headers["retry-after"];
      EXPECT_NE(r.body.find("queue is full"), std::string::npos) << r.body;
    }
  }
  EXPECT_EQ(statuses, (std::vector<int>{201, 201, 429, 429, 429}));
  EXPECT_FALSE(retry_after.empty());
}

TEST(ServiceRestart, AKilledServiceEndsItsJobsAsSandboxErrorAndKeepsRecords) {
  ServiceProcess svc;
  std::string done_id, running_id;
  uid_t running_uid = 0;
  {
    HttpClient http(svc.port());
    done_id = run_job(http, svc.alpha, {{"command", {"echo", "kept"}}})["id"];
    auto r = http.request("POST", "/v1/jobs", json{{"command", {"sh", "-c", "sleep 1000 & sleep 1000"}}}.dump(),
                          svc.alpha.auth());
    running_id = r.json()["id"];
    wait_for_state(http, svc.alpha, running_id, "running");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    running_uid = uid_of_sandboxed_command(std::string("sleep\0" "1000", 10));
  }
  ASSERT_NE(running_uid, 0u);
  svc.kill_hard();
  EXPECT_TRUE(no_processes_of_uid(running_uid, 3000)) << "the job died with the service";
  svc.start();
  HttpClient http(svc.port());
  json lost = wait_for_state(http, svc.alpha, running_id, "finished", 5000);
  EXPECT_EQ(lost["outcome"], "sandbox_error");
  EXPECT_EQ(lost["record"]["reason"], "service restarted");
  json kept = http.request("GET", "/v1/jobs/" + done_id, "", svc.alpha.auth()).json();
  EXPECT_EQ(kept["record"]["stdout"]["text"], "kept\n");
  // Nothing of the killed job is left: its airlock job directory (and with it its cgroup) was swept.
  std::string jobs = svc.state_dir() + "/jobs";
  std::vector<std::string> left;
  if (DIR* d = ::opendir(jobs.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") left.push_back(e->d_name);
    ::closedir(d);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " job directories left, first: " << (left.empty() ? "" : left[0]);
  EXPECT_EQ(svc.stop(), 0);
  auto verify = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
}
