// GET /v1/usage and `airlock usage` through a running airlock serve: the
// sums equal the records' figures, every outcome counts (a failed and a
// cancelled job too), the rate card from the configuration is applied
// exactly, a tenant sees only its own and an admin key every tenant.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

json get(HttpClient& http, const TestKey& k, const std::string& target) {
  auto r = http.request("GET", target, "", k.auth());
  EXPECT_EQ(r.status, 200) << target << ": " << r.body;
  return r.status == 200 ? r.json() : json::object();
}

// The decimal text of n millionths (the rates below make each part exact).
std::string millionths(uint64_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu.%06llu", static_cast<unsigned long long>(n / 1000000),
                static_cast<unsigned long long>(n % 1000000));
  return buf;
}

}  // namespace

TEST(UsageService, SumsEqualTheRecordsAndTheRateCardIsAppliedExactly) {
  TempDir dir;
  // 0.001 per vCPU-second: a ms of CPU costs exactly 0.000001.
  std::ofstream(dir.sub("rates.toml")) << "[rates]\ncurrency = \"GBP\"\nvcpu_second = \"0.001\"\n"
                                          "memory_gb_second = \"0\"\nstorage_gb_month = \"0\"\negress_gb = \"0\"\n"
                                          "session_hour = \"0\"\n";
  ServiceProcess svc({"--config", dir.sub("rates.toml")});
  HttpClient http(svc.port());
  json ok = run_job(http, svc.alpha, {{"code", "s = 0\nfor i in range(3000000): s += i\nprint(s)\n"}});
  json failed = run_job(http, svc.alpha, {{"command", json::array({"sh", "-c", "exit 3"})}});
  ASSERT_EQ(ok["outcome"], "succeeded") << ok.dump();
  ASSERT_EQ(failed["outcome"], "failed") << failed.dump();
  // A cancelled job counts too.
  auto posted = http.request("POST", "/v1/jobs", json{{"command", json::array({"sleep", "30"})}}.dump(), svc.alpha.auth());
  ASSERT_EQ(posted.status, 201) << posted.body;
  std::string cancel_id = posted.json()["id"];
  for (int i = 0; i < 200 && get(http, svc.alpha, "/v1/jobs/" + cancel_id).value("state", "") != "running"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  http.request("POST", "/v1/jobs/" + cancel_id + "/cancel", "", svc.alpha.auth());
  json cancelled;
  for (int i = 0; i < 400; ++i) {
    cancelled = get(http, svc.alpha, "/v1/jobs/" + cancel_id);
    if (cancelled.value("state", "") == "finished") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(cancelled["outcome"], "cancelled");
  json beta_job = run_job(http, svc.beta, {{"command", json::array({"true"})}});

  uint64_t cpu = 0, wall = 0;
  for (const json* j : {&ok, &failed, &cancelled}) {
    cpu += (*j)["record"]["usage"]["cpu_ms"].get<uint64_t>();
    wall += (*j)["record"]["usage"]["wall_ms"].get<uint64_t>();
  }
  json u = get(http, svc.alpha, "/v1/usage?group_by=day&items=1");
  EXPECT_EQ(u["scope"], "tenant");
  EXPECT_EQ(u["total"]["jobs"], 3);
  EXPECT_EQ(u["total"]["usage"]["cpu_ms"], cpu);
  EXPECT_EQ(u["total"]["usage"]["wall_ms"], wall);
  EXPECT_EQ(u["total"]["cost"]["cpu"], millionths(cpu));
  EXPECT_EQ(u["total"]["cost"]["total"], millionths(cpu));
  EXPECT_EQ(u["rates"]["vcpu_second"], "0.001000000000");
  ASSERT_EQ(u["groups"].size(), 1u);  // all today
  EXPECT_EQ(u["groups"][0]["usage"]["cpu_ms"], cpu);
  std::set<std::string> outcomes;
  for (const auto& it : u["items"])
    if (it["kind"] == "job") outcomes.insert(it["outcome"].get<std::string>());
  EXPECT_EQ(outcomes, (std::set<std::string>{"succeeded", "failed", "cancelled"}));
  // The fields from before are still there.
  EXPECT_EQ(u["jobs"], 3);
  EXPECT_EQ(u["cpu_ms"], cpu);

  // Tenant-scoped: beta sees one job, none of alpha's.
  json ub = get(http, svc.beta, "/v1/usage?group_by=tenant");
  EXPECT_EQ(ub["total"]["jobs"], 1);
  ASSERT_EQ(ub["groups"].size(), 1u);
  EXPECT_EQ(ub["groups"][0]["name"], "beta");
  // An admin key sees every tenant.
  json ua = get(http, svc.alpha_admin, "/v1/usage?group_by=tenant");
  EXPECT_EQ(ua["scope"], "all_tenants");
  EXPECT_EQ(ua["total"]["jobs"], 4);
  EXPECT_EQ(ua["groups"].size(), 2u);
  // A window that ends before the jobs holds none of them.
  EXPECT_EQ(get(http, svc.alpha, "/v1/usage?to=2020-01-01")["total"]["jobs"], 0);
  // Bad parameters are refused with the reason.
  for (const char* bad : {"/v1/usage?group_by=week", "/v1/usage?from=yesterday", "/v1/usage?items=yes"}) {
    auto r = http.request("GET", bad, "", svc.alpha.auth());
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("bad_request"), std::string::npos) << r.body;
  }

  // `airlock usage --csv`, the real client: the total line has the same figures.
  std::ofstream(dir.sub("key")) << svc.alpha.secret << "\n";
  std::string cmd = std::string(AIRLOCK_BINARY) + " usage --server http://127.0.0.1:" + std::to_string(svc.port()) +
                    " --key-file " + dir.sub("key") + " --group-by tenant --csv";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << out;
  EXPECT_NE(out.find("total,3,0," + std::to_string(wall) + "," + std::to_string(cpu) + ","), std::string::npos) << out;
  EXPECT_NE(out.find(millionths(cpu) + " GBP\r\n"), std::string::npos) << out;

  // `airlock estimate --days 1`: the last day's measured total, scaled to 30 days.
  cmd = std::string(AIRLOCK_BINARY) + " estimate --days 1 --json --server http://127.0.0.1:" +
        std::to_string(svc.port()) + " --key-file " + dir.sub("key");
  p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  out.clear();
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << out;
  json est = json::parse(out, nullptr, false);
  ASSERT_TRUE(est.is_object()) << out;
  EXPECT_EQ(est["total"]["usage"]["cpu_ms"], cpu * 30);
  EXPECT_EQ(est["total"]["cost"]["cpu"], millionths(cpu * 30));
  EXPECT_EQ(est["measured_days"], 1);
}

TEST(UsageService, ARateCardThatIsNotExactIsRefusedAtStart) {
  TempDir dir;
  std::ofstream(dir.sub("bad.toml")) << "[rates]\nvcpu_second = 0.0001\n";  // a TOML float
  std::string cmd = std::string(AIRLOCK_BINARY) + " serve --config " + dir.sub("bad.toml") +
                    " --listen 127.0.0.1:0 --data-dir " + dir.sub("data") + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int status = ::pclose(p);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("rates.vcpu_second: write it as a decimal string"), std::string::npos) << out;
}

