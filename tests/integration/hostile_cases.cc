#include "hostile_cases.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "jobs/record.h"

namespace airlock::testing::hostile {

fs::path cases_dir() { return fs::path(AIRLOCK_SOURCE_DIR) / "tests/hostile/cases"; }
fs::path data_dir() { return fs::path(AIRLOCK_SOURCE_DIR) / "tests/hostile/data"; }

std::string profile_name() {
  const char* p = std::getenv("HOSTILE_PROFILE");
  return p ? p : "";
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::vector<std::string> split_alternatives(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t bar = s.find('|', start);
    out.push_back(s.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

Case parse_case(const fs::path& path) {
  Case c;
  c.file = path.filename().string();
  std::string stem = path.stem().string();
  for (char ch : stem) c.test_name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#!", 0) == 0) continue;
    if (line.empty() || line[0] != '#') break;
    std::string body = line.substr(1);
    if (!body.empty() && body[0] == ' ') body.erase(0, 1);
    size_t colon = body.find(": ");
    if (colon == std::string::npos || colon == 0) continue;
    std::string key = body.substr(0, colon);
    if (!std::all_of(key.begin(), key.end(), [](char ch) { return (ch >= 'a' && ch <= 'z') || ch == '-'; }))
      continue;
    std::string value = body.substr(colon + 2);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    c.header[key].push_back(value);
  }
  return c;
}

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cases_dir(), ec)) {
    auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".py" || ext == ".sh")) cases.push_back(parse_case(entry.path()));
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.file < b.file; });
  return cases;
}


std::string text_of(const json& record, const char* stream) {
  if (!record.contains(stream)) return "";
  return airlock::jobs::stream_bytes(record[stream]).value_or("");
}

void expect_verdict(const Case& c, const json& record, const std::string& context) {
  std::string out_text = text_of(record, "stdout"), err_text = text_of(record, "stderr");
  if (auto want = c.one("expect-outcome")) {
    auto alts = split_alternatives(*want);
    EXPECT_TRUE(std::find(alts.begin(), alts.end(), record.value("outcome", "")) != alts.end())
        << "outcome is not " << *want << "\n" << context;
  }
  for (const auto& want : c.all("expect-reason")) {
    auto alts = split_alternatives(want);
    std::string reason = record.value("reason", "");
    EXPECT_TRUE(std::any_of(alts.begin(), alts.end(), [&](const std::string& a) { return reason.find(a) != std::string::npos; }))
        << "reason lacks '" << want << "'\n" << context;
  }
  for (const auto& want : c.all("expect-stdout")) {
    auto alts = split_alternatives(want);
    EXPECT_TRUE(std::any_of(alts.begin(), alts.end(), [&](const std::string& a) { return out_text.find(a) != std::string::npos; }))
        << "stdout lacks '" << want << "'\n" << context;
  }
  for (const auto& want : c.all("expect-stderr")) {
    auto alts = split_alternatives(want);
    EXPECT_TRUE(std::any_of(alts.begin(), alts.end(), [&](const std::string& a) { return err_text.find(a) != std::string::npos; }))
        << "stderr lacks '" << want << "'\n" << context;
  }
  for (const auto& want : c.all("expect-limit")) {
    bool hit = record.contains("limits_hit") && record["limits_hit"].is_array() &&
               std::find(record["limits_hit"].begin(), record["limits_hit"].end(), json(want)) != record["limits_hit"].end();
    EXPECT_TRUE(hit) << "limits_hit lacks '" << want << "'\n" << context;
  }
  if (auto want = c.one("expect-signal")) {
    EXPECT_EQ(record.value("signal", json()), json(std::stoi(*want))) << "signal\n" << context;
  }
  if (auto want = c.one("expect-exit")) {
    EXPECT_EQ(record.value("exit_code", json()), json(std::stoi(*want))) << "exit_code\n" << context;
  }
  for (const auto& stream : c.all("expect-truncated")) {
    bool truncated = record.contains(stream) && record[stream].is_object() && record[stream].value("truncated", false);
    EXPECT_TRUE(truncated) << stream << ".truncated is not true\n" << context;
  }
  for (const auto& want : c.all("expect-output")) {
    size_t at = want.find(" rejected ");
    if (at == std::string::npos) {
      ADD_FAILURE() << c.file << ": expect-output needs '<name> rejected <reason>'";
      continue;
    }
    std::string name = want.substr(0, at), reason = lower(want.substr(at + 10));
    bool found = false;
    if (record.contains("outputs") && record["outputs"].is_array())
      for (const auto& o : record["outputs"])
        found |= o.is_object() && o.value("name", "").find(name) != std::string::npos &&
                 o.value("verdict", "") == "rejected" && lower(o.value("reason", "")).find(reason) != std::string::npos;
    EXPECT_TRUE(found) << "no output '" << name << "' rejected for '" << reason << "'\n" << context;
  }
}

namespace {

struct Leftover {
  pid_t pid;
  std::string name, cgroup;
};

// Processes of `host_uid` that are not in another job's cgroup.
std::vector<Leftover> processes_of(uid_t host_uid, const std::string& job_id) {
  std::vector<Leftover> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::string pid_str = entry.path().filename().string();
    if (pid_str.empty() || !std::all_of(pid_str.begin(), pid_str.end(), ::isdigit)) continue;
    if (host_uid < 1000) break;  // never the host's own users (see expect_nothing_left)
    std::string status = read_file(entry.path() / "status");
    std::string name;
    bool match = false;
    std::istringstream lines(status);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(5);
      if (line.rfind("Uid:", 0) == 0) {
        std::istringstream ids(line.substr(4));
        for (long id; ids >> id;) match |= static_cast<uid_t>(id) == host_uid;
      }
    }
    if (!match) continue;
    std::string cgroup = read_file(entry.path() / "cgroup");
    // Another live job's process (same host uid, its own airlock/<id> group): not ours.
    bool other_job = cgroup.find("/airlock/") != std::string::npos &&
                     (job_id.empty() || cgroup.find(job_id) == std::string::npos);
    if (other_job) continue;
    found.push_back({static_cast<pid_t>(std::stol(pid_str)), name, cgroup});
  }
  return found;
}

}  // namespace

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

