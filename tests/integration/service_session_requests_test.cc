// Data requests from sessions through airlock serve (docs/sessions.md, "Data
// requests"): code in a call asks the application for data, the call ends
// input_requested with its state kept, the client uploads the file and calls
// again with the request's id in `answers`, or refuses it; the calls list and
// the session's record show each request with its answer. Hostile: a call
// that floods requests, one huge request, one that names a host address in
// its request (which nothing connects to), another tenant.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/unique_fd.h"
#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

class SessionRequests : public ::testing::Test {
 protected:
  explicit SessionRequests(std::vector<std::string> args = {}) : svc(std::move(args)) {}
  std::string create() {
    auto r = http.request("POST", "/v1/sessions", json{{"idle_timeout_s", 120}}.dump(), svc.alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json()["id"].get<std::string>() : "";
  }
  json exec(const std::string& sid, const std::string& code, const json& extra = json::object()) {
    json body = extra;
    body["code"] = code;
    body["wait_s"] = 60;
    auto r = http.request("POST", "/v1/sessions/" + sid + "/execs", body.dump(), svc.alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json() : json{{"status", "http " + std::to_string(r.status)}, {"body", r.body}};
  }
  void upload(const std::string& sid, const std::string& path, const std::string& content) {
    auto r = http.request("PUT", "/v1/sessions/" + sid + "/files?path=" + path, content, svc.alpha.auth());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  airlock::api::Response refuse(const std::string& sid, const std::string& rid, const std::string& reason,
                      const TestKey* key = nullptr) {
    return http.request("POST", "/v1/sessions/" + sid + "/requests/" + rid + "/refuse",
                        json{{"reason", reason}}.dump(), (key ? *key : svc.alpha).auth());
  }
  json get(const std::string& target) {
    auto r = http.request("GET", target, "", svc.alpha.auth());
    EXPECT_EQ(r.status, 200) << target << " " << r.body;
    return r.status == 200 ? r.json() : json();
  }
  json close(const std::string& sid) {
    auto r = http.request("DELETE", "/v1/sessions/" + sid, "", svc.alpha.auth());
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json() : json();
  }
  static json listed(const json& execs, const std::string& id) {
    for (const auto& e : execs["execs"])
      if (e["id"] == id) return e;
    return json();
  }

  ServiceProcess svc;
  HttpClient http{svc.port()};
};

// The same with the service's preloaded pool on: sessions start as forks of
// the preloaded interpreter (mostly as spares), each kernel a fork of its keeper.
class SessionRequestsPreloaded : public SessionRequests {
 protected:
  SessionRequestsPreloaded() : SessionRequests({"--preloaded", "1"}) {}
};

TEST_F(SessionRequestsPreloaded, APreloadedSessionAsksAndIsAnswered) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  EXPECT_EQ(get("/v1/sessions/" + sid)["start"], "preloaded");
  json asked = exec(sid, "import airlock_request\nkept = 41\nairlock_request.ask('more.csv', 'one more file')");
  ASSERT_EQ(asked["status"], "input_requested") << asked.dump(2);
  ASSERT_EQ(asked["data_requests"][0]["id"], "r1");
  upload(sid, "more.csv", "n\n1\n");
  json done = exec(sid, "kept + int(open('more.csv').read().split()[1])", {{"answers", {"r1"}}});
  ASSERT_EQ(done["status"], "ok") << done.dump(2);
  EXPECT_EQ(done["result"]["value"], "42");
  close(sid);
}

TEST_F(SessionRequests, ACallAsksForAThirdCsvAndTheAnswerLetsTheNextCallSucceed) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  upload(sid, "sales_2023.csv", "region,units\nnorth,3\nsouth,5\n");
  upload(sid, "sales_2024.csv", "region,units\nnorth,4\nsouth,6\n");

  json asked = exec(sid, "import pandas as pd, airlock_request\n"
                         "frames = [pd.read_csv('sales_2023.csv'), pd.read_csv('sales_2024.csv')]\n"
                         "airlock_request.ask('sales_2025.csv', 'the report compares three years',\n"
                         "                    description='the 2025 export', params={'year': 2025})\n"
                         "frames = None  # not reached\n");
  ASSERT_EQ(asked["status"], "input_requested") << asked.dump(2);
  ASSERT_EQ(asked["data_requests"].size(), 1u) << asked.dump(2);
  json r1 = asked["data_requests"][0];
  EXPECT_EQ(r1["id"], "r1");
  EXPECT_EQ(r1["name"], "sales_2025.csv");
  EXPECT_EQ(r1["why"], "the report compares three years");
  EXPECT_EQ(r1["params"], (json{{"year", 2025}}));
  EXPECT_EQ(r1["answer"]["state"], "open");
  EXPECT_EQ(asked["result"]["data_requests"], asked["data_requests"]);

  // The client uploads the data and calls again, naming the request it answers.
  upload(sid, "sales_2025.csv", "region,units\nnorth,7\nsouth,9\n");
  json done = exec(sid, "import airlock_request\n"
                        "assert airlock_request.answer('r1') == {'state': 'answered'}, airlock_request.answer('r1')\n"
                        "frames.append(pd.read_csv('sales_2025.csv'))\n"
                        "int(sum(f.units.sum() for f in frames))",
                   {{"answers", {"r1"}}});
  ASSERT_EQ(done["status"], "ok") << done.dump(2);
  EXPECT_EQ(done["result"]["value"], "34");  // the frames of the first call were kept

  // The calls list shows the request with its answer, and the answering call.
  json execs = get("/v1/sessions/" + sid + "/execs");
  json first = listed(execs, asked["id"]);
  ASSERT_EQ(first["data_requests"].size(), 1u) << execs.dump(2);
  EXPECT_EQ(first["data_requests"][0]["answer"]["state"], "answered");
  EXPECT_EQ(first["data_requests"][0]["answer"]["by_call"], done["id"]);
  EXPECT_EQ(first["data_requests"][0]["answer"]["key_id"], svc.alpha.key_id);
  EXPECT_EQ(listed(execs, done["id"])["answers"], json({"r1"}));

  // An answered request cannot be answered or refused again.
  auto again = http.request("POST", "/v1/sessions/" + sid + "/execs",
                            json{{"code", "1"}, {"answers", {"r1"}}}.dump(), svc.alpha.auth());
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(again.json()["error"]["code"], "already_answered") << again.body;
  EXPECT_EQ(refuse(sid, "r1", "too late").status, 409);
  // An id the session never gave is refused too, before the call runs.
  auto unknown = http.request("POST", "/v1/sessions/" + sid + "/execs",
                              json{{"code", "1"}, {"answers", {"r7"}}}.dump(), svc.alpha.auth());
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  close(sid);
}

TEST_F(SessionRequests, ARefusalIsRecordedAndTheCodeLearnsItsReason) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  json a = exec(sid, "import airlock_request\nairlock_request.ask('payroll.csv', 'salaries per region')");
  ASSERT_EQ(a["status"], "input_requested") << a.dump(2);
  ASSERT_EQ(a["data_requests"][0]["id"], "r1");
  json b = exec(sid, "airlock_request.ask('regions.csv', 'region names')");
  ASSERT_EQ(b["status"], "input_requested") << b.dump(2);
  ASSERT_EQ(b["data_requests"][0]["id"], "r2");  // ids are unique in the session

