// What one client can make `airlock serve` hold or do to everyone else:
// documents nested deep enough to overflow a stack, idle and slow
// connections, descriptor exhaustion. Every case attacks a real service on
// loopback and then checks that other clients are still served.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "service_fixture.h"
#include "sys/descriptors.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

std::string nested_arrays(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string nested_schema(size_t depth) {
  std::string s;
  for (size_t i = 0; i < depth; ++i) s += R"({"not":)";
  s += "true";
  return s + std::string(depth, '}');
}

bool alive(pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) == 0; }

// The first JSON line of the service's log with this "event" (null if none).
json log_event(const std::string& log, const std::string& event) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    auto j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == event) return j;
  }
  return nullptr;
}

}  // namespace

TEST(ServiceLimits, ADeeplyNestedRequestIsRefusedAndTheServiceStaysUp) {
  ServiceProcess svc;
  HttpClient http(svc.port());
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"checks", R"({"command":["true"],"checks":)" + nested_arrays(300'000) + "}"},
      {"schema", R"({"command":["true"],"checks":[{"kind":"json_schema","output":"r.json","schema":)" +
                     nested_schema(100'000) + "}]}"},
      {"unbalanced", std::string(400'000, '[')},
  };
  for (const auto& [what, body] : bodies) {
    auto r = http.request("POST", "/v1/jobs", body, svc.alpha.auth());
    EXPECT_EQ(r.status, 400) << what << ": " << r.body.substr(0, 300);
    EXPECT_NE(r.body.find("bad_json"), std::string::npos) << what << ": " << r.body.substr(0, 300);
    EXPECT_NE(r.body.find("nested deeper than 128 levels"), std::string::npos) << what << ": " << r.body.substr(0, 300);
    ASSERT_TRUE(alive(svc.pid())) << what << " killed the service:\n" << svc.log().substr(0, 2000);
  }
  // The same nesting inside a session request is refused the same way.
  auto s = http.request("POST", "/v1/sessions", R"({"x":)" + nested_arrays(200'000) + "}", svc.alpha.auth());
  EXPECT_EQ(s.status, 400) << s.body.substr(0, 300);
  EXPECT_NE(s.body.find("nested deeper"), std::string::npos) << s.body.substr(0, 300);
  ASSERT_TRUE(alive(svc.pid()));
  // A request at a reasonable depth still works, for this tenant and the next.
  json ok_schema = json::parse(nested_schema(20));
  json job = run_job(http, svc.beta,
                     {{"command", {"sh", "-c", "echo '{}' > /output/r.json"}},
                      {"checks", {{{"kind", "json_schema"}, {"output", "r.json"}, {"schema", ok_schema}}}}});
  EXPECT_EQ(job["state"], "finished") << job.dump();
  EXPECT_EQ(job["outcome"], "succeeded") << job.dump();  // twenty nots of true: true
  json plain = run_job(http, svc.alpha, {{"command", {"true"}}});
  EXPECT_EQ(plain["outcome"], "succeeded") << plain.dump();
}

namespace {

// `count` loopback connections that send nothing.
std::vector<std::unique_ptr<RawConnection>> idle_connections(uint16_t port, size_t count) {
  std::vector<std::unique_ptr<RawConnection>> out;
  for (size_t i = 0; i < count; ++i) out.push_back(std::make_unique<RawConnection>(port));
  return out;
}

// Runs a job with wait_s on a connection of its own, in the background: an
// authenticated request that is inside the server while others flood it.
struct JobInFlight {
  JobInFlight(uint16_t port, const TestKey& key, json body)
      : thread([this, port, key, body] {
          HttpClient c(port, 60000);
          try {
            result = run_job(c, key, body, 30);
          } catch (const std::exception& e) {
            result = {{"error", e.what()}};
          }
        }) {}
  ~JobInFlight() {
    if (thread.joinable()) thread.join();
  }
  json get() {
    thread.join();
    return result;
  }
  json result;
  std::thread thread;
};

}  // namespace

TEST(ServiceLimits, IdleConnectionsAreEvictedOldestFirstAndAuthenticatedWorkGoesOn) {
  constexpr size_t kCap = 32, kIdle = 240;
  ServiceProcess svc({"--max-connections", std::to_string(kCap)});
  // Authenticated work already inside the server: never evicted.
  JobInFlight long_job(svc.port(), svc.beta, {{"command", {"sh", "-c", "sleep 2; echo held"}}});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto idle = idle_connections(svc.port(), kIdle);
  // A partial header (slowloris) counts as idle as well.
  RawConnection partial(svc.port());
  ASSERT_TRUE(partial.send("GET /v1/jobs HTTP/1.1\r\nHost: x\r\n"));

  HttpClient http(svc.port());
  auto r = http.request("GET", "/v1/jobs", "", svc.alpha.auth());
  EXPECT_EQ(r.status, 200) << r.body;
  json job = run_job(http, svc.alpha, {{"command", {"echo", "through"}}});
  EXPECT_EQ(job["outcome"], "succeeded") << job.dump();
  json held = long_job.get();
  EXPECT_EQ(held["outcome"], "succeeded") << held.dump();
  EXPECT_EQ(held["record"]["stdout"]["text"], "held\n") << held.dump();

  // The server closed the oldest idle sockets to make room, not the newest.
  size_t closed_oldest = 0;
  for (size_t i = 0; i < kIdle - 2 * kCap; ++i) closed_oldest += idle[i]->closed_within(5000) ? 1 : 0;
  EXPECT_EQ(closed_oldest, kIdle - 2 * kCap);
  EXPECT_FALSE(idle.back()->closed_within(0)) << "the newest idle connection was evicted before older ones";
  EXPECT_EQ(log_event(svc.log(), "descriptors")["max_connections"], kCap);
  idle.clear();
}

TEST(ServiceLimits, AnUnauthenticatedBodyIsRefusedBeforeItIsRead) {
  ServiceProcess svc;
  // A slow body: a header announcing 1 MB, then nothing. Without a key the
  // answer comes at once, the body is never waited for.
  RawConnection slow(svc.port());
  ASSERT_TRUE(slow.send("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n{"));
  std::string answer = slow.read_until("\r\n\r\n", 5000);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 401")) << answer;
  EXPECT_TRUE(slow.closed_within(5000));
  RawConnection wrong(svc.port());
  ASSERT_TRUE(wrong.send("PUT /v1/sessions/s1/files?path=a HTTP/1.1\r\nHost: x\r\n"
                         "Authorization: Bearer alk_wrong\r\nContent-Length: 1000000\r\n\r\n"));
  answer = wrong.read_until("unknown", 5000);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 401")) << answer;
  EXPECT_NE(answer.find("unknown or revoked API key"), std::string::npos) << answer;
}

TEST(ServiceLimits, ALowDescriptorLimitIsSharedSoAnotherTenantsJobStillRuns) {
  // The common default, soft 1024, with a hard limit of 2048. (Below a
  // hard limit of 1024 no job could run at all: the sandbox sets its own
  // nofile to 1024.)
  ASSERT_TRUE(airlock::sys::raise_descriptor_limit());  // this test's own sockets
  ServiceProcess svc({}, {"/usr/bin/prlimit", "--nofile=1024:2048", "--"});
  json line = log_event(svc.log(), "descriptors");
  ASSERT_TRUE(line.is_object()) << svc.log();
  EXPECT_EQ(line["nofile_soft_was"], 1024);
  EXPECT_EQ(line["nofile_soft"], 2048);
  EXPECT_LT(line["max_connections"].get<int>(), 1024) << line.dump();
  // One client floods the service with more connections than it had descriptors.
  auto flood = idle_connections(svc.port(), 1500);
  HttpClient http(svc.port());
  std::vector<json> jobs;
  for (int i = 0; i < 3; ++i) {
    jobs.push_back(run_job(http, svc.beta, {{"command", {"sh", "-c", "echo fine"}}}));
  }
  for (const auto& job : jobs) {
    EXPECT_EQ(job["outcome"], "succeeded") << job.dump();
    EXPECT_EQ(job["record"]["stdout"]["text"], "fine\n") << job.dump();
  }
  EXPECT_EQ(svc.log().find("Too many open files"), std::string::npos) << svc.log().substr(0, 3000);
  flood.clear();
}

namespace {

// slowhttptest (Debian) against the service for `seconds`, in the
// background; killed by its pid if it outlives that.
class SlowHttpTest {
 public:
  SlowHttpTest(std::vector<std::string> args, const std::string& log, int seconds) : seconds_(seconds) {
    args.insert(args.begin(), "/usr/bin/slowhttptest");
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~SlowHttpTest() { (void)wait(); }
  // Exit status; after seconds + 10 it is killed.
  int wait() {
    if (pid_ <= 0) return -1;
    int status = 0;
    for (int i = 0; i < (seconds_ + 10) * 10; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return 128 + SIGKILL;
  }
  bool running() const { return pid_ > 0 && ::kill(pid_, 0) == 0; }

 private:
  pid_t pid_ = -1;
  int seconds_;
};

}  // namespace

TEST(ServiceLimits, SlowHttpTestSlowlorisAndSlowBodyDoNotStopOtherClients) {
  if (::access("/usr/bin/slowhttptest", X_OK) != 0) GTEST_SKIP() << "slowhttptest is not installed (scripts/setup.sh)";
  constexpr int kSeconds = 12;
  ServiceProcess svc({"--max-connections", "256"});
  TempDir dir;
  std::string url = "http://127.0.0.1:" + std::to_string(svc.port()) + "/v1/jobs";
  struct Mode {
    const char* name;
    std::vector<std::string> args;
  };
  // Far more connections than the cap, opened fast, each trickling a header
  // line or a few body bytes every 2 s.
  const std::vector<Mode> modes = {
      {"slowloris", {"-H", "-c", "2000", "-r", "500", "-i", "2", "-x", "16"}},
      {"slow body", {"-B", "-c", "2000", "-r", "500", "-i", "2", "-s", "100000", "-x", "16"}},
  };
  for (const auto& mode : modes) {
    std::vector<std::string> args = mode.args;
    args.insert(args.end(), {"-l", std::to_string(kSeconds), "-p", "3", "-u", url});
    SlowHttpTest attack(args, dir.sub(std::string(mode.name) + ".log"), kSeconds);
    std::this_thread::sleep_for(std::chrono::seconds(2));  // let the attack reach its connection count
    int ok = 0, failed = 0;
    std::string last_failure;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(kSeconds - 4);
    while (std::chrono::steady_clock::now() < until) {
      HttpClient http(svc.port(), 10000);
      try {
        auto r = http.request("GET", "/v1/jobs?limit=1", "", svc.alpha.auth());
        if (r.status == 200) {
          ++ok;
        } else {
          ++failed;
          last_failure = std::to_string(r.status) + " " + r.body;
        }
      } catch (const std::exception& e) {
        ++failed;
        last_failure = e.what();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_TRUE(attack.running()) << mode.name << ": the attack ended early:\n"
                                  << read_text(dir.sub(std::string(mode.name) + ".log"));
    EXPECT_GT(ok, 10) << mode.name;
    EXPECT_EQ(failed, 0) << mode.name << ": " << last_failure;
    // A job of another tenant still runs through while the attack goes on.
    HttpClient http(svc.port(), 60000);
    json job = run_job(http, svc.beta, {{"command", {"echo", mode.name}}});
    EXPECT_EQ(job["outcome"], "succeeded") << mode.name << ": " << job.dump();
    attack.wait();
    ASSERT_TRUE(alive(svc.pid()));
  }
}