// The machine's shared mount of an image (sandbox/shared_image.h): made by
// the first job on the image and kept on purpose, read-only erofs at
// /run/airlock/images/<64 hex>. Nothing else of airlock may stay mounted.
bool is_shared_image_mount(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> f;
  for (std::string w; in >> w;) f.push_back(w);
  auto dash = std::find(f.begin(), f.end(), "-");
  if (f.size() < 6 || dash == f.end() || dash + 1 == f.end()) return false;
  const std::string prefix = "/run/airlock/images/";
  const std::string& point = f[4];
  if (point.rfind(prefix, 0) != 0 || point.size() != prefix.size() + 64) return false;
  if (point.find_first_not_of("0123456789abcdef", prefix.size()) != std::string::npos) return false;
  return *(dash + 1) == "erofs" && f[5].rfind("ro,", 0) == 0;
}

}  // namespace

std::vector<std::string> airlock_mounts() {
  std::vector<std::string> out;
  std::istringstream in(read_file("/proc/self/mountinfo"));
  for (std::string line; std::getline(in, line);)
    if (line.find("airlock") != std::string::npos && !is_shared_image_mount(line)) out.push_back(line);
  return out;
}

void expect_nothing_left(const json& record, const std::vector<std::string>& mounts_before, const std::string& context) {
  std::string id = record.value("id", "");
  EXPECT_FALSE(id.empty()) << "record has no id\n" << context;
  uid_t host_uid = 3000001;
  if (record.contains("sandbox") && record["sandbox"].contains("host_uid") &&
      record["sandbox"]["host_uid"].is_number_unsigned()) {
    host_uid = record["sandbox"]["host_uid"].get<uid_t>();
  } else {
    ADD_FAILURE() << "record has no sandbox.host_uid; checking 3000001\n" << context;
  }
  EXPECT_TRUE(host_uid != 0 || record.value("outcome", "") == "input_rejected")
      << "the sandbox is mapped to host root";

  // Processes: give exiting ones (zombies being reaped) a moment. A job
  // rejected before it had a sandbox records host uid 0 (none leased): there
  // is nothing of it to look for, and the host's own processes (root's, and
  // any system uid's) must never be taken for the job's and killed.
  std::vector<Leftover> left;
  const bool had_sandbox = host_uid >= 1000;
  if (!had_sandbox) {
    EXPECT_EQ(record.value("outcome", ""), "input_rejected")
        << "a job that ran recorded host uid " << host_uid << "\n" << context;
  }
  for (int i = 0; had_sandbox && i < 10; ++i) {
    left = processes_of(host_uid, id);
    if (left.empty()) break;
    usleep(50 * 1000);
  }
  if (!left.empty()) {
    std::ostringstream msg;
    for (const auto& p : left) msg << "  pid " << p.pid << " " << p.name << " cgroups: " << p.cgroup.substr(0, 300) << "\n";
    ADD_FAILURE() << left.size() << " process(es) of host uid " << host_uid << " outlived the job:\n" << msg.str() << context;
    for (const auto& p : left) kill(p.pid, SIGKILL);  // clean up what the engine left
  }

  // Mounts.
  std::set<std::string> before(mounts_before.begin(), mounts_before.end());
  for (const auto& m : airlock_mounts()) {
    if (!id.empty() && m.find(id) != std::string::npos) {
      ADD_FAILURE() << "mount of job " << id << " outlived it: " << m << "\n" << context;
    } else if (!before.count(m)) {
      ADD_FAILURE() << "an airlock mount appeared during the job and is still there: " << m << "\n" << context;
    }
  }

  // Cgroups: the job's group (named after the record id) is gone in every
  // hierarchy. A service job's record is stored before its teardown (its
  // cleanup.after_record): the group goes right after the answer, so a moment
  // is allowed, as for the processes above.
  if (!id.empty()) {
    std::error_code ec;
    for (const auto& h : fs::directory_iterator("/sys/fs/cgroup", ec)) {
      fs::path group = h.path() / "airlock" / id;
      for (int i = 0; i < 40 && fs::exists(group, ec); ++i) usleep(50 * 1000);
      EXPECT_FALSE(fs::exists(group, ec)) << "cgroup " << group << " outlived the job\n" << context;
    }
  }
}


namespace {

// A child that makes i386 getpid (20) with int 0x80 and exits 0 when it
// returned the pid; it dies by a signal when the machine faults the
// instruction.
bool int80_runs_here() {
#if defined(__x86_64__)
  pid_t child = ::fork();
  if (child == 0) {
    long r = 20;
    __asm__ volatile("int $0x80" : "+a"(r) : : "memory");
    ::_exit(r == static_cast<long>(::getpid()) ? 0 : 1);
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
#else
  return false;
#endif
}

}  // namespace

std::optional<std::string> unmet_requirement(const std::string& what) {
  if (what == "int80") {
    static const bool runs = int80_runs_here();
    if (runs) return std::nullopt;
    return "this machine does not run int 0x80 even outside a sandbox (the probe died by a "
           "signal), so no seccomp filter is reached by it here";
  }
  return "unknown requirement '" + what + "'";
}

}  // namespace airlock::testing::hostile