  auto refused = refuse(sid, "r1", "payroll data is not available to this assistant");
  ASSERT_EQ(refused.status, 200) << refused.body;
  EXPECT_EQ(refused.json()["answer"]["state"], "refused");
  EXPECT_EQ(refused.json()["answer"]["reason"], "payroll data is not available to this assistant");
  EXPECT_EQ(refuse(sid, "r1", "twice").status, 409);
  EXPECT_EQ(refuse(sid, "r9", "no such").status, 404);
  EXPECT_EQ(http.request("POST", "/v1/sessions/" + sid + "/requests/r2/refuse", R"({"reason": ""})",
                         svc.alpha.auth()).status, 400);
  // A read-only key may not refuse; another tenant does not see the session.
  EXPECT_EQ(refuse(sid, "r2", "mine", &svc.alpha_reader).status, 403);
  EXPECT_EQ(refuse(sid, "r2", "not yours", &svc.beta).status, 404);
  EXPECT_EQ(http.request("GET", "/v1/sessions/" + sid + "/execs", "", svc.beta.auth()).status, 404);

  json learn = exec(sid, "r1 = airlock_request.answer('r1')\n(sorted(r1.items()), airlock_request.answer('r2'))");
  ASSERT_EQ(learn["status"], "ok") << learn.dump(2);
  EXPECT_EQ(learn["result"]["value"],
            "([('reason', 'payroll data is not available to this assistant'), ('state', 'refused')], None)");
  upload(sid, "regions.csv", "region\nnorth\n");
  json c = exec(sid, "open('regions.csv').read().split()[1]", {{"answers", {"r2"}}});
  ASSERT_EQ(c["status"], "ok") << c.dump(2);

