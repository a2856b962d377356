// Preloaded interpreters per tenant (src/pool/tenant_interpreters.h): a
// preloaded job is a fork of its interpreter and inherits its address-space
// layout, AT_RANDOM and hash seed. Jobs of two tenants print what an attacker
// would read (id(sys), the address of libc's printf, hash("x"), the AT_RANDOM
// bytes) and must see different values; within one tenant an interpreter
// makes at most preloaded_renew_jobs sandboxes, then the tenant gets a new one.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_helpers.h"
#include "service_fixture.h"

namespace airlock::testing {
namespace {

using nlohmann::json;

// What a forked child shares with its interpreter, as the job sees it.
constexpr const char* kFingerprint =
    "import sys, ctypes\n"
    "libc = ctypes.CDLL(None)\n"
    "libc.getauxval.restype = ctypes.c_ulong\n"
    "at_random = ctypes.string_at(libc.getauxval(25), 16).hex()\n"  // AT_RANDOM
    "printf = ctypes.cast(libc.printf, ctypes.c_void_p).value\n"
    "print(id(sys), printf, hash('x'), at_random)\n";

struct Fingerprint {
  std::string id_sys, printf, hash, at_random;
  std::string all() const { return id_sys + " " + printf + " " + hash + " " + at_random; }
};

json sandbox_of(const json& job) {
  return job.value("record", json::object()).value("sandbox", json::object());
}

// The next job of `key` that started from its standard library's preloaded
// interpreter (the first jobs of a tenant start warm while its interpreter
// starts, and one may find the class empty).
Fingerprint preloaded_fingerprint(HttpClient& http, const TestKey& key) {
  for (int i = 0; i < 100; ++i) {
    json job = run_job(http, key, {{"code", kFingerprint}});
    EXPECT_EQ(job["outcome"], "succeeded") << job.dump(2);
    if (job["outcome"] != "succeeded") break;
    if (sandbox_of(job).value("start", "") != "preloaded" ||
        sandbox_of(job).value("interpreter", "") != "stdlib") {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    std::istringstream words(job["record"]["stdout"]["text"].get<std::string>());
    Fingerprint f;
    words >> f.id_sys >> f.printf >> f.hash >> f.at_random;
    EXPECT_FALSE(f.at_random.empty()) << job.dump(2);
    return f;
  }
  ADD_FAILURE() << "no job of " << key.tenant << " started preloaded";
  return {};
}

std::vector<std::string> serve_args(const TempDir& dir, const std::string& toml) {
  std::string config = dir.sub("serve.toml");
  std::ofstream(config) << toml;
  return {"--config", config, "--preloaded", "1"};
}

TEST(ServicePreloadTenants, TwoTenantsPreloadedJobsShareNoLayoutHashSeedOrAtRandom) {
  TempDir dir;
  ServiceProcess svc(serve_args(dir, "preloaded_renew_jobs = 0\n"));
  HttpClient http = svc.client();
  Fingerprint a1 = preloaded_fingerprint(http, svc.alpha);
  Fingerprint b1 = preloaded_fingerprint(http, svc.beta);
  Fingerprint a2 = preloaded_fingerprint(http, svc.alpha);
  Fingerprint b2 = preloaded_fingerprint(http, svc.beta);
  for (const auto& [a, b] : {std::pair{a1, b1}, {a2, b2}, {a1, b2}}) {
    EXPECT_NE(a.id_sys, b.id_sys) << "id(sys): " << a.all() << " | " << b.all();
    EXPECT_NE(a.printf, b.printf) << "printf: " << a.all() << " | " << b.all();
    EXPECT_NE(a.hash, b.hash) << "hash('x'): " << a.all() << " | " << b.all();
    EXPECT_NE(a.at_random, b.at_random) << "AT_RANDOM: " << a.all() << " | " << b.all();
  }
  // Within a tenant, forks of one interpreter share all of it (docs/security.md says so).
  EXPECT_EQ(a1.all(), a2.all());
  EXPECT_EQ(b1.all(), b2.all());
  // What they hold is counted: two tenants' interpreters (the standard library's each, the data
  // stack's too once started), with their memory.
  auto pools = http.request("GET", "/v1/pools", "", svc.alpha.auth());
  ASSERT_EQ(pools.status, 200) << pools.body;
  json jobs_side = pools.json()["interpreters"]["jobs"];
  EXPECT_EQ(jobs_side["tenants"], 2) << pools.body;
  EXPECT_GE(jobs_side["count"].get<int>(), 2) << pools.body;
  EXPECT_GT(jobs_side["pss_bytes"].get<uint64_t>(), 4u << 20) << pools.body;
  EXPECT_EQ(svc.stop(), 0) << svc.log();
}

TEST(ServicePreloadTenants, AfterNJobsTheSameTenantGetsAFreshInterpreter) {
  constexpr size_t kRenew = 3;
  TempDir dir;
  ServiceProcess svc(serve_args(dir, "preloaded_renew_jobs = " + std::to_string(kRenew) + "\n"));
  HttpClient http = svc.client();
  std::vector<std::string> seen;
  for (size_t i = 0; i < 2 * kRenew + 2; ++i)
    seen.push_back(preloaded_fingerprint(http, svc.alpha).all());
  // Sandboxes are taken in the order they were made, so the jobs of one
  // interpreter come one after another: never more than kRenew of them.
  size_t run = 1, interpreters = 1;
  for (size_t i = 1; i < seen.size(); ++i) {
    if (seen[i] == seen[i - 1]) {
      ++run;
      EXPECT_LE(run, kRenew) << "job " << i << " came from an interpreter that had made " << kRenew;
    } else {
      run = 1;
      ++interpreters;
      // A new interpreter: a new layout, hash seed and AT_RANDOM, not only a new value of one.
      Fingerprint a, b;
      std::istringstream(seen[i - 1]) >> a.id_sys >> a.printf >> a.hash >> a.at_random;
      std::istringstream(seen[i]) >> b.id_sys >> b.printf >> b.hash >> b.at_random;
      EXPECT_NE(a.printf, b.printf) << seen[i - 1] << " | " << seen[i];
      EXPECT_NE(a.hash, b.hash) << seen[i - 1] << " | " << seen[i];
      EXPECT_NE(a.at_random, b.at_random) << seen[i - 1] << " | " << seen[i];
    }
  }
  EXPECT_GE(interpreters, 3u) << "8 preloaded jobs, at most 3 per interpreter";
  // The retired interpreters exit once the sandboxes they made have ended:
  // only alpha's current two (data stack, standard library) stay.
  json jobs_side;
  for (int i = 0; i < 100; ++i) {
    auto pools = http.request("GET", "/v1/pools", "", svc.alpha.auth());
    ASSERT_EQ(pools.status, 200) << pools.body;
    jobs_side = pools.json()["interpreters"]["jobs"];
    if (jobs_side["retired"] == 0 && jobs_side["count"] == 2)
      break;  // the data stack's may still start
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(jobs_side["retired"], 0) << jobs_side.dump();
  EXPECT_EQ(jobs_side["count"], 2) << jobs_side.dump();
  EXPECT_EQ(svc.stop(), 0) << svc.log();
}

TEST(ServicePreloadTenants, BeyondTheCapTheLeastRecentTenantGivesWayAndGetsAFreshOneBack) {
  TempDir dir;
  ServiceProcess svc(serve_args(dir, "preloaded_renew_jobs = 0\npreloaded_tenants = 1\n"));
  HttpClient http = svc.client();
  Fingerprint a1 = preloaded_fingerprint(http, svc.alpha);
  Fingerprint b1 = preloaded_fingerprint(http, svc.beta);  // alpha's interpreters are retired
  Fingerprint a2 = preloaded_fingerprint(http, svc.alpha);
  EXPECT_NE(a1.all(), b1.all());
  EXPECT_NE(a1.all(), a2.all()) << "alpha got its retired interpreter back";
  EXPECT_NE(b1.all(), a2.all());
  // The cap holds: one tenant's interpreters; beta's retired ones exit once unused.
  json jobs_side;
  for (int i = 0; i < 100; ++i) {
    auto pools = http.request("GET", "/v1/pools", "", svc.alpha.auth());
    ASSERT_EQ(pools.status, 200) << pools.body;
    jobs_side = pools.json()["interpreters"]["jobs"];
    if (jobs_side["retired"] == 0 && jobs_side["tenants"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(jobs_side["retired"], 0) << jobs_side.dump();
  EXPECT_EQ(jobs_side["tenants"], 1) << jobs_side.dump();
  EXPECT_EQ(svc.stop(), 0) << svc.log();
}

// A session of each tenant: the fingerprint as the kernel's last value.
std::string session_fingerprint(HttpClient& http, const TestKey& key) {
  auto r = http.request("POST", "/v1/sessions", json::object().dump(), key.auth());
  EXPECT_EQ(r.status, 201) << r.body;
  if (r.status != 201) return "";
  json view = r.json();
  EXPECT_EQ(view.value("start", ""), "preloaded") << view.dump(2);
  std::string sid = view["id"];
  json body = {
      {"code", std::string(kFingerprint) + "f'{id(sys)} {printf} {hash(\"x\")} {at_random}'"},
      {"wait_s", 60}};
  auto e = http.request("POST", "/v1/sessions/" + sid + "/execs", body.dump(), key.auth());
  EXPECT_EQ(e.status, 201) << e.body;
  std::string value = e.status == 201 ? e.json()["result"].value("value", "") : "";
  EXPECT_FALSE(value.empty()) << e.body;
  EXPECT_EQ(http.request("DELETE", "/v1/sessions/" + sid, "", key.auth()).status, 200);
  return value;
}

TEST(ServicePreloadTenants, TwoTenantsSessionsShareNoLayoutHashSeedOrAtRandom) {
  TempDir dir;
  ServiceProcess svc(serve_args(dir, "preloaded_renew_jobs = 0\n"));
  HttpClient http = svc.client();
  std::string a1 = session_fingerprint(http, svc.alpha);
  std::string b1 = session_fingerprint(http, svc.beta);
  std::string a2 = session_fingerprint(http, svc.alpha);
  // Each word differs: id(sys), printf, hash('x'), AT_RANDOM.
  auto words = [](const std::string& v) {
    std::istringstream in(v);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  auto wa = words(a1), wb = words(b1), wa2 = words(a2);
  ASSERT_EQ(wa.size(), 4u) << a1;
  ASSERT_EQ(wb.size(), 4u) << b1;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NE(wa[i], wb[i]) << a1 << " | " << b1;
    EXPECT_NE(wa2[i], wb[i]) << a2 << " | " << b1;
  }
  EXPECT_EQ(svc.stop(), 0) << svc.log();
}

}  // namespace
}  // namespace airlock::testing
