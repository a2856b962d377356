// Data requests (docs/data-requests.md) through the API: a job that asks for a
// third CSV ends input_requested with the request in its row and record; the
// application uploads the file and a follow-up job answers it (linked in both
// records, the chain verifies); another request is refused with a reason;
// answering twice is 409; another tenant's key sees nothing (404); a hostile
// job's flood of the channel is bounded; a request naming a URL makes no
// connection. And `airlock run`'s exit status for input_requested.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/unique_fd.h"
#include "service_fixture.h"
#include "store/store.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

// Totals three regions' CSVs; without the third it asks for it (and writes a
// partial output first, which must not be kept).
const char* kAnalyst =
    "import csv, os\n"
    "import airlock_request\n"
    "names = sorted(os.listdir('/inputs'))\n"
    "if 'south.csv' not in names:\n"
    "    open('/output/partial.txt', 'w').write('north and east only')\n"
    "    airlock_request.ask('south.csv', 'the total covers three regions; south is missing',\n"
    "                        description='the south region export, same columns', params={'region': 'south'})\n"
    "total = 0\n"
    "for n in ('north.csv', 'east.csv', 'south.csv'):\n"
    "    with open('/inputs/' + n) as f:\n"
    "        total += sum(int(r['amount']) for r in csv.DictReader(f))\n"
    "open('/output/total.txt', 'w').write(str(total))\n"
    "print('total', total)\n";

TEST(DataRequests, AJobAsksAndAFollowUpAnswersLinkedInBothRecords) {
  ServiceProcess svc;
  HttpClient http{svc.port()};
  std::string north = upload(http, svc.alpha, "north.csv", "amount\n1\n2\n");
  std::string east = upload(http, svc.alpha, "east.csv", "amount\n10\n");
  json first = run_job(http, svc.alpha, {{"code", kAnalyst}, {"inputs", {north, east}}});
  ASSERT_EQ(first["outcome"], "input_requested") << first.dump(2);
  const std::string first_id = first["id"];
  const json& asked = first["record"]["data_requests"];
  ASSERT_EQ(asked["requests"].size(), 1u) << asked.dump();
  EXPECT_EQ(asked["requests"][0]["id"], "r1");
  EXPECT_EQ(asked["requests"][0]["name"], "south.csv");
  EXPECT_EQ(asked["requests"][0]["params"], json({{"region", "south"}}));
  EXPECT_EQ(asked["limits"]["requests"], 4);
  EXPECT_EQ(first["data_requests"]["requests"][0]["answer"], json({{"state", "open"}})) << first.dump(2);
  // The partial output is listed, never kept: nothing to download or publish.
  EXPECT_EQ(first["record"]["outputs"][0]["name"], "partial.txt");
  EXPECT_EQ(http.request("GET", "/v1/jobs/" + first_id + "/outputs/partial.txt", "", svc.alpha.auth()).status, 404);

  // Another tenant cannot read, answer or refuse it.
  EXPECT_EQ(http.request("GET", "/v1/jobs/" + first_id, "", svc.beta.auth()).status, 404);
  auto foreign = http.request("POST", "/v1/jobs",
                              json{{"code", "print(1)"}, {"answers", {{"job", first_id}, {"requests", {"r1"}}}}}.dump(),
                              svc.beta.auth());
  EXPECT_EQ(foreign.status, 404) << foreign.body;
  auto foreign_refuse = http.request("POST", "/v1/jobs/" + first_id + "/requests/r1/refuse",
                                     json{{"reason", "no"}}.dump(), svc.beta.auth());
  EXPECT_EQ(foreign_refuse.status, 404) << foreign_refuse.body;
  // A read-only key of the same tenant may not decide.
  EXPECT_EQ(http.request("POST", "/v1/jobs/" + first_id + "/requests/r1/refuse", json{{"reason", "no"}}.dump(),
                         svc.alpha_reader.auth())
                .status,
            403);
  auto unknown = http.request("POST", "/v1/jobs",
                              json{{"code", "print(1)"}, {"answers", {{"job", first_id}, {"requests", {"r7"}}}}}.dump(),
                              svc.alpha.auth());
  EXPECT_EQ(unknown.status, 404) << unknown.body;

  // The application uploads the data and answers with a follow-up.
  std::string south = upload(http, svc.alpha, "south.csv", "amount\n100\n");
  json follow = run_job(http, svc.alpha,
                        {{"code", kAnalyst},
                         {"inputs", {north, east, south}},
                         {"answers", {{"job", first_id}, {"requests", {"r1"}}}}});
  ASSERT_EQ(follow["outcome"], "succeeded") << follow.dump(2);
  EXPECT_NE(follow["record"]["stdout"]["text"].get<std::string>().find("total 113"), std::string::npos);
  const json& link = follow["record"]["answers"];
  EXPECT_EQ(link["job"], first_id);
  EXPECT_EQ(link["requests"], json({"r1"}));
  EXPECT_EQ(link["record_sha256"].get<std::string>().size(), 64u) << link.dump();
  EXPECT_FALSE(follow["record"].contains("data_requests")) << "the follow-up asked nothing";

  auto again = http.request("GET", "/v1/jobs/" + first_id, "", svc.alpha.auth());
  ASSERT_EQ(again.status, 200);
  json answer = again.json()["data_requests"]["requests"][0]["answer"];
  EXPECT_EQ(answer["state"], "answered") << answer.dump();
  EXPECT_EQ(answer["by_job"], follow["id"]);

  // Answering twice, or refusing what was answered: 409, and no job runs.
  auto twice = http.request("POST", "/v1/jobs",
                            json{{"code", kAnalyst}, {"answers", {{"job", first_id}, {"requests", {"r1"}}}}}.dump(),
                            svc.alpha.auth());
  EXPECT_EQ(twice.status, 409) << twice.body;
  auto refuse_answered = http.request("POST", "/v1/jobs/" + first_id + "/requests/r1/refuse",
                                      json{{"reason", "too late"}}.dump(), svc.alpha.auth());
  EXPECT_EQ(refuse_answered.status, 409) << refuse_answered.body;
  // A job that did not ask has nothing to answer.
  auto not_asking = http.request(
      "POST", "/v1/jobs", json{{"code", "print(1)"}, {"answers", {{"job", follow["id"]}, {"requests", {"r1"}}}}}.dump(),
      svc.alpha.auth());
  EXPECT_EQ(not_asking.status, 404) << not_asking.body;

  // Both records and the answer are in alpha's chain, which verifies.
  svc.stop();
  auto verified = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(verified.status, 0) << verified.out << verified.err;
}