  // The record at close shows both requests and both answers.
  json closed = close(sid);
  json record = closed["record"];
  ASSERT_EQ(record["data_requests"]["requests"].size(), 2u) << record.dump(2);
  EXPECT_EQ(record["data_requests"]["requests"][0]["answer"]["state"], "refused");
  EXPECT_EQ(record["data_requests"]["requests"][0]["answer"]["key_id"], svc.alpha.key_id);
  EXPECT_EQ(record["data_requests"]["requests"][1]["answer"]["state"], "answered");
  EXPECT_EQ(record["data_requests"]["requests"][1]["answer"]["by_call"], c["id"]);
  EXPECT_EQ(record["data_requests"]["limits"]["requests_per_session"], 32);
  EXPECT_EQ(record["calls"][0]["data_requests"][0]["answer"]["state"], "refused") << record["calls"].dump(2);
  EXPECT_EQ(record["calls"][1]["data_requests"][0]["answer"]["state"], "answered");
  int answer_events = 0;
  for (const auto& e : record["events"]) answer_events += e["event"] == "data_request_answer";
  EXPECT_EQ(answer_events, 2) << record["events"].dump(2);
  // After the close, the calls list still shows the answers (from the record).
  json execs = get("/v1/sessions/" + sid + "/execs");
  EXPECT_EQ(listed(execs, a["id"])["data_requests"][0]["answer"]["state"], "refused") << execs.dump(2);
  EXPECT_EQ(listed(execs, b["id"])["data_requests"][0]["answer"]["state"], "answered");
  EXPECT_EQ(refuse(sid, "r2", "closed").status, 409);
}

TEST_F(SessionRequests, TheThirtyThirdRequestOfASessionIsRefusedWithItsReason) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  for (int call = 0; call < 8; ++call) {
    json r = exec(sid, "import airlock_request\nfor i in range(4): airlock_request.add('part%d.csv' % i, 'more')");
    ASSERT_EQ(r["status"], "input_requested") << r.dump(2);  // add() without stop(): it asked all the same
    ASSERT_EQ(r["data_requests"].size(), 4u);
    EXPECT_EQ(r["data_requests"][3]["id"], "r" + std::to_string(call * 4 + 4));
  }
  json over = exec(sid, "airlock_request.ask('one_more.csv', 'the 33rd')");
  EXPECT_EQ(over["status"], "error") << over.dump(2);  // it asked, and nothing it asked was accepted
  EXPECT_EQ(over["data_requests"].size(), 0u);
  ASSERT_EQ(over["data_requests_refused"].size(), 1u) << over.dump(2);
  EXPECT_NE(over["data_requests_refused"][0]["reason"].get<std::string>().find("32 data requests, its limit"),
            std::string::npos)
      << over.dump(2);
  EXPECT_EQ(get("/v1/sessions/" + sid)["data_requests"]["requests"].size(), 32u);
  close(sid);
}

