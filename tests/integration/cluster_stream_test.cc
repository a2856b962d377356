// Large answers, uploads and live output through an API node
// (cluster/forward.h): two real `airlock serve` processes on loopback (the
// roles' ClusterNodes), a session on the worker. The API node passes bodies
// on as they come and holds a fixed buffer per forwarded request, so its
// memory does not grow with the size of the file or the number of clients
// that do not read: measured from /proc/PID/status of the API node.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/sha256.h"
#include "cluster_nodes.h"
#include "support/http_client.h"

namespace airlock::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A field of /proc/PID/status in KiB ("VmRSS", "VmHWM"); -1 if absent.
long status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(field + ":")) return std::stol(line.substr(field.size() + 1));
  return -1;
}

// A CSV of about `bytes` bytes (the session's input and output policies admit csv).
std::string big_csv(size_t bytes) {
  std::string out = "n,square\n";
  out.reserve(bytes + 64);
  for (uint64_t i = 0; out.size() < bytes; ++i)
    out += std::to_string(i) + "," + std::to_string(i * i) + "\n";
  return out;
}

Response create_session(HttpClient& http, const TestKey& key) {
  Response r;
  for (auto end = Clock::now() + std::chrono::seconds(20); Clock::now() < end;) {
    r = http.request("POST", "/v1/sessions", "{}", key.auth());
    if (r.status != 503) return r;  // no worker registered yet
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return r;
}

class ClusterStream : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster.add("worker", "w1");
    cluster.add("api", "a1");
    api_port = cluster.node("a1").port;
    api_pid = cluster.node("a1").pid;
    HttpClient http(api_port, 60'000);
    auto created = create_session(http, cluster.alpha);
    ASSERT_EQ(created.status, 201) << created.body << "\n" << cluster.log("a1");
    sid = created.json()["id"];
  }

  std::map<std::string, std::string> upload_headers() {
    auto h = cluster.alpha.auth();
    h["Content-Type"] = "application/octet-stream";
    return h;
  }

  ClusterNodes cluster{ClusterOptions{}};
  uint16_t api_port = 0;
  pid_t api_pid = -1;
  std::string sid;
};

