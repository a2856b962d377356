// An admin key sees every tenant's jobs through GET /v1/jobs?tenant= and opens
// any of them; a run/read key of one tenant asking for another is refused and
// never sees the other's job (a real airlock serve, over HTTP).
#include <gtest/gtest.h>

#include <set>

#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

std::set<std::string> listed_ids(const json& page) {
  std::set<std::string> ids;
  for (const auto& j : page["jobs"]) ids.insert(j["id"].get<std::string>());
  return ids;
}

}  // namespace

TEST(AdminView, AnAdminSeesEveryTenantAndOtherKeysOnlyTheirOwn) {
  ServiceProcess svc;
  HttpClient http(svc.port());
  json a = run_job(http, svc.alpha, {{"command", {"true"}}});
  json b = run_job(http, svc.beta, {{"command", {"sh", "-c", "echo beta-secret > /output/s.txt; echo beta-out"}}});
  ASSERT_EQ(a["outcome"], "succeeded") << a.dump();
  ASSERT_EQ(b["outcome"], "succeeded") << b.dump();
  const std::string a_id = a["id"], b_id = b["id"];
  const std::string alpha_tid = a["tenant"], beta_tid = b["tenant"];
  ASSERT_NE(alpha_tid, beta_tid);

  auto get = [&](const TestKey& k, const std::string& target) { return http.request("GET", target, "", k.auth()); };

  // The admin key (tenant alpha, scope admin only): every tenant, each job with its tenant.
  auto all = get(svc.alpha_admin, "/v1/jobs?tenant=*");
  ASSERT_EQ(all.status, 200) << all.body;
  json page = all.json();
  EXPECT_EQ(page["scope"], "all_tenants");
  EXPECT_EQ(listed_ids(page), (std::set<std::string>{a_id, b_id}));
  for (const auto& j : page["jobs"]) {
    EXPECT_EQ(j["tenant"], j["id"] == b_id ? beta_tid : alpha_tid) << j.dump();
    EXPECT_EQ(j["tenant_name"], j["id"] == b_id ? "beta" : "alpha") << j.dump();
  }
  // One other tenant, by name and by id; its own by default.
  for (const std::string& t : {std::string("beta"), beta_tid}) {
    auto r = get(svc.alpha_admin, "/v1/jobs?tenant=" + t);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(listed_ids(r.json()), std::set<std::string>{b_id}) << t;
  }
  EXPECT_EQ(listed_ids(get(svc.alpha_admin, "/v1/jobs").json()), std::set<std::string>{a_id});
  EXPECT_EQ(get(svc.alpha_admin, "/v1/jobs?tenant=no-such-tenant").status, 404);

  // The image filter runs in the store: the jobs' image by name matches both, another none.
  std::string image;
  for (const auto& j : page["jobs"]) image = j["image"].get<std::string>();
  ASSERT_FALSE(image.empty());
  std::string name = image.substr(0, image.find('@'));
  EXPECT_EQ(listed_ids(get(svc.alpha_admin, "/v1/jobs?tenant=*&image=" + name).json()),
            (std::set<std::string>{a_id, b_id}));
  EXPECT_TRUE(listed_ids(get(svc.alpha_admin, "/v1/jobs?tenant=*&image=no-such-image").json()).empty());

  // The admin opens beta's job, its events and its output.
  auto one = get(svc.alpha_admin, "/v1/jobs/" + b_id);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.json()["tenant"], beta_tid);
  EXPECT_EQ(one.json()["outcome"], "succeeded");
  auto events = get(svc.alpha_admin, "/v1/jobs/" + b_id + "/events");
  EXPECT_EQ(events.status, 200);
  EXPECT_NE(events.body.find("beta-out"), std::string::npos) << events.body;
  auto out = get(svc.alpha_admin, "/v1/jobs/" + b_id + "/outputs/s.txt");
  EXPECT_EQ(out.status, 200);
  EXPECT_EQ(out.body, "beta-secret\n");
  // Reading is all the admin scope gives: cancelling beta's job needs 'run'.
  EXPECT_EQ(http.request("POST", "/v1/jobs/" + b_id + "/cancel", "", svc.alpha_admin.auth()).status, 403);

  // Hostile: alpha's run/read and read-only keys ask for beta's jobs every way.
  for (const TestKey* k : {&svc.alpha, &svc.alpha_reader}) {
    for (const std::string& t : {std::string("beta"), beta_tid, std::string("*"), std::string("no-such-tenant")}) {
      auto r = get(*k, "/v1/jobs?tenant=" + t);
      EXPECT_EQ(r.status, 403) << t << ": " << r.body;
      EXPECT_EQ(r.json()["error"]["code"], "forbidden") << r.body;
      EXPECT_EQ(r.body.find(b_id), std::string::npos);
    }
    auto own = get(*k, "/v1/jobs?tenant=alpha");
    ASSERT_EQ(own.status, 200) << own.body;
    EXPECT_EQ(listed_ids(own.json()), std::set<std::string>{a_id});
    EXPECT_EQ(listed_ids(get(*k, "/v1/jobs?image=" + name).json()), std::set<std::string>{a_id});
    for (const std::string& t : {"/v1/jobs/" + b_id, "/v1/jobs/" + b_id + "/events", "/v1/jobs/" + b_id + "/outputs/s.txt"}) {
      auto r = get(*k, t);
      EXPECT_EQ(r.status, 404) << t << ": " << r.body;
      EXPECT_EQ(r.body.find("beta-secret"), std::string::npos);
    }
  }
  // And beta cannot look at alpha's either.
  EXPECT_EQ(get(svc.beta, "/v1/jobs?tenant=alpha").status, 403);
}
