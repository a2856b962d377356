#include "selftest/runner.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <map>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/unique_fd.h"
#include "http/client.h"
#include "jobs/record.h"
#include "selftest/judge.h"
#include "selftest/probes.h"

namespace airlock::selftest {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::string random_hex(size_t n) {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += hex[rd() & 0xf];
  return s;
}

// A TCP listener on the host's loopback and an abstract unix socket, each
// counting the connections it accepted (and answering HTTP 200 "ok").
class Listener {
 public:
  explicit Listener(uint16_t port) : abstract_("airlock-selftest-" + random_hex(16)) {
    tcp_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    int one = 1;
    ::setsockopt(tcp_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::bind(tcp_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(tcp_.get(), 16) == 0) {
      socklen_t len = sizeof a;
      ::getsockname(tcp_.get(), reinterpret_cast<sockaddr*>(&a), &len);
      port_ = ntohs(a.sin_port);
    }
    unix_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    sockaddr_un u{};
    u.sun_family = AF_UNIX;
    std::memcpy(u.sun_path + 1, abstract_.data(), abstract_.size());
    socklen_t ulen = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + abstract_.size());
    if (::bind(unix_.get(), reinterpret_cast<sockaddr*>(&u), ulen) != 0 || ::listen(unix_.get(), 16) != 0) unix_ = UniqueFd();
    thread_ = std::thread([this] { loop(); });
  }
  ~Listener() {
    stop_ = true;
    thread_.join();
  }
  uint16_t port() const { return port_; }
  const std::string& abstract_name() const { return abstract_; }
  int accepted() const { return accepted_; }
  bool ready() const { return port_ != 0 && unix_.get() >= 0; }