TEST(DataRequests, ARefusalIsRecordedWithItsReason) {
  ServiceProcess svc;
  HttpClient http{svc.port()};
  json job = run_job(http, svc.alpha,
                     {{"code",
                       "import airlock_request\n"
                       "airlock_request.add('salaries.csv', 'to weigh the totals by pay grade')\n"
                       "airlock_request.add('grades.csv', 'to name the pay grades')\n"
                       "airlock_request.stop()\n"}});
  ASSERT_EQ(job["outcome"], "input_requested") << job.dump(2);
  const std::string id = job["id"];
  ASSERT_EQ(job["data_requests"]["requests"].size(), 2u);

  auto bad = http.request("POST", "/v1/jobs/" + id + "/requests/r1/refuse", json{{"reason", ""}}.dump(),
                          svc.alpha.auth());
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(http.request("POST", "/v1/jobs/" + id + "/requests/r9/refuse", json{{"reason", "x"}}.dump(),
                         svc.alpha.auth())
                .status,
            404);
  auto refused = http.request("POST", "/v1/jobs/" + id + "/requests/r1/refuse",
                              json{{"reason", "salaries are not shared with generated code"}}.dump(),
                              svc.alpha.auth());
  ASSERT_EQ(refused.status, 200) << refused.body;
  json r1 = refused.json()["data_requests"]["requests"][0]["answer"];
  EXPECT_EQ(r1["state"], "refused");
  EXPECT_EQ(r1["reason"], "salaries are not shared with generated code");
  EXPECT_EQ(r1["key_id"], svc.alpha.key_id);
  EXPECT_EQ(refused.json()["data_requests"]["requests"][1]["answer"]["state"], "open") << "r2 stays open";
  auto twice = http.request("POST", "/v1/jobs/" + id + "/requests/r1/refuse", json{{"reason", "again"}}.dump(),
                            svc.alpha.auth());
  EXPECT_EQ(twice.status, 409) << twice.body;
  svc.stop();
  auto verified = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(verified.status, 0) << verified.out << verified.err;
}

