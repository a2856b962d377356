// Sessions through airlock serve, as an agent uses them over HTTP: turns that
// build on each other, files, interrupt and restart, idle and lifetime expiry,
// a client that reconnects to a call's output, snapshots restored into a new
// session and a job, snapshot expiry, and the hostile cases of long-lived
// sandboxes (a process left running, a call that never returns, another
// session or tenant).
#include <dirent.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "cli/session_args.h"
#include "service_fixture.h"
#include "session_zygote.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;


class SessionApi : public ::testing::Test {
 protected:
  explicit SessionApi(std::vector<std::string> args = {}) : svc(with_start(std::move(args))) {}
  // SESSION_START=preloaded: the service's preloaded pool is on, so its
  // sessions start from the preloaded interpreter (mostly as spares).
  static std::vector<std::string> with_start(std::vector<std::string> args) {
    if (sessions_preloaded()) args.insert(args.end(), {"--preloaded", "1"});
    return args;
  }

  std::string create(const json& body = json::object(), const TestKey* key = nullptr) {
    auto r = http.request("POST", "/v1/sessions", body.dump(), (key ? *key : svc.alpha).auth());
    EXPECT_EQ(r.status, 201) << r.body;
    if (r.status != 201) return "";
    EXPECT_EQ(r.json()["state"], "ready");
    if (!body.contains("image")) {
      EXPECT_EQ(r.json().value("start", ""), sessions_preloaded() ? "preloaded" : "cold") << r.body;
    }
    return r.json()["id"];
  }
  // Runs one call and waits for its end; the exec view with its result.
  json exec(const std::string& sid, const std::string& code, const json& extra = json::object()) {
    json body = extra;
    body["code"] = code;
    if (!body.contains("wait_s")) body["wait_s"] = 60;
    auto r = http.request("POST", "/v1/sessions/" + sid + "/execs", body.dump(), svc.alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json() : json{{"status", "http " + std::to_string(r.status)}, {"body", r.body}};
  }
  json get(const std::string& target, const TestKey* key = nullptr) {
    auto r = http.request("GET", target, "", (key ? *key : svc.alpha).auth());
    return r.status == 200 ? r.json() : json{{"http_status", r.status}};
  }
  json close(const std::string& sid) {
    auto r = http.request("DELETE", "/v1/sessions/" + sid, "", svc.alpha.auth());
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json() : json();
  }
  // Polls the session until it is closed (or `timeout_ms` passes).
  json wait_closed(const std::string& sid, int timeout_ms) {
    json v;
    for (auto end = Clock::now() + std::chrono::milliseconds(timeout_ms); Clock::now() < end;) {
      v = get("/v1/sessions/" + sid);
      if (v.value("state", "") == "closed") return v;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return v;
  }
  // Hashes of every file under /workspace, computed inside the sandbox.
  std::string workspace_hashes(const std::string& sid) {
    json r = exec(sid,
                  "import hashlib, os\n"
                  "out = []\n"
                  "for d, dirs, files in os.walk('/workspace'):\n"
                  "    for f in files:\n"
                  "        p = os.path.join(d, f)\n"
                  "        out.append(p + ' ' + hashlib.sha256(open(p, 'rb').read()).hexdigest())\n"
                  "print('\\n'.join(sorted(out)))\n");
    EXPECT_EQ(r["status"], "ok") << r.dump();
    return r["result"]["stdout"];
  }

  ServiceProcess svc;
  HttpClient http{svc.port()};
};

TEST_F(SessionApi, AnAnalystWorksInTurnsAndGetsAChartBack) {
  std::string sid = create({{"idle_timeout_s", 120}});
  ASSERT_FALSE(sid.empty());
  auto up = http.request("PUT", "/v1/sessions/" + sid + "/files?path=data/sales.csv",
                         "region,units,price\nnorth,3,2.5\nsouth,5,1.0\neast,2,4.0\n", svc.alpha.auth());
  ASSERT_EQ(up.status, 201) << up.body;
  EXPECT_EQ(up.json()["type"], "csv");

  // Turn 1: load.
  json t1 = exec(sid, "import pandas as pd\ndf = pd.read_csv('data/sales.csv')\nprint('rows', len(df))\ndf.shape");
  ASSERT_EQ(t1["status"], "ok") << t1.dump(2);
  EXPECT_EQ(t1["result"]["stdout"], "rows 3\n");
  EXPECT_EQ(t1["result"]["value"], "(3, 3)");
  // Turn 2: transform what turn 1 loaded; the frame shown last comes back as HTML.
  json t2 = exec(sid, "df['revenue'] = df.units * df.price\ndf.sort_values('revenue')");
  ASSERT_EQ(t2["status"], "ok") << t2.dump(2);
  EXPECT_NE(t2["result"]["html"].get<std::string>().find("<table"), std::string::npos);
  EXPECT_NE(t2["result"]["html"].get<std::string>().find("revenue"), std::string::npos);
  // Turn 3: a chart, returned as PNG without the code saving anything.
  json t3 = exec(sid, "import matplotlib.pyplot as plt\nplt.bar(df.region, df.revenue)\nplt.title('revenue')\n"
                      "df.to_csv('revenue.csv', index=False)");
  ASSERT_EQ(t3["status"], "ok") << t3.dump(2);
  ASSERT_EQ(t3["result"]["figures"].size(), 1u);
  std::string png = airlock::cli::decode_base64(t3["result"]["figures"][0].get<std::string>()).value_or("");
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // An error keeps the state: the traceback names the cell's line.
  json t4 = exec(sid, "undefined_name + 1");
  EXPECT_EQ(t4["status"], "error");
  EXPECT_NE(t4["result"]["error"].get<std::string>().find("NameError"), std::string::npos);
  EXPECT_EQ(exec(sid, "len(df)")["result"]["value"], "3");
  // Shell calls keep their directory and environment.
  EXPECT_EQ(exec(sid, "cd data && export REGION=north", {{"kind", "shell"}})["status"], "ok");
  json sh = exec(sid, "pwd; echo $REGION; ls", {{"kind", "shell"}});
  EXPECT_EQ(sh["result"]["stdout"], "/workspace/data\nnorth\nsales.csv\n");
  EXPECT_EQ(sh["result"]["cwd"], "/workspace/data");

  // The file the code wrote comes out through the output policy.
  auto down = http.request("GET", "/v1/sessions/" + sid + "/files/content?path=revenue.csv", "", svc.alpha.auth());
  ASSERT_EQ(down.status, 200) << down.body;
  EXPECT_EQ(down.body, "region,units,price,revenue\nnorth,3,2.5,7.5\nsouth,5,1.0,5.0\neast,2,4.0,8.0\n");
  EXPECT_EQ(down.headers["x-content-sha256"], airlock::Sha256::of(down.body));
  json listing = get("/v1/sessions/" + sid + "/files");
  std::map<std::string, std::string> kinds;
  for (const auto& e : listing["entries"]) kinds[e["name"]] = e["kind"];
  EXPECT_EQ(kinds["data"], "directory") << listing.dump();
  EXPECT_EQ(kinds["revenue.csv"], "file") << listing.dump();

  // Closing finishes the record: every call with its code, outcome, times and usage.
  json closed = close(sid);
  EXPECT_EQ(closed["state"], "closed");
  EXPECT_EQ(closed["close_reason"], "closed");
  const json& rec = closed["record"];
  ASSERT_EQ(rec["calls"].size(), 7u) << rec.dump(2);
  EXPECT_EQ(rec["kind"], "session");
  EXPECT_EQ(rec["key_id"], svc.alpha.key_id);
  EXPECT_EQ(rec["close_reason"], "closed");
  EXPECT_NE(rec["calls"][0]["code"].get<std::string>().find("read_csv"), std::string::npos);
  EXPECT_EQ(rec["calls"][3]["status"], "error");
  EXPECT_EQ(rec["calls"][5]["kind"], "shell");
  for (const auto& call : rec["calls"]) {
    EXPECT_TRUE(call["started_at"].is_string() && call["finished_at"].is_string());
    EXPECT_TRUE(call["usage"]["cpu_ms"].is_number());
  }
  EXPECT_GT(rec["usage"]["cpu_ms"].get<uint64_t>(), 0u);
  bool upload_noted = false;
  for (const auto& e : rec["events"])
    if (e["event"] == "upload" && e["path"] == "data/sales.csv") upload_noted = true;
  EXPECT_TRUE(upload_noted) << rec["events"].dump();
  // The metrics count it.
  auto metrics = http.request("GET", "/metrics");
  EXPECT_NE(metrics.body.find("airlock_sessions_closed_total{reason=\"closed\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.body.find("airlock_session_calls_total{status=\"error\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.body.find("airlock_sessions_open 0\n"), std::string::npos);
  // A closed session takes no more calls, and says why.
  auto late = http.request("POST", "/v1/sessions/" + sid + "/execs", R"({"code":"1"})", svc.alpha.auth());
  EXPECT_EQ(late.status, 409);
  EXPECT_NE(late.body.find("closed"), std::string::npos);
}

TEST_F(SessionApi, InterruptAndRestartKeepTheSessionAlive) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  ASSERT_EQ(exec(sid, "kept = 41\nopen('note.txt', 'w').write('still here')")["status"], "ok");
  auto r = http.request("POST", "/v1/sessions/" + sid + "/execs", R"({"code":"while True:\n    pass"})",
                        svc.alpha.auth());
  ASSERT_EQ(r.status, 201) << r.body;
  std::string xid = r.json()["id"];
  for (int i = 0; i < 100 && get("/v1/sessions/" + sid + "/execs/" + xid)["state"] != "running"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(http.request("POST", "/v1/sessions/" + sid + "/interrupt", "", svc.alpha.auth()).status, 200);
  json ended = get("/v1/sessions/" + sid + "/execs/" + xid + "?wait_s=30");
  EXPECT_EQ(ended["status"], "interrupted") << ended.dump();
  EXPECT_EQ(exec(sid, "kept + 1")["result"]["value"], "42");

  ASSERT_EQ(http.request("POST", "/v1/sessions/" + sid + "/restart", "", svc.alpha.auth()).status, 200);
  json after = exec(sid, "kept");
  EXPECT_EQ(after["status"], "error");
  EXPECT_NE(after["result"]["error"].get<std::string>().find("NameError"), std::string::npos);
  EXPECT_EQ(exec(sid, "open('note.txt').read()")["result"]["value"], "'still here'");
  close(sid);
}

TEST_F(SessionApi, ACallThatNeverReturnsEndsAtItsTimeoutNotTheSession) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  json r = exec(sid, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
                {{"timeout_s", 1}});
  EXPECT_EQ(r["status"], "timed_out") << r.dump();
  EXPECT_EQ(exec(sid, "6 * 7")["result"]["value"], "42");
  EXPECT_EQ(get("/v1/sessions/" + sid)["state"], "ready");
  // Closing while such a call runs ends it too.
  auto busy = http.request("POST", "/v1/sessions/" + sid + "/execs",
                           R"({"code":"import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"})",
                           svc.alpha.auth());
  ASSERT_EQ(busy.status, 201);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  json closed = close(sid);
  EXPECT_EQ(closed["state"], "closed");
  EXPECT_NE(closed["record"]["calls"].back()["status"], "ok");
}

// The pids of host processes whose command line is exactly `argv`.
std::vector<pid_t> processes_running(const std::vector<std::string>& argv) {
  std::string want;
  for (const auto& a : argv) want += a + '\0';
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  while (dirent* e = ::readdir(d)) {
    pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::string(e->d_name) + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), {});
    if (cmd == want) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

TEST_F(SessionApi, AnIdleSessionClosesAndWhatItLeftRunningDiesWithIt) {
  std::string sid = create({{"idle_timeout_s", 2}});
  ASSERT_FALSE(sid.empty());
  // A process left running between calls: it does not keep the session alive.
  const std::vector<std::string> sleeper = {"sleep", "3011.25"};
  ASSERT_EQ(exec(sid, "import subprocess\np = subprocess.Popen(['sleep', '3011.25'])\np.pid")["status"], "ok");
  for (int i = 0; i < 40 && processes_running(sleeper).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(processes_running(sleeper).size(), 1u);
  json v = wait_closed(sid, 15000);
  ASSERT_EQ(v["state"], "closed") << v.dump();
  EXPECT_EQ(v["close_reason"], "idle_timeout");
  EXPECT_EQ(v["record"]["close_reason"], "idle_timeout");
  EXPECT_TRUE(processes_running(sleeper).empty());
}

TEST_F(SessionApi, ASessionEndsAtItsMaximumLifetimeEvenWhileBusy) {
  std::string sid = create({{"idle_timeout_s", 600}, {"max_lifetime_s", 2}});
  ASSERT_FALSE(sid.empty());
  auto busy = http.request("POST", "/v1/sessions/" + sid + "/execs",
                           json{{"code", "import time\nwhile True:\n    time.sleep(0.1)"}}.dump(), svc.alpha.auth());
  ASSERT_EQ(busy.status, 201);
  json v = wait_closed(sid, 15000);
  ASSERT_EQ(v["state"], "closed") << v.dump();
  EXPECT_EQ(v["close_reason"], "max_lifetime");
  ASSERT_EQ(v["record"]["calls"].size(), 1u);
  EXPECT_NE(v["record"]["calls"][0]["status"], "ok");
}

TEST_F(SessionApi, AReconnectingClientGetsWhatItMissedAndTheResultOnce) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  auto r = http.request("POST", "/v1/sessions/" + sid + "/execs",
                        R"({"code":"import time\nfor i in range(8):\n    print('line', i, flush=True)\n    time.sleep(0.15)\n'done'"})",
                        svc.alpha.auth());
  ASSERT_EQ(r.status, 201) << r.body;
  std::string target = "/v1/sessions/" + sid + "/execs/" + r.json()["id"].get<std::string>() + "/events";

  std::string text, last_id;
  int results = 0;
  {
    auto first = http.open_events(target, svc.alpha.auth());
    ASSERT_EQ(first.status(), 200);
    while (text.find("line 2\n") == std::string::npos) {
      auto e = first.next(10000);
      ASSERT_TRUE(e) << "stream ended early: " << text;
      ASSERT_EQ(e->event, "stdout");
      text += json::parse(e->data)["text"].get<std::string>();
      last_id = e->id;
    }
    first.close();  // the client goes away mid-call
  }
  auto headers = svc.alpha.auth();
  headers["last-event-id"] = last_id;
  HttpClient again(svc.port());
  auto second = again.open_events(target, headers);
  ASSERT_EQ(second.status(), 200);
  json final_view;
  while (auto e = second.next(15000)) {
    if (e->event == "result") {
      ++results;
      EXPECT_EQ(e->id, "done");
      final_view = json::parse(e->data);
    } else {
      text += json::parse(e->data)["text"].get<std::string>();
    }
  }
  std::string expected;
  for (int i = 0; i < 8; ++i) expected += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(text, expected);  // nothing lost, nothing twice
  EXPECT_EQ(results, 1);
  EXPECT_EQ(final_view["status"], "ok");
  EXPECT_EQ(final_view["result"]["value"], "'done'");
  // Resuming after the final event: nothing more, ever.
  headers["last-event-id"] = "done";
  auto third = again.open_events(target, headers);
  EXPECT_EQ(third.status(), 204);
  // After the session closed, the call is still there by id (as stored).
  std::string xid = r.json()["id"];
  close(sid);
  json stored = get("/v1/sessions/" + sid + "/execs/" + xid);
  EXPECT_EQ(stored["status"], "ok");
  EXPECT_EQ(stored["result"]["stdout"], expected);
}

TEST_F(SessionApi, ASnapshotRestoresIntoANewSessionAndAJobWithIdenticalFiles) {
  std::string a = create();
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(exec(a, "import os\nos.makedirs('nested/deep', exist_ok=True)\nos.makedirs('.local/lib', exist_ok=True)\n"
                    "open('nested/deep/blob.bin', 'wb').write(os.urandom(300000))\n"
                    "open('.local/lib/mod.py', 'w').write('X = 1\\n')\n"
                    "open('notes.txt', 'w').write('turn one\\n')\n"
                    "os.symlink('notes.txt', 'link.txt')\n"
                    "import site\n"  // a package installed for the user lands in /workspace (HOME)
                    "os.makedirs(site.getusersitepackages(), exist_ok=True)\n"
                    "open(os.path.join(site.getusersitepackages(), 'probe_pkg.py'), 'w').write('ANSWER = 42\\n')")["status"],
            "ok");
  std::string before = workspace_hashes(a);
  ASSERT_NE(before.find("blob.bin"), std::string::npos);
  ASSERT_NE(before.find(".local/lib/mod.py"), std::string::npos);
  auto snap = http.request("POST", "/v1/sessions/" + a + "/snapshots", "", svc.alpha.auth());
  ASSERT_EQ(snap.status, 201) << snap.body;
  std::string digest = snap.json()["digest"];
  EXPECT_EQ(digest.rfind("sha256:", 0), 0u);
  close(a);

  // Another tenant neither sees nor uses it.
  EXPECT_EQ(get("/v1/snapshots/" + digest, &svc.beta)["http_status"], 404);
  auto stolen = http.request("POST", "/v1/sessions", json{{"snapshot", digest}}.dump(), svc.beta.auth());
  EXPECT_EQ(stolen.status, 400);
  EXPECT_EQ(get("/v1/snapshots")["snapshots"][0]["digest"], digest);

  std::string b = create({{"snapshot", digest}});
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(workspace_hashes(b), before);
  EXPECT_EQ(exec(b, "import os\nos.readlink('link.txt')")["result"]["value"], "'notes.txt'");
  // What was installed into the writable layer came along and imports.
  EXPECT_EQ(exec(b, "import probe_pkg\nprobe_pkg.ANSWER")["result"]["value"], "42");
  json closed = close(b);
  EXPECT_EQ(closed["record"]["snapshot"], digest);

  // A job starts from it too; its record names the digest.
  json job = run_job(http, svc.alpha,
                     {{"snapshot", digest},
                      {"code", "import hashlib\nprint(hashlib.sha256(open('/workspace/nested/deep/blob.bin','rb').read()).hexdigest())"}});
  ASSERT_EQ(job["outcome"], "succeeded") << job.dump(2);
  std::string blob_line;
  for (size_t start = 0, nl; (nl = before.find('\n', start)) != std::string::npos; start = nl + 1)
    if (before.substr(start, nl - start).find("blob.bin") != std::string::npos) blob_line = before.substr(start, nl - start);
  EXPECT_EQ(job["record"]["stdout"]["text"], blob_line.substr(blob_line.rfind(' ') + 1) + "\n");
  EXPECT_EQ(job["record"]["snapshot"]["digest"], digest);

  // Deleted: gone for new sessions.
  EXPECT_EQ(http.request("DELETE", "/v1/snapshots/" + digest, "", svc.alpha.auth()).status, 200);
  EXPECT_EQ(http.request("POST", "/v1/sessions", json{{"snapshot", digest}}.dump(), svc.alpha.auth()).status, 400);
}

TEST_F(SessionApi, SessionsAreApartFromEachOtherAndFromOtherTenants) {
  std::string a = create();
  std::string b = create();
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  ASSERT_EQ(exec(a, "open('/workspace/secret-a.txt', 'w').write('a')\nopen('/tmp/secret-a', 'w').write('a')\n"
                    "import subprocess\nsubprocess.Popen(['sleep', '3012.5'])\n1")["status"],
            "ok");
  json look = exec(b, "import os\n"
                      "print(sorted(os.listdir('/workspace')), sorted(os.listdir('/tmp')))\n"
                      "print('SLEEPERS', sorted(p for p in os.listdir('/proc') if p.isdigit() and "
                      "open('/proc/%s/cmdline' % p).read().startswith('sleep')))");
  ASSERT_EQ(look["status"], "ok") << look.dump();
  EXPECT_EQ(look["result"]["stdout"].get<std::string>().find("secret-a"), std::string::npos) << look.dump();
  EXPECT_NE(look["result"]["stdout"].get<std::string>().find("SLEEPERS []\n"), std::string::npos) << look.dump();
  // Another tenant gets 404 for everything of the session.
  for (const std::string& target : {"/v1/sessions/" + a, "/v1/sessions/" + a + "/files",
                                    "/v1/sessions/" + a + "/execs"})
    EXPECT_EQ(get(target, &svc.beta)["http_status"], 404) << target;
  EXPECT_EQ(http.request("POST", "/v1/sessions/" + a + "/execs", R"({"code":"1"})", svc.beta.auth()).status, 404);
  EXPECT_EQ(http.request("DELETE", "/v1/sessions/" + a, "", svc.beta.auth()).status, 404);
  EXPECT_EQ(get("/v1/sessions", &svc.beta)["sessions"].size(), 0u);
  // A read-only key can look but not run.
  EXPECT_EQ(http.request("POST", "/v1/sessions/" + a + "/execs", R"({"code":"1"})", svc.alpha_reader.auth()).status,
            403);
  close(a);
  close(b);
  EXPECT_TRUE(processes_running({"sleep", "3012.5"}).empty());
}

TEST_F(SessionApi, ALongSessionKeepsEveryCallByIdAndInItsRecord) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  std::vector<std::string> ids;
  for (int i = 0; i < 70; ++i) {  // more than the service keeps in memory
    json r = exec(sid, "n = " + std::to_string(i) + "\nprint(n)");
    ASSERT_EQ(r["status"], "ok") << r.dump();
    ids.push_back(r["id"]);
  }
  json first = get("/v1/sessions/" + sid + "/execs/" + ids[0]);
  EXPECT_EQ(first["status"], "ok") << first.dump();
  EXPECT_EQ(first["result"]["stdout"], "0\n");
  json listed = get("/v1/sessions/" + sid + "/execs");
  ASSERT_EQ(listed["execs"].size(), 70u);
  EXPECT_EQ(listed["execs"][0]["id"], ids[0]);
  EXPECT_EQ(listed["execs"][69]["id"], ids[69]);
  json closed = close(sid);
  ASSERT_EQ(closed["record"]["calls"].size(), 70u);
  EXPECT_EQ(closed["record"]["calls"][0]["code"], "n = 0\nprint(n)");
  EXPECT_EQ(closed["record"]["usage"]["calls"], 70);
}

TEST_F(SessionApi, BadRequestsAreRefusedClearly) {
  auto a = svc.alpha.auth();
  struct Case {
    std::string method, target, body;
    int status;
    std::string says;
  };
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  std::string s = "/v1/sessions/" + sid;
  std::vector<Case> cases = {
      {"POST", "/v1/sessions", "{not json", 400, "not valid JSON"},
      {"POST", "/v1/sessions", R"({"idle_timeout_s": 0})", 400, "idle_timeout_s"},
      {"POST", "/v1/sessions", R"({"snapshot": "nope"})", 400, "snapshot"},
      {"POST", "/v1/sessions", R"({"inputs": ["nope"]})", 400, "no file"},
      {"POST", s + "/execs", R"({"code": 5})", 400, "code"},
      {"POST", s + "/execs", R"({"code": "1", "kind": "perl"})", 400, "kind"},
      {"PUT", s + "/files?path=../../etc/passwd", "x", 400, "bad_path"},
      {"PUT", s + "/files?path=tool.bin", std::string("\x7f" "ELF\x02\x01\x01", 7), 400, "type_not_allowed"},
      {"GET", s + "/files/content?path=nope.txt", "", 404, "not_found"},
      {"GET", s + "/files?path=..", "", 400, "bad_path"},
      {"GET", "/v1/sessions/snope", "", 404, "not found"},
      {"GET", s + "/execs/xnope", "", 404, "not found"},
  };
  for (const auto& c : cases) {
    auto r = http.request(c.method, c.target, c.body, a);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.target << ": " << r.body;
    EXPECT_NE(r.body.find(c.says), std::string::npos) << c.target << ": " << r.body;
  }
  // A planted symlink is not followed out of the workspace.
  ASSERT_EQ(exec(sid, "import os\nos.symlink('/etc/shadow', 'shadow.txt')\nos.symlink('/etc', 'etc')")["status"], "ok");
  auto through = http.request("GET", s + "/files/content?path=shadow.txt", "", a);
  EXPECT_EQ(through.status, 400) << through.body;
  auto into = http.request("PUT", s + "/files?path=etc/evil.txt", "x\n", a);
  EXPECT_EQ(into.status, 400) << into.body;
  close(sid);
}

class SessionLimits : public SessionApi {
 protected:
  SessionLimits() : SessionApi(config_args()) {}
  static std::vector<std::string> config_args() {
    static std::string path = [] {
      char tmpl[] = "/tmp/airlock-session-config-XXXXXX";
      int fd = ::mkstemp(tmpl);
      std::string text = "max_sessions_per_tenant = 2\nsnapshot_ttl_s = 2\nsnapshot_expiry_interval_s = 1\n";
      EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
      ::close(fd);
      return std::string(tmpl);
    }();
    return {"--config", path};
  }
  static void TearDownTestSuite() { ::unlink(config_args()[1].c_str()); }
};

// Rows of the records table whose JSON contains both needles, read behind the service's back.
int records_containing(const std::string& db_path, const std::string& needle, const std::string& also) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT count(*) FROM records WHERE instr(json, ?1) > 0 AND instr(json, ?2) > 0", -1, &st, nullptr);
  sqlite3_bind_text(st, 1, needle.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, also.c_str(), -1, SQLITE_TRANSIENT);
  int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

TEST_F(SessionLimits, SnapshotsExpireAndLeaveTheDisk) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  ASSERT_EQ(exec(sid, "open('unique.txt', 'w').write('expiring content 8c1f\\n')")["status"], "ok");
  auto snap = http.request("POST", "/v1/sessions/" + sid + "/snapshots", "", svc.alpha.auth());
  ASSERT_EQ(snap.status, 201) << snap.body;
  std::string digest = snap.json()["digest"];
  std::string content = airlock::Sha256::of("expiring content 8c1f\n");
  std::string stored = svc.data_dir() + "/artifacts/sha256/" + content.substr(0, 2) + "/" + content;
  EXPECT_EQ(::access(stored.c_str(), F_OK), 0);
  close(sid);
  json v;
  for (int i = 0; i < 100; ++i) {
    v = get("/v1/snapshots/" + digest);
    if (v.value("http_status", 200) == 404) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(v["http_status"], 404) << v.dump();
  EXPECT_NE(::access(stored.c_str(), F_OK), 0);  // removed from disk
  // ... and its removal is recorded in the tenant's chain, with the reason.
  EXPECT_EQ(records_containing(svc.data_dir() + "/airlock.db", digest.substr(7), "snapshot_removed"), 1);
  EXPECT_EQ(records_containing(svc.data_dir() + "/airlock.db", digest.substr(7), "\"expired\""), 1);
}

TEST_F(SessionApi, UploadsTogetherStayWithinTheInputPolicy) {
  // The default input policy: 32 files, 256 MiB together; a path uploaded again counts once.
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  for (int i = 0; i < 32; ++i) {
    auto r = http.request("PUT", "/v1/sessions/" + sid + "/files?path=in/f" + std::to_string(i) + ".txt", "x\n",
                          svc.alpha.auth());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  auto again = http.request("PUT", "/v1/sessions/" + sid + "/files?path=in/f0.txt", "y\n", svc.alpha.auth());
  EXPECT_EQ(again.status, 201) << again.body;
  auto over = http.request("PUT", "/v1/sessions/" + sid + "/files?path=in/f32.txt", "z\n", svc.alpha.auth());
  EXPECT_EQ(over.status, 413) << over.body;
  EXPECT_NE(over.body.find("input policy"), std::string::npos) << over.body;
  EXPECT_EQ(get("/v1/sessions/" + sid + "/files?path=in")["entries"].size(), 32u);
  // Deleting what was uploaded gives the room back.
  EXPECT_EQ(http.request("DELETE", "/v1/sessions/" + sid + "/files?path=in", "", svc.alpha.auth()).status, 200);
  auto after = http.request("PUT", "/v1/sessions/" + sid + "/files?path=in/f32.txt", "z\n", svc.alpha.auth());
  EXPECT_EQ(after.status, 201) << after.body;
  close(sid);
}

TEST_F(SessionLimits, ATenantOpensOnlyItsShare) {
  std::string a = create(), b = create();
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  auto third = http.request("POST", "/v1/sessions", "{}", svc.alpha.auth());
  EXPECT_EQ(third.status, 429) << third.body;
  EXPECT_NE(third.body.find("too_many_sessions"), std::string::npos);
  std::string other = create(json::object(), &svc.beta);  // another tenant's share is its own
  EXPECT_FALSE(other.empty());
  close(a);
  close(b);
  auto r = http.request("DELETE", "/v1/sessions/" + other, "", svc.beta.auth());
  EXPECT_EQ(r.status, 200);
}

TEST_F(SessionApi, AStoppingServiceClosesItsSessionsAndAnswersItsWaiters) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  ASSERT_EQ(exec(sid, "import subprocess\nsubprocess.Popen(['sleep', '3014.5'])\n1")["status"], "ok");
  // A client waits for a call that would run for a minute.
  int waited_status = -1;
  std::thread waiter([&] {
    HttpClient own(svc.port());
    auto r = own.request("POST", "/v1/sessions/" + sid + "/execs",
                         json{{"code", "import time\ntime.sleep(60)"}, {"wait_s", 120}}.dump(), svc.alpha.auth());
    waited_status = r.status;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(svc.stop(), 0);  // SIGTERM: a clean exit, not a hang
  waiter.join();
  EXPECT_NE(waited_status, -1);  // the waiting client got an answer or a closed connection
  EXPECT_TRUE(processes_running({"sleep", "3014.5"}).empty());
  svc.start();
  HttpClient after(svc.port());
  auto r = after.request("GET", "/v1/sessions/" + sid, "", svc.alpha.auth());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["close_reason"], "service_stopped");
  ASSERT_EQ(r.json()["record"]["calls"].size(), 2u) << r.body;
  EXPECT_NE(r.json()["record"]["calls"][1]["status"], "ok");
}

TEST_F(SessionApi, ARestartedServiceClosesTheSessionsItLost) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  ASSERT_EQ(exec(sid, "import subprocess\nsubprocess.Popen(['sleep', '3013.5'])\n1")["status"], "ok");
  svc.kill_hard();
  svc.start();
  HttpClient after(svc.port());
  auto r = after.request("GET", "/v1/sessions/" + sid, "", svc.alpha.auth());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["state"], "closed");
  EXPECT_EQ(r.json()["close_reason"], "service_restarted");
  for (int i = 0; i < 50 && !processes_running({"sleep", "3013.5"}).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(processes_running({"sleep", "3013.5"}).empty());
}

}  // namespace