 private:
  void loop() {
    while (!stop_) {
      pollfd fds[2] = {{tcp_.get(), POLLIN, 0}, {unix_.get(), POLLIN, 0}};
      if (::poll(fds, 2, 100) <= 0) continue;
      for (auto& p : fds) {
        if (!(p.revents & POLLIN)) continue;
        UniqueFd c(::accept4(p.fd, nullptr, nullptr, SOCK_CLOEXEC));
        if (c.get() < 0) continue;
        ++accepted_;
        static const char kOk[] = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        (void)!::write(c.get(), kOk, sizeof kOk - 1);
      }
    }
  }
  std::string abstract_;
  UniqueFd tcp_, unix_;
  uint16_t port_ = 0;
  std::atomic<int> accepted_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class Run {
 public:
  explicit Run(const Target& t) : t_(t), http_(t.host, t.port, 60'000) {}

  Report go() {
    auto start = Clock::now();
    report_.target = t_.description;
    report_.started_at = jobs::now_rfc3339();
    if (reachable()) {
      valid_and_rejected();
      files();
      network();
      secrets();
      cancellation();
      other_tenant();
      cleanup();
    }
    report_.duration_ms =
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    return report_;
  }

 private:
  std::map<std::string, std::string> auth(const std::string& key) { return {{"Authorization", "Bearer " + key}}; }

  api::Response call(const std::string& method, const std::string& target, const std::string& body = "",
                     const std::string& key = "") {
    return http_.request(method, target, body, auth(key.empty() ? t_.key : key));
  }

  void add(Item it) { report_.items.push_back(std::move(it)); }

  Item item(const std::string& name, const std::string& attempted, const Judgement& j, std::vector<std::string> ev) {
    return Item{name, attempted, j.answer, j.held ? Verdict::kHeld : Verdict::kBroken, j.why, std::move(ev)};
  }

  bool reachable() {
    auto r = http_.request("GET", "/healthz");
    auto u = call("GET", "/v1/jobs?limit=1");
    if (r.status == 200 && u.status == 200) return true;
    add({"service reachable", "GET /healthz and GET /v1/jobs with the key",
         "HTTP " + std::to_string(r.status) + " / " + std::to_string(u.status) + (r.error.empty() ? "" : " " + r.error),
         Verdict::kBroken, "the service did not answer, or the key was refused: nothing else was tried", {}});
    return false;
  }

  // Submits a job (waiting up to 30 s for it) and returns the HTTP answer and its view.
  std::pair<api::Response, json> job(const json& body) {
    json b = body;
    if (!b.contains("wait_s")) b["wait_s"] = 30;
    auto r = call("POST", "/v1/jobs", b.dump());
    json view = r.status / 100 == 2 ? json::parse(r.body, nullptr, false) : json();
    if (view.is_object() && view.contains("id")) {
      ids_.push_back(view["id"].get<std::string>());
      if (view.value("state", "") != "finished") view = wait_finished(ids_.back(), 30);
      if (view.contains("record")) views_.push_back(view);
    }
    return {r, view};
  }

  json wait_finished(const std::string& id, int seconds) {
    auto until = Clock::now() + std::chrono::seconds(seconds);
    json v;
    while (Clock::now() < until) {
      auto r = call("GET", "/v1/jobs/" + id);
      v = json::parse(r.body, nullptr, false);
      if (v.is_object() && v.value("state", "") == "finished") return v;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return v;
  }

  static std::vector<std::string> evidence(const json& view) {
    std::vector<std::string> ev;
    if (view.is_object() && view.contains("id")) ev.push_back("job " + view["id"].get<std::string>());
    if (view.is_object() && view.contains("record") && view["record"].is_object() && view["record"].contains("id") &&
        view["record"]["id"].is_string())
      ev.push_back("record " + view["record"]["id"].get<std::string>());
    return ev;
  }

  void valid_and_rejected() {
    std::string csv = "region,amount\nnorth,10.50\nsouth,20.25\nnorth,4.25\neast,7\n";
    auto up = call("POST", "/v1/files?name=sales.csv", csv);
    json file = json::parse(up.body, nullptr, false);
    if (up.status != 201 || !file.is_object() || !file.contains("id")) {
      add({"valid analyst job", "upload sales.csv", "HTTP " + std::to_string(up.status), Verdict::kBroken,
           "the upload failed: " + up.body.substr(0, 200), {}});
      return;
    }
    file_id_ = file["id"].get<std::string>();
    json checks = json::array(
        {{{"kind", "csv_column_sum"}, {"name", "totals add up"}, {"output", "summary.csv"}, {"column", "total"},
          {"inputs", json::array({{{"file", "sales.csv"}, {"column", "amount"}}})}, {"tolerance", 0.01}},
         {{"kind", "csv_row_count"}, {"name", "one row per region"}, {"output", "summary.csv"}, {"min", 3}, {"max", 3}}});
    auto body = [&](int skew) {
      return json{{"code", with_constants(probe_source("analyst"), {{"SKEW", std::to_string(skew)}})},
                  {"inputs", json::array({file_id_})},
                  {"checks", checks}};
    };
    auto [r1, v1] = job(body(0));
    add(item("valid analyst job with checks",
             "python totals per region of sales.csv into summary.csv, checked by csv_column_sum and csv_row_count",
             r1.status / 100 == 2 ? judge_valid_job(v1) : Judgement{false, "HTTP " + std::to_string(r1.status), r1.body.substr(0, 300)},
             evidence(v1)));
    if (v1.is_object() && v1.contains("id")) valid_job_ = v1["id"].get<std::string>();

    auto [r2, v2] = job(body(1000));
    Judgement j = r2.status / 100 == 2 ? judge_rejected_output(v2)
                                       : Judgement{false, "HTTP " + std::to_string(r2.status), r2.body.substr(0, 300)};
    if (j.held && v2.contains("id")) {
      auto out = call("GET", "/v1/jobs/" + v2["id"].get<std::string>() + "/outputs/summary.csv");
      j.answer += "; GET its summary.csv: HTTP " + std::to_string(out.status);
      if (out.status != 404) {
        j.held = false;
        j.why = "the rejected output can still be downloaded (HTTP " + std::to_string(out.status) + ")";
      }
    }
    add(item("rejected output (a failing check)", "the same job with one total off by 1000", j, evidence(v2)));
  }

  void files() {
    json targets = json::array();
    if (t_.same_machine) {
      if (!t_.data_dir.empty())
        for (const auto& [name, path] : std::vector<std::pair<std::string, std::string>>{
                 {"service_data_dir", t_.data_dir},
                 {"service_database", t_.data_dir + "/airlock.db"},
                 {"canary_file", t_.data_dir + "/selftest-canary"}})
          targets.push_back(json::array({name, path}));
      if (!t_.state_dir.empty()) targets.push_back(json::array({"service_state_dir", t_.state_dir}));
    }
    std::vector<std::string> expected = {"shadow", "root_home", "host_proc_root", "ssh_keys", "host_sys",
                                         "inputs", "inputs_readonly"};
    for (const auto& tpath : targets) expected.push_back(tpath[0].get<std::string>());
    json admitted = json::array({"main.py"});
    auto [r, v] = job({{"code", with_constants(probe_source("files"),
                                               {{"TARGETS", targets.dump()}, {"ADMITTED", admitted.dump()}})}});
    std::string attempted = "read /etc/shadow, /root, /root/.ssh, /proc/1/root, /sys/fs/cgroup";
    if (!targets.empty()) attempted += ", the service's data directory, database and state directory";
    attempted += "; write into /inputs";
    add(item("blocked: a file outside the inputs", attempted,
             r.status / 100 == 2 ? judge_probes(v, expected) : Judgement{false, "HTTP " + std::to_string(r.status), r.body.substr(0, 300)},
             evidence(v)));
  }

  void network() {
    Listener listener(t_.probe_port);
    if (!listener.ready()) {
      add({"blocked: a network destination that was not approved", "listen on 127.0.0.1", "", Verdict::kBroken,
           "the selftest could not listen on the loopback (port " + std::to_string(t_.probe_port) + ")", {}});
      return;
    }
    std::string port = std::to_string(listener.port());
    auto [r, v] = job({{"code", with_constants(probe_source("network"),
                                               {{"PORT", port}, {"ABSTRACT", json(listener.abstract_name()).dump()}})}});
    Judgement j = r.status / 100 == 2 ? judge_probes(v, {"host_loopback", "host_abstract_socket", "route"})
                                      : Judgement{false, "HTTP " + std::to_string(r.status), r.body.substr(0, 300)};
    auto ev = evidence(v);
    // The same destination named in the job's policy: the tenant was never approved for it.
    json allow = json::array({{{"host", "127.0.0.1"}, {"port", listener.port()}, {"allow_private", true}}});
    auto [r2, v2] = job({{"code", with_constants(probe_source("egress"), {{"PORT", port}})}, {"policy", {{"allow", allow}}}});
    Judgement refused = judge_refused(r2.status, r2.body, {400, 403, 422});
    j.answer += "; a job naming 127.0.0.1:" + port + " in policy.allow: " + refused.answer;
    if (!refused.held) {
      j.held = false;
      Judgement ran = judge_probes(v2, {"gateway"});
      j.answer += " (it ran: " + ran.answer + ")";
      j.why += std::string(j.why.empty() ? "" : "; ") + "the service accepted a job naming 127.0.0.1:" + port +
               ", the selftest's own listener on the loopback, which no tenant's egress caps should approve";
      for (auto& e : evidence(v2)) ev.push_back(e);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int accepted = listener.accepted();
    j.answer += "; the listener accepted " + std::to_string(accepted) + " connection(s)";
    if (accepted > 0) {
      j.held = false;
      j.why += std::string(j.why.empty() ? "" : "; ") + "a job reached the selftest's listener";
    }
    add(item("blocked: a network destination that was not approved",
             "connect from a job to the selftest's listener on the host's 127.0.0.1:" + port +
                 " and abstract socket @" + listener.abstract_name() +
                 ", find a route off the box (UDP connect, nothing sent), and submit a job naming 127.0.0.1:" + port +
                 " as its destination",
             j, ev));
  }

  void secrets() {
    auto [r, v] = job({{"code", with_constants(probe_source("secrets"), {{"CANARY_PREFIX", json(t_.canary_prefix).dump()}})}});
    std::string attempted = "look for credentials in the environment (names like TOKEN, SECRET, AWS_, AIRLOCK_; API keys; ";
    attempted += t_.same_machine && !t_.data_dir.empty() ? "the canary in the service's environment and data directory)"
                                                         : "private keys)";
    attempted += " and in every readable file under /etc, /root, /home, /run, /var, /tmp";
    add(item("blocked: a look for credentials", attempted,
             r.status / 100 == 2 ? judge_probes(v, {"environment", "files"})
                                 : Judgement{false, "HTTP " + std::to_string(r.status), r.body.substr(0, 300)},
             evidence(v)));
  }

  void cancellation() {
    json b = {{"code", probe_source("cancel")}, {"policy", {{"timeout_s", 60}}}};
    auto r = call("POST", "/v1/jobs", b.dump());
    json view = json::parse(r.body, nullptr, false);
    if (r.status / 100 != 2 || !view.is_object() || !view.contains("id")) {
      add({"cancellation of a running job", "submit a job that sleeps 120 s", "HTTP " + std::to_string(r.status),
           Verdict::kBroken, r.body.substr(0, 300), {}});
      return;
    }
    std::string id = view["id"].get<std::string>();
    ids_.push_back(id);
    auto until = Clock::now() + std::chrono::seconds(15);
    while (Clock::now() < until && view.value("state", "") != "running") {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      view = json::parse(call("GET", "/v1/jobs/" + id).body, nullptr, false);
      if (!view.is_object()) view = json::object();
    }
    bool ran = view.value("state", "") == "running";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let its code start
    auto t0 = Clock::now();
    auto c = call("POST", "/v1/jobs/" + id + "/cancel");
    json done = wait_finished(id, 15);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    Judgement j = judge_cancelled(done);
    j.answer = "cancel: HTTP " + std::to_string(c.status) + "; " + j.answer + "; ended " + std::to_string(ms) +
               " ms after the cancel";
    if (!ran) {
      // Cancelling a queued job proves nothing about stopping a running one.
      j.held = false;
      j.why = "the job did not start running within 15 s (is the service's queue full?)";
    }
    if (done.contains("record")) views_.push_back(done);
    add(item("cancellation of a running job", "submit a job that sleeps 120 s, cancel it once it runs", j,
             evidence(done)));
  }

  void other_tenant() {
    if (t_.other_key.empty()) {
      add({"another tenant refused", "", "", Verdict::kSkipped, "no key of another tenant was given (--other-key-file)", {}});
      return;
    }
    if (valid_job_.empty()) {
      add({"another tenant refused", "", "", Verdict::kBroken, "there is no job of the tenant to ask for", {}});
      return;
    }
    struct Try {
      std::string what, method, target, body;
    };
    std::vector<Try> tries = {
        {"read its job", "GET", "/v1/jobs/" + valid_job_, ""},
        {"download its output", "GET", "/v1/jobs/" + valid_job_ + "/outputs/summary.csv", ""},
        {"cancel its job", "POST", "/v1/jobs/" + valid_job_ + "/cancel", ""},
        {"read its job's events", "GET", "/v1/jobs/" + valid_job_ + "/events", ""},
    };
    Judgement all{true, "", ""};
    for (const auto& t : tries) {
      auto r = call(t.method, t.target, t.body, t_.other_key);
      // 404 as for a job that does not exist; 403 when the key lacks the scope
      // (checked first, so it says nothing about the job either).
      Judgement j = judge_refused(r.status, r.body, {403, 404});
      all.answer += (all.answer.empty() ? "" : "; ") + t.what + ": " + j.answer;
      if (!j.held) {
        all.held = false;
        all.why += (all.why.empty() ? "" : "; ") + t.what + ": " + j.why;
      }
    }
    // Its upload as an input of the other tenant's job.
    json b = {{"command", json::array({"true"})}, {"inputs", json::array({file_id_})}};
    auto r = call("POST", "/v1/jobs", b.dump(), t_.other_key);
    Judgement j = judge_refused(r.status, r.body, {400, 403, 404});
    all.answer += "; use its upload as an input: " + j.answer;
    if (!j.held) {
      all.held = false;
      all.why += (all.why.empty() ? "" : "; ") + std::string("its upload was admitted into another tenant's job");
      auto v = json::parse(r.body, nullptr, false);
      if (v.is_object() && v.contains("id")) ids_.push_back(v["id"].get<std::string>());
    }
    add(item("another tenant refused", "with another tenant's key: read, download, cancel, stream the tenant's job " +
                                           valid_job_ + " and use its upload " + file_id_,
             all, {"job " + valid_job_, "file " + file_id_}));
  }

  static std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // What the host still holds of a job: processes of its host uid outside
  // another job's cgroup, mounts and cgroups that name its record id.
  std::vector<std::string> host_leftovers(const json& record) {
    std::vector<std::string> left;
    std::string id = record.value("id", "");
    uint64_t uid = 0;
    if (record.contains("sandbox") && record["sandbox"].is_object() && record["sandbox"].contains("host_uid") &&
        record["sandbox"]["host_uid"].is_number_unsigned())
      uid = record["sandbox"]["host_uid"].get<uint64_t>();
    std::error_code ec;
    if (uid >= 1000)
      for (const auto& e : fs::directory_iterator("/proc", ec)) {
        std::string pid = e.path().filename().string();
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::istringstream lines(read_text(e.path() / "status"));
        bool match = false;
        for (std::string line; std::getline(lines, line);)
          if (line.rfind("Uid:", 0) == 0) {
            std::istringstream ids(line.substr(4));
            for (uint64_t v; ids >> v;) match |= v == uid;
          }
        if (!match) continue;
        std::string cg = read_text(e.path() / "cgroup");
        if (cg.find("/airlock/") != std::string::npos && cg.find(id) == std::string::npos) continue;  // another job's
        left.push_back("process " + pid + " of host uid " + std::to_string(uid));
      }
    if (!id.empty()) {
      std::istringstream mounts(read_text("/proc/self/mountinfo"));
      for (std::string line; std::getline(mounts, line);)
        if (line.find(id) != std::string::npos) left.push_back("mount " + line.substr(0, 200));
      for (const auto& h : fs::directory_iterator("/sys/fs/cgroup", ec))
        if (fs::exists(h.path() / "airlock" / id)) left.push_back("cgroup " + (h.path() / "airlock" / id).string());
      if (!t_.state_dir.empty())
        for (const auto& e : fs::recursive_directory_iterator(t_.state_dir, fs::directory_options::skip_permission_denied, ec))
          if (e.path().filename() == id) left.push_back("directory " + e.path().string());
    }
    return left;
  }

  void cleanup() {
    Judgement all{true, "", ""};
    std::vector<std::string> ev;
    size_t records = 0;
    std::vector<std::string> left;
    for (int attempt = 0; attempt < 20; ++attempt) {  // exiting processes get a moment to be reaped
      left.clear();
      if (t_.same_machine)
        for (const auto& v : views_)
          for (auto& l : host_leftovers(v["record"])) left.push_back(std::move(l));
      if (left.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (const auto& v : views_) {
      ++records;
      Judgement j = judge_record_cleanup(v);
      for (auto& e : evidence(v)) ev.push_back(e);
      if (!j.held) {
        all.held = false;
        all.why += (all.why.empty() ? "" : "; ") + v.value("id", std::string("?")) + ": " + j.why;
      }
    }
    all.answer = std::to_string(records) + " record(s) say cleanup ok";
    if (t_.same_machine)
      all.answer += left.empty() ? "; no process, mount, cgroup or directory of those jobs is left on this machine"
                                 : "; left on this machine: " + std::to_string(left.size());
    else
      all.answer += "; the service is on another machine: its host was not inspected";
    for (const auto& l : left) {
      all.held = false;
      all.why += (all.why.empty() ? "" : "; ") + l;
    }
    if (records == 0) {
      all.held = false;
      all.why = "no job record to inspect";
    }
    add(item("cleanup (no process, mount, cgroup or file left)",
             "after the jobs above: read each record's cleanup" +
                 std::string(t_.same_machine ? ", and look for their processes (host uid), mounts, cgroups and state "
                                               "directories on this machine"
                                             : ""),
             all, ev));
  }

  const Target& t_;
  api::HttpClient http_;
  Report report_;
  std::vector<std::string> ids_;
  std::vector<json> views_;  // finished jobs with records
  std::string file_id_, valid_job_;
};

}  // namespace

Report run_selftest(const Target& target) { return Run(target).go(); }

}  // namespace airlock::selftest