TEST(DataRequests, AFloodIsBoundedAndARequestNamingAUrlConnectsNowhere) {
  // A listener the test made: the request names it; nothing may connect.
  airlock::UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  ASSERT_TRUE(listener);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&at), sizeof(at)), 0);
  ASSERT_EQ(::listen(listener.get(), 8), 0);
  socklen_t len = sizeof(at);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&at), &len), 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(at.sin_port)) + "/export.csv";

  ServiceProcess svc;
  HttpClient http{svc.port()};
  for (const char* profile : {"standard", "compute"}) {
    json job = run_job(
        http, svc.alpha,
        {{"profile", profile},
         {"code",
          "import os, json, signal\n"
          "signal.signal(signal.SIGPIPE, signal.SIG_IGN)\n"
          "fd = int(os.environ['AIRLOCK_REQUEST_FD'])\n"
          "def send(b):\n"
          "    v = memoryview(b)\n"
          "    while v: v = v[os.write(fd, v):]\n"
          "send(json.dumps({'name': 'export.csv', 'why': 'fetch this', 'params': {'url': '" + url + "'}}).encode() + b'\\n')\n"
          "send(b'{not json}\\n')\n"
          "send(b''.join(json.dumps({'name': 'n%d' % i, 'why': 'w'}).encode() + b'\\n' for i in range(1000)))\n"
          "try:\n"
          "    for _ in range(64): send(b'x' * 65536)\n"
          "    print('wrote 4 MiB')\n"
          "except BrokenPipeError:\n"
          "    print('closed')\n"}});
    ASSERT_EQ(job["outcome"], "input_requested") << profile << ": " << job.dump(2);
    EXPECT_NE(job["record"]["stdout"]["text"].get<std::string>().find("closed"), std::string::npos) << profile;
    const json& dr = job["record"]["data_requests"];
    ASSERT_EQ(dr["requests"].size(), 3u) << dr.dump();  // export.csv, n0, n1 (4 lines looked at)
    EXPECT_EQ(dr["requests"][0]["params"]["url"], url) << "kept as text";
    ASSERT_EQ(dr["refused"].size(), 3u) << dr.dump();
    EXPECT_NE(dr["refused"][0]["reason"].get<std::string>().find("not valid JSON"), std::string::npos);
    EXPECT_EQ(dr["refused"][1]["reason"], "over the limit of 4 requests: not read");
    EXPECT_EQ(dr["refused"][1]["lines"], 998);
    EXPECT_EQ(dr["refused"][2]["bytes"], 1 << 20) << "the host read 1 MiB and closed the channel";
    EXPECT_LT(job.dump().size(), 64u << 10) << "the record holds what fit, not the flood";
  }
  sockaddr_in peer{};
  socklen_t peer_len = sizeof(peer);
  EXPECT_LT(::accept(listener.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len), 0);
  EXPECT_EQ(errno, EAGAIN) << "something connected to the URL a request named";
}

// A job of alpha's that asks for one file (r1) and ends input_requested.
std::string asking_job(HttpClient& http, const TestKey& key) {
  json first = run_job(http, key,
                       {{"code", "import airlock_request\nairlock_request.ask('more.csv', 'one more export')\n"}});
  EXPECT_EQ(first["outcome"], "input_requested") << first.dump(2);
  return first.value("id", "");
}

json follow_up_body(const std::string& first_id) {
  return {{"command", {"true"}}, {"answers", {{"job", first_id}, {"requests", {"r1"}}}}};
}

// How many of the tenant's jobs ended `outcome`, and how many there are.
std::pair<size_t, size_t> jobs_ending(HttpClient& http, const TestKey& key, const std::string& outcome) {
  auto list = http.request("GET", "/v1/jobs?limit=100", "", key.auth());
  EXPECT_EQ(list.status, 200) << list.body;
  size_t n = 0;
  json jobs = list.json().value("jobs", json::array());
  for (const auto& j : jobs) n += j.value("outcome", json()) == outcome;
  return {n, jobs.size()};
}