// The reported case: six downloads of a 48 MB file through the API node that
// nobody reads took its RSS from 9 to 284 MB. Now each holds a fixed buffer.
TEST_F(ClusterStream, UnreadDownloadsAndALargeUploadHoldAFixedBufferOnTheApiNode) {
  constexpr size_t kFile = 48u << 20;
  constexpr int kDownloads = 6;
  constexpr long kBoundKib = 32 << 10;  // well below one file, let alone six
  const std::string csv = big_csv(kFile);
  const std::string sha = Sha256::of(csv);

  // The upload goes on to the worker as it arrives: the API node's peak
  // memory does not grow by the file's size.
  long hwm_before = status_kib(api_pid, "VmHWM");
  HttpClient http(api_port, 120'000);
  auto up =
      http.request("PUT", "/v1/sessions/" + sid + "/files?path=big.csv", csv, upload_headers());
  ASSERT_EQ(up.status, 201) << up.body << up.error << "\n" << cluster.log("a1");
  EXPECT_EQ(up.json()["sha256"], sha);
  EXPECT_EQ(up.json()["size"], csv.size());
  long hwm_after = status_kib(api_pid, "VmHWM");
  ASSERT_GT(hwm_before, 0);
  EXPECT_LT(hwm_after - hwm_before, kBoundKib)
      << "API node peak " << hwm_before << " -> " << hwm_after << " KiB";
  std::printf("[ measured ] upload of %zu MiB: API node VmHWM %ld -> %ld KiB\n", kFile >> 20,
              hwm_before, hwm_after);

  // Six downloads started, their headers read, their bodies not.
  long rss_before = status_kib(api_pid, "VmRSS");
  std::vector<std::unique_ptr<HttpClient>> clients;
  std::vector<api::ResponseReader> downloads;
  for (int i = 0; i < kDownloads; ++i) {
    clients.push_back(std::make_unique<HttpClient>(api_port, 60'000));
    downloads.push_back(clients.back()->open(
        "GET", "/v1/sessions/" + sid + "/files/content?path=big.csv", cluster.alpha.auth()));
    ASSERT_EQ(downloads.back().status(), 200) << downloads.back().error() << "\n"
                                              << cluster.log("a1");
    EXPECT_EQ(downloads.back().headers().at("x-content-sha256"), sha);
    EXPECT_EQ(downloads.back().content_length(), csv.size());
  }
  // Long enough for the API node to read all it would (it reads 48 MB from
  // loopback in well under a second); the largest of a few samples.
  long rss_peak = 0;
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    rss_peak = std::max(rss_peak, status_kib(api_pid, "VmRSS"));
  }
  ASSERT_GT(rss_before, 0);
  EXPECT_LT(rss_peak - rss_before, kBoundKib) << "API node RSS " << rss_before << " -> " << rss_peak
                                              << " KiB with " << kDownloads << " unread downloads";
  std::printf("[ measured ] %d unread downloads of %zu MiB: API node VmRSS %ld -> %ld KiB\n",
              kDownloads, kFile >> 20, rss_before, rss_peak);

  // Then each is read to its end, whole and right.
  std::vector<char> buf(256 << 10);
  for (auto& d : downloads) {
    Sha256 got;
    size_t total = 0;
    while (true) {
      auto n = d.read_some(buf.data(), buf.size(), 30'000);
      ASSERT_TRUE(n.has_value()) << n.error().message() << " after " << total << " bytes";
      if (*n == 0) break;
      got.update(std::string_view(buf.data(), *n));
      total += *n;
    }
    EXPECT_EQ(total, csv.size());
    EXPECT_EQ(got.hex_digest(), sha);
  }
}

// A call's output reaches the client through the API node while the call
// runs: the call prints, then waits for a file that the test uploads only
// after it saw the first line, so a stream held back to the call's end
// would never show it.
TEST_F(ClusterStream, ACallsOutputIsForwardedLiveBeforeTheCallEnds) {
  HttpClient http(api_port, 60'000);
  std::string code =
      "import os, time\nprint('first', flush=True)\n"
      "while not os.path.exists('/workspace/go'):\n    time.sleep(0.05)\nprint('second', "
      "flush=True)";
  auto call = http.request("POST", "/v1/sessions/" + sid + "/execs", json{{"code", code}}.dump(),
                           cluster.alpha.auth());
  ASSERT_EQ(call.status, 201) << call.body;
  std::string xid = call.json()["id"];
  HttpClient events(api_port, 60'000);
  auto stream =
      events.open_events("/v1/sessions/" + sid + "/execs/" + xid + "/events", cluster.alpha.auth());
  ASSERT_EQ(stream.status(), 200) << stream.error();
  // The first line (print may write it in more than one piece).
  std::string text;
  while (text.find("first\n") == std::string::npos) {
    auto e = stream.next(20'000);
    ASSERT_TRUE(e.has_value()) << text << "\n" << cluster.log("a1");
    ASSERT_NE(e->event, "result") << e->data;
    text += json::parse(e->data)["text"].get<std::string>();
  }
  EXPECT_EQ(text, "first\n");
  // Still running: it waits for the file.
  auto running =
      http.request("GET", "/v1/sessions/" + sid + "/execs/" + xid, "", cluster.alpha.auth());
  ASSERT_EQ(running.status, 200) << running.body;
  EXPECT_NE(running.json()["status"], "ok") << running.body;
  auto go = http.request("PUT", "/v1/sessions/" + sid + "/files?path=go", "go\n", upload_headers());
  ASSERT_EQ(go.status, 201) << go.body;
  bool result = false;
  while (auto e = stream.next(20'000)) {
    if (e->event == "result") {
      result = true;
      EXPECT_EQ(json::parse(e->data)["status"], "ok") << e->data;
    } else {
      text += json::parse(e->data)["text"].get<std::string>();
    }
  }
  EXPECT_EQ(text, "first\nsecond\n");
  EXPECT_TRUE(result);
}

}  // namespace
}  // namespace airlock::testing