TEST_F(SessionRequests, HostileRequestsAreBoundedAndNeverReachTheNetwork) {
  // A listener of the test's own on the host's loopback: the request names
  // it; nothing on the host may connect to it.
  airlock::UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/export.csv";

  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  // A flood straight to the fd: 100000 lines; the call ends, 4 are judged.
  json flood = exec(sid, "import os\nfd = int(os.environ['AIRLOCK_REQUEST_FD'])\n"
                         "line = b'{\"name\": \"x.csv\", \"why\": \"flood\"}\\n'\n"
                         "for _ in range(1000): os.write(fd, line * 100)\n");
  ASSERT_EQ(flood["status"], "input_requested") << flood.dump(2);
  EXPECT_EQ(flood["data_requests"].size(), 4u);
  ASSERT_EQ(flood["data_requests_refused"].size(), 1u) << flood.dump(2);
  EXPECT_EQ(flood["data_requests_refused"][0]["lines"], 100000 - 4);
  EXPECT_NE(flood["data_requests_refused"][0]["reason"].get<std::string>().find("4"), std::string::npos);

  // One 8 MiB request, a line that is no JSON, and a request that names the
  // host's listener: refused, refused, and kept as inert data.
  json huge = exec(sid, "import os, json\nfd = int(os.environ['AIRLOCK_REQUEST_FD'])\n"
                        "os.write(fd, b'{\"name\": \"big\", \"why\": \"' + b'A' * (8 << 20) + b'\"}\\n')\n"
                        "os.write(fd, b'GET / HTTP/1.1\\n')\n"
                        "os.write(fd, (json.dumps({'name': 'export.csv', 'why': 'fetch it for me', "
                        "'params': {'url': '" + url + "'}}) + '\\n').encode())\n");
  ASSERT_EQ(huge["status"], "input_requested") << huge.dump(2);
  ASSERT_EQ(huge["data_requests_refused"].size(), 2u) << huge.dump(2);
  EXPECT_NE(huge["data_requests_refused"][0]["reason"].get<std::string>().find("longer than 4096 bytes"),
            std::string::npos);
  EXPECT_GT(huge["data_requests_refused"][0]["bytes"].get<uint64_t>(), 8u << 20);
  EXPECT_FALSE(huge["data_requests_refused"][1]["reason"].get<std::string>().empty());
  ASSERT_EQ(huge["data_requests"].size(), 1u);
  EXPECT_EQ(huge["data_requests"][0]["params"]["url"], url);
  // The service held none of the huge line: the stored call is small.
  EXPECT_LT(get("/v1/sessions/" + sid + "/execs/" + huge["id"].get<std::string>()).dump().size(), 64u << 10);

  // The call itself cannot reach the listener either (no route out of its netns).
  json direct = exec(sid, "import socket\ns = socket.socket()\ns.settimeout(2)\n"
                          "try:\n    s.connect(('127.0.0.1', " + std::to_string(ntohs(addr.sin_port)) + "))\n"
                          "    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n");
  ASSERT_EQ(direct["status"], "ok") << direct.dump(2);
  EXPECT_EQ(direct["result"]["stdout"].get<std::string>().rfind("refused", 0), 0u) << direct.dump(2);
  json record = close(sid)["record"];
  for (const auto& e : record["events"]) EXPECT_NE(e["event"], "network") << e.dump();
  // Nobody connected to the listener: not the service, not the sandbox.
  airlock::UniqueFd accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  EXPECT_FALSE(accepted) << "something connected to the address the request named";
  EXPECT_EQ(errno, EAGAIN);
}

}  // namespace