TEST(DataRequests, AFollowUpRetriedWithItsIdempotencyKeyGetsTheFirstFollowUp) {
  ServiceProcess svc;
  HttpClient http{svc.port()};
  const std::string first_id = asking_job(http, svc.alpha);
  ASSERT_FALSE(first_id.empty());
  auto h = svc.alpha.auth();
  h["idempotency-key"] = "follow-up-1";
  const std::string body = follow_up_body(first_id).dump();
  auto accepted = http.request("POST", "/v1/jobs", body, h);
  ASSERT_EQ(accepted.status, 201) << accepted.body;
  // The client's connection dropped before the answer: it sends the same again.
  auto retried = http.request("POST", "/v1/jobs", body, h);
  EXPECT_EQ(retried.status, 200) << retried.body;
  EXPECT_EQ(retried.json().value("id", ""), accepted.json().value("id", ""));
  // Another key (another follow-up) for the answered request is still refused.
  auto other = http.request("POST", "/v1/jobs", body, svc.alpha.auth());
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_EQ(other.json()["error"]["code"], "already_answered") << other.body;
  EXPECT_NE(other.body.find("answered by job " + accepted.json().value("id", "")), std::string::npos) << other.body;
  EXPECT_EQ(jobs_ending(http, svc.alpha, "input_rejected").first, 0u) << "a refused follow-up left a job";
}

TEST(DataRequests, OfFollowUpsRacingForOneRequestTheRefusedLeaveNothing) {
  ServiceProcess svc;
  HttpClient http{svc.port()};
  const std::string first_id = asking_job(http, svc.alpha);
  ASSERT_FALSE(first_id.empty());
  json racing = follow_up_body(first_id);
  racing["wait_s"] = 60;  // the accepted one answers once it ended: every record is written then
  const std::string body = racing.dump();
  constexpr int kRacers = 16;
  std::vector<int> status(kRacers, 0);
  std::atomic<int> ready{0};
  std::vector<std::thread> racers;
  for (int i = 0; i < kRacers; ++i)
    racers.emplace_back([&, i] {
      HttpClient mine{svc.port()};
      ready.fetch_add(1);
      while (ready.load() < kRacers) std::this_thread::yield();
      auto r = mine.request("POST", "/v1/jobs", body, svc.alpha.auth());
      status[i] = r.status;
    });
  for (auto& t : racers) t.join();
  int accepted = 0;
  for (int i = 0; i < kRacers; ++i) {
    if (status[i] == 201) ++accepted;
    else EXPECT_EQ(status[i], 409) << "racer " << i;
  }
  ASSERT_EQ(accepted, 1);
  auto [rejected, total] = jobs_ending(http, svc.alpha, "input_rejected");
  EXPECT_EQ(rejected, 0u) << "a refused follow-up left an input_rejected job";
  EXPECT_EQ(total, 2u) << "the first job and the accepted follow-up only";
  svc.stop();
  auto store = airlock::store::Store::open(svc.data_dir());
  ASSERT_TRUE(store) << store.error().message();
  auto report = (*store)->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok);
  // The first job's record, the answer's, the follow-up's: no record of a refused one.
  EXPECT_EQ(report->records, 3u);
}

TEST(DataRequests, AirlockRunExitsWith119AndSaysWhatIsAsked) {
  TempDir dir;
  Ran ran = run_airlock({"run", "--state-dir", dir.state(), "--", "python3", "-c",
                         "import airlock_request\nairlock_request.ask('more.csv', 'the second year')\n"});
  EXPECT_EQ(ran.status, 119) << ran.err;
  EXPECT_NE(ran.err.find("input_requested"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("asks r1 more.csv: the second year"), std::string::npos) << ran.err;
  // A line the helper would refuse, written raw: an escape sequence in why.
  // The host refuses it too, with the reason; nothing was asked, the run succeeded.
  Ran raw = run_airlock({"run", "--state-dir", dir.state(), "--json", "--", "sh", "-c",
                         "printf '%s\\n' '{\"name\": \"x\", \"why\": \"\\u001b[2J\"}' >&$AIRLOCK_REQUEST_FD"});
  EXPECT_EQ(raw.status, 0) << raw.err;
  json rec = raw.record();
  EXPECT_EQ(rec["outcome"], "succeeded") << rec.dump(2);
  ASSERT_EQ(rec["data_requests"]["refused"].size(), 1u) << rec.dump(2);
  EXPECT_EQ(rec["data_requests"]["refused"][0]["reason"], "why: control characters are not allowed");
  EXPECT_TRUE(rec["data_requests"]["requests"].empty());
}

}  // namespace
