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

namespace {

std::set<std::string> listed(const json& page, const char* list, const char* key) {
  std::set<std::string> out;
  for (const auto& v : page[list]) out.insert(v[key].get<std::string>());
  return out;
}

}  // namespace

// Sessions and snapshots the same way: an admin key lists and opens every
// tenant's (live and closed, with calls and record), but acts only on its own
// tenant's; a run/read key of alpha asking for beta's is refused and never sees them.
TEST(AdminView, AnAdminReadsEveryTenantsSessionsAndSnapshotsAndActsOnNone) {
  ServiceProcess svc;
  HttpClient http(svc.port());
  auto get = [&](const TestKey& k, const std::string& target) { return http.request("GET", target, "", k.auth()); };
  auto create = [&](const TestKey& k) {
    auto r = http.request("POST", "/v1/sessions", "{}", k.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json()["id"].get<std::string>() : std::string();
  };
  const std::string a_sid = create(svc.alpha), b_sid = create(svc.beta);
  ASSERT_FALSE(a_sid.empty());
  ASSERT_FALSE(b_sid.empty());
  auto call = http.request("POST", "/v1/sessions/" + b_sid + "/execs",
                           json{{"code", "open('s.txt', 'w').write('beta-secret')\nprint('beta-call')"}, {"wait_s", 60}}.dump(),
                           svc.beta.auth());
  ASSERT_EQ(call.status, 201) << call.body;
  const std::string b_call = call.json()["id"];
  ASSERT_EQ(call.json()["status"], "ok") << call.body;
  auto snap = http.request("POST", "/v1/sessions/" + b_sid + "/snapshots", "", svc.beta.auth());
  ASSERT_EQ(snap.status, 201) << snap.body;
  const std::string b_digest = snap.json()["digest"];
  ASSERT_EQ(http.request("DELETE", "/v1/sessions/" + a_sid, "", svc.alpha.auth()).status, 200);
  json beta_session = get(svc.beta, "/v1/sessions/" + b_sid).json();
  const std::string beta_tid = beta_session["tenant"], alpha_tid = get(svc.alpha, "/v1/sessions/" + a_sid).json()["tenant"];
  ASSERT_NE(alpha_tid, beta_tid);

  for (const TestKey* admin : {&svc.alpha_admin, &svc.alpha_operator}) {
    // Every tenant's sessions, each with its tenant; one tenant by name or id; its own by default.
    auto all = get(*admin, "/v1/sessions?tenant=*");
    ASSERT_EQ(all.status, 200) << all.body;
    EXPECT_EQ(all.json()["scope"], "all_tenants");
    EXPECT_EQ(listed(all.json(), "sessions", "id"), (std::set<std::string>{a_sid, b_sid}));
    for (const auto& s : all.json()["sessions"]) {
      EXPECT_EQ(s["tenant"], s["id"] == b_sid ? beta_tid : alpha_tid) << s.dump();
      EXPECT_EQ(s["tenant_name"], s["id"] == b_sid ? "beta" : "alpha") << s.dump();
      EXPECT_EQ(s["state"], s["id"] == b_sid ? "ready" : "closed") << s.dump();
    }
    for (const std::string& t : {std::string("beta"), beta_tid})
      EXPECT_EQ(listed(get(*admin, "/v1/sessions?tenant=" + t).json(), "sessions", "id"), std::set<std::string>{b_sid});
    EXPECT_EQ(listed(get(*admin, "/v1/sessions").json(), "sessions", "id"), std::set<std::string>{a_sid});
    EXPECT_EQ(get(*admin, "/v1/sessions?tenant=no-such-tenant").status, 404);

    // Beta's live session, its calls and one call's output.
    auto one = get(*admin, "/v1/sessions/" + b_sid);
    ASSERT_EQ(one.status, 200) << one.body;
    EXPECT_EQ(one.json()["tenant"], beta_tid);
    EXPECT_EQ(listed(get(*admin, "/v1/sessions/" + b_sid + "/execs").json(), "execs", "id"), std::set<std::string>{b_call});
    auto c = get(*admin, "/v1/sessions/" + b_sid + "/execs/" + b_call);
    ASSERT_EQ(c.status, 200) << c.body;
    EXPECT_NE(c.body.find("beta-call"), std::string::npos) << c.body;

    // Beta's snapshots: listed with the tenant, opened with its files.
    auto snaps = get(*admin, "/v1/snapshots?tenant=*");
    ASSERT_EQ(snaps.status, 200) << snaps.body;
    EXPECT_EQ(snaps.json()["scope"], "all_tenants");
    ASSERT_EQ(snaps.json()["snapshots"].size(), 1u) << snaps.body;
    EXPECT_EQ(snaps.json()["snapshots"][0]["digest"], b_digest);
    EXPECT_EQ(snaps.json()["snapshots"][0]["tenant"], beta_tid);
    EXPECT_EQ(snaps.json()["snapshots"][0]["tenant_name"], "beta");
    EXPECT_TRUE(get(*admin, "/v1/snapshots").json()["snapshots"].empty());
    for (const std::string& q : {std::string(), std::string("?tenant=beta"), std::string("?tenant=*")}) {
      auto info = get(*admin, "/v1/snapshots/" + b_digest + q);
      ASSERT_EQ(info.status, 200) << q << ": " << info.body;
      EXPECT_EQ(info.json()["tenant"], beta_tid);
      EXPECT_EQ(listed(info.json(), "files", "path").count("s.txt"), 1u) << info.body;
    }
    // Alpha (its own tenant) has no such snapshot: named, it is not there.
    EXPECT_EQ(get(*admin, "/v1/snapshots/" + b_digest + "?tenant=alpha").status, 404);

    // Read-only across tenants: closing, calling, snapshotting beta's session
    // and deleting its snapshot are refused (403 without 'run'; 404 with it,
    // as another tenant's session is not there for acting on).
    int refused = admin == &svc.alpha_admin ? 403 : 404;
    EXPECT_EQ(http.request("DELETE", "/v1/sessions/" + b_sid, "", admin->auth()).status, refused);
    EXPECT_EQ(http.request("POST", "/v1/sessions/" + b_sid + "/execs", R"({"code":"1"})", admin->auth()).status, refused);
    EXPECT_EQ(http.request("POST", "/v1/sessions/" + b_sid + "/snapshots", "", admin->auth()).status, refused);
    EXPECT_EQ(http.request("POST", "/v1/sessions/" + b_sid + "/interrupt", "", admin->auth()).status, refused);
    EXPECT_EQ(http.request("DELETE", "/v1/snapshots/" + b_digest, "", admin->auth()).status, refused);
  }

  // Hostile: alpha's run/read and read-only keys ask for beta's every way.
  for (const TestKey* k : {&svc.alpha, &svc.alpha_reader}) {
    for (const std::string& t : {std::string("beta"), beta_tid, std::string("*"), std::string("no-such-tenant")}) {
      for (const std::string& target : {"/v1/sessions?tenant=" + t, "/v1/snapshots?tenant=" + t,
                                        "/v1/snapshots/" + b_digest + "?tenant=" + t}) {
        auto r = get(*k, target);
        EXPECT_EQ(r.status, 403) << target << ": " << r.body;
        EXPECT_EQ(r.json()["error"]["code"], "forbidden") << r.body;
        EXPECT_EQ(r.body.find(b_sid), std::string::npos);
      }
    }
    EXPECT_EQ(listed(get(*k, "/v1/sessions?tenant=alpha").json(), "sessions", "id"), std::set<std::string>{a_sid});
    EXPECT_TRUE(get(*k, "/v1/snapshots").json()["snapshots"].empty());
    for (const std::string& target : {"/v1/sessions/" + b_sid, "/v1/sessions/" + b_sid + "/execs",
                                      "/v1/sessions/" + b_sid + "/execs/" + b_call, "/v1/snapshots/" + b_digest}) {
      auto r = get(*k, target);
      EXPECT_EQ(r.status, 404) << target << ": " << r.body;
      EXPECT_EQ(r.body.find("beta-call"), std::string::npos);
    }
  }
  EXPECT_EQ(http.request("DELETE", "/v1/sessions/" + b_sid, "", svc.alpha.auth()).status, 404);
  EXPECT_EQ(http.request("DELETE", "/v1/snapshots/" + b_digest, "", svc.alpha.auth()).status, 404);
  EXPECT_EQ(get(svc.beta, "/v1/sessions?tenant=alpha").status, 403);

  // Nothing above touched beta's session or snapshot; once beta closes it, the
  // admin reads its record and the stored call.
  EXPECT_EQ(get(svc.beta, "/v1/sessions/" + b_sid).json()["state"], "ready");
  EXPECT_EQ(get(svc.beta, "/v1/snapshots/" + b_digest).status, 200);
  ASSERT_EQ(http.request("DELETE", "/v1/sessions/" + b_sid, "", svc.beta.auth()).status, 200);
  auto closed = get(svc.alpha_admin, "/v1/sessions/" + b_sid);
  ASSERT_EQ(closed.status, 200) << closed.body;
  EXPECT_EQ(closed.json()["state"], "closed");
  EXPECT_EQ(closed.json()["tenant"], beta_tid);
  ASSERT_TRUE(closed.json().contains("record")) << closed.body;
  EXPECT_EQ(closed.json()["record"]["close_reason"], "closed") << closed.body;
  auto stored = get(svc.alpha_admin, "/v1/sessions/" + b_sid + "/execs/" + b_call);
  ASSERT_EQ(stored.status, 200) << stored.body;
  EXPECT_EQ(stored.json()["stored"], true);
  EXPECT_NE(stored.body.find("beta-call"), std::string::npos) << stored.body;
  EXPECT_EQ(get(svc.alpha_reader, "/v1/sessions/" + b_sid + "/execs/" + b_call).status, 404);
}