TEST(UsageService, ASessionCountsItsWholeTimeIdleIncludedOpenOrClosed) {
  TempDir dir;
  std::ofstream(dir.sub("rates.toml")) << "[rates]\nsession_hour = \"3.6\"\nvcpu_second = \"0\"\n"
                                          "memory_gb_second = \"0\"\nstorage_gb_month = \"0\"\negress_gb = \"0\"\n";
  ServiceProcess svc({"--config", dir.sub("rates.toml")});
  HttpClient http(svc.port());
  auto r = http.request("POST", "/v1/sessions", "{}", svc.alpha.auth());
  ASSERT_EQ(r.status, 201) << r.body;
  std::string sid = r.json()["id"];
  auto call = http.request("POST", "/v1/sessions/" + sid + "/execs", json{{"code", "sum(range(10**6))"}, {"wait_s", 60}}.dump(),
                           svc.alpha.auth());
  ASSERT_EQ(call.status, 201) << call.body;
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // idle time, which counts
  // While open: counted up to now.
  json open = get(http, svc.alpha, "/v1/usage?items=1");
  EXPECT_EQ(open["total"]["sessions"], 1);
  EXPECT_GE(open["total"]["usage"]["session_ms"].get<uint64_t>(), 600u);
  ASSERT_EQ(http.request("DELETE", "/v1/sessions/" + sid, "", svc.alpha.auth()).status, 200);
  json closed;
  for (int i = 0; i < 200; ++i) {
    closed = get(http, svc.alpha, "/v1/sessions/" + sid);
    if (closed.value("state", "") == "closed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(closed["state"], "closed") << closed.dump();
  json u = get(http, svc.alpha, "/v1/usage?items=1");
  ASSERT_EQ(u["total"]["sessions"], 1);
  ASSERT_EQ(u["items"].size(), 1u);
  EXPECT_EQ(u["items"][0]["kind"], "session");
  EXPECT_EQ(u["items"][0]["id"], sid);
  EXPECT_NE(u["items"][0]["outcome"], "open");
  uint64_t ms = u["total"]["usage"]["session_ms"];
  EXPECT_GE(ms, 600u);
  EXPECT_EQ(u["total"]["usage"]["wall_ms"], ms);
  // 3.6 an hour is exactly 0.000001 a millisecond.
  EXPECT_EQ(u["total"]["cost"]["session"], millionths(ms));
}

// A job that ends at once (`sh -c 'exit 3'`) still ran: its wall time is at
// least 1 ms (measured from the payload's start, rounded up), so its memory
// charge (peak x wall) is not zero.
TEST(UsageService, AJobThatEndsAtOnceIsBilledItsWallTimeAndMemory) {
  TempDir dir;
  std::ofstream(dir.sub("rates.toml")) << "[rates]\ncurrency = \"GBP\"\nvcpu_second = \"0\"\n"
                                          "memory_gb_second = \"1000\"\nstorage_gb_month = \"0\"\n"
                                          "egress_gb = \"0\"\nsession_hour = \"0\"\n";
  ServiceProcess svc({"--config", dir.sub("rates.toml")});
  HttpClient http(svc.port());
  json failed = run_job(http, svc.alpha, {{"command", json::array({"sh", "-c", "exit 3"})}});
  ASSERT_EQ(failed["outcome"], "failed") << failed.dump();
  const json& usage = failed["record"]["usage"];
  EXPECT_GE(usage["wall_ms"].get<uint64_t>(), 1u) << usage.dump();
  EXPECT_GT(usage["peak_memory_bytes"].get<uint64_t>(), 0u) << usage.dump();
  json u = get(http, svc.alpha, "/v1/usage?items=1");
  ASSERT_EQ(u["items"].size(), 1u) << u.dump();
  const json& item = u["items"][0];
  EXPECT_EQ(item["usage"]["wall_ms"], usage["wall_ms"]);
  EXPECT_NE(item["usage"]["memory_gb_s"], "0.000000") << item.dump();
  EXPECT_NE(item["cost"]["memory"], "0.000000") << item.dump();
  EXPECT_EQ(u["total"]["cost"]["memory"], item["cost"]["memory"]);
}
