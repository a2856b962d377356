// The hostile containment suite: every file in tests/hostile/cases is one
// attack with its expected verdict (see tests/hostile/README.md). Each case is
// run through `airlock run --json`; the job record is checked against the
// case's header, then the host is checked for anything the job left behind.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jobs/record.h"
#include "hostile_cases.h"
#include "pool_helpers.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using namespace airlock::testing::hostile;
const fs::path kCasesDir = cases_dir();
const fs::path kDataDir = data_dir();
constexpr int kAirlockDeadlineSeconds = 150;  // far above any case's own --timeout

// HOSTILE_START=warm or preloaded: the whole suite runs again, every case in a
// sandbox taken from a warm pool (preloaded: Python cases forked from the
// preloaded interpreter; the shell case warm), and the record must say so.
std::string start_mode() {
  const char* m = std::getenv("HOSTILE_START");
  return m ? m : "";
}
std::string g_pool_state;  // the pool's state directory, shared by every case

// HOSTILE_INTERPRETER=data (with HOSTILE_START=preloaded): the pool keeps no
// standard-library sandboxes, so every Python case forks from the data
// stack's interpreter (by default most cases import only standard modules
// and take the small one: docs/fast-start.md, "Two preloaded interpreters").
std::string interpreter_mode() {
  const char* m = std::getenv("HOSTILE_INTERPRETER");
  return m ? m : "";
}

// HOSTILE_IMAGE=NAME: every case runs on that stored image (the store is
// AIRLOCK_TEST_IMAGE_DIR, else build/images), and the record must say so.
std::string hostile_image() {
  const char* m = std::getenv("HOSTILE_IMAGE");
  return m ? m : "";
}
std::string test_image_dir() {
  const char* d = std::getenv("AIRLOCK_TEST_IMAGE_DIR");
  return d ? d : std::string(AIRLOCK_SOURCE_DIR) + "/build/images";
}

class PoolEnvironment : public testing::Environment {
 public:
  void SetUp() override {
    dir_ = std::make_unique<airlock::testing::TempDir>();
    // On HOSTILE_IMAGE, the pool keeps that image's classes too (preloaded
    // ones where the image has python3, libpython and pandas).
    // (Not built: every case skips, saying so, and the pool keeps host's.)
    std::vector<std::string> extra;
    if (!hostile_image().empty() && fs::exists(test_image_dir() + "/names/" + hostile_image()))
      extra = {"--image", hostile_image(), "--image-dir", test_image_dir()};
    if (interpreter_mode() == "data") extra.insert(extra.end(), {"--preloaded-stdlib", "0"});
    pool_ = std::make_unique<airlock::testing::TestPool>(dir_->path(), dir_->state(), 3, 3, extra);
    ASSERT_TRUE(pool_->ready()) << pool_->log();
    g_pool_state = dir_->state();
  }
  void TearDown() override {
    EXPECT_EQ(pool_->stop(), 0);
    EXPECT_TRUE(pool_->held_ids().empty()) << "the pool left prepared sandboxes";
    pool_.reset();
    dir_.reset();
  }

 private:
  std::unique_ptr<airlock::testing::TempDir> dir_;
  std::unique_ptr<airlock::testing::TestPool> pool_;
};
const bool kPoolRegistered =
    !start_mode().empty() && testing::AddGlobalTestEnvironment(new PoolEnvironment) != nullptr;

// ---------------------------------------------------------------- cases

// ---------------------------------------------------------------- setup

// ---------------------------------------------------------------- running

struct RunResult {
  int wait_status = 0;
  std::string out;  // airlock's stdout: the record
  std::string err;  // airlock's own stderr
  bool killed_at_deadline = false;
};

RunResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  RunResult res;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    res.err = std::string("pipe: ") + strerror(errno);
    res.wait_status = -1;
    return res;
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& e : extra_env) env_strings.push_back(e);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) {
    res.err = std::string("fork: ") + strerror(errno);
    res.wait_status = -1;
    return res;
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_pipe[1], 1) < 0 || dup2(err_pipe[1], 2) < 0) _exit(127);
    setpgid(0, 0);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kAirlockDeadlineSeconds);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&res.out, &res.err};
  int open_count = 2;
  char buf[65536];
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      res.killed_at_deadline = true;
      kill(pid, SIGKILL);
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t r = read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        sinks[i]->append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  waitpid(pid, &res.wait_status, 0);
  return res;
}

std::string excerpt(const std::string& s, size_t max = 1500) {
  if (s.size() <= max) return s;
  return s.substr(0, max) + "\n...[" + std::to_string(s.size() - max) + " more bytes]";
}


std::string describe(const json& record, const RunResult& run) {
  std::ostringstream d;
  d << "  record: outcome=" << record.value("outcome", json()).dump() << " reason=" << record.value("reason", json()).dump()
    << " exit_code=" << record.value("exit_code", json()).dump() << " signal=" << record.value("signal", json()).dump()
    << " limits_hit=" << record.value("limits_hit", json()).dump() << "\n";
  if (record.contains("outputs")) {
    std::string outs = record["outputs"].dump();
    d << "  outputs: " << excerpt(outs, 800) << "\n";
  }
  d << "  stdout.text: " << excerpt(text_of(record, "stdout")) << "\n";
  d << "  stderr.text: " << excerpt(text_of(record, "stderr")) << "\n";
  if (!run.err.empty()) d << "  airlock's stderr: " << excerpt(run.err, 800) << "\n";
  return d.str();
}

// The exit status the contract (docs/job-record.md) gives each outcome.
std::optional<int> expected_exit_status(const json& record) {
  std::string outcome = record.value("outcome", "");
  static const std::map<std::string, int> fixed = {
      {"input_rejected", 120}, {"output_rejected", 121}, {"memory_limit", 122}, {"cpu_limit", 123},
      {"timed_out", 124},      {"sandbox_error", 125},   {"cancelled", 130}};
  if (auto it = fixed.find(outcome); it != fixed.end()) return it->second;
  if (outcome == "succeeded") return 0;
  if (outcome == "failed") {
    if (record.contains("signal") && record["signal"].is_number_integer()) return 128 + record["signal"].get<int>();
    if (record.contains("exit_code") && record["exit_code"].is_number_integer()) return record["exit_code"].get<int>();
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- leftovers

// ---------------------------------------------------------------- output dir

// A private host directory for --output-dir and airlock's state (its job
// directories and records), removed afterwards: the suite leaves nothing in
// /var/lib/airlock. Mode 0711: the sandbox's unprivileged user passes through.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "airlock-hostile-XXXXXX").string();
    if (mkdtemp(tmpl.data())) {
      path = tmpl;
      ::chmod(tmpl.c_str(), 0711);
      ::mkdir((path / "state").c_str(), 0711);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// What airlock copied out must be exactly the accepted outputs of a
// succeeded job: regular files with one link, sizes as recorded, nothing of
// the host in them.
void expect_output_dir_matches(const fs::path& dir, const json& record, const std::vector<std::string>& forbidden,
                               const std::string& context) {
  std::map<std::string, uint64_t> accepted;
  if (record.contains("outputs") && record["outputs"].is_array())
    for (const auto& o : record["outputs"])
      if (o.is_object() && o.value("verdict", "") == "accepted") accepted[o.value("name", "")] = o.value("size", uint64_t{0});
  bool succeeded = record.value("outcome", "") == "succeeded";
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    EXPECT_TRUE(!succeeded || accepted.empty()) << "--output-dir was not created, but outputs were accepted\n" << context;
    return;
  }
  std::set<std::string> seen;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    std::string rel = fs::relative(p, dir, ec).string();
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) continue;
    if (!S_ISREG(st.st_mode)) {
      ADD_FAILURE() << "--output-dir holds a non-regular file: " << rel << " (mode " << std::oct << st.st_mode << std::dec
                    << ")\n" << context;
      continue;
    }
    seen.insert(rel);
    EXPECT_TRUE(succeeded) << "an output was copied although the outcome is not succeeded: " << rel << "\n" << context;
    EXPECT_EQ(st.st_nlink, 1u) << rel << " in --output-dir has " << st.st_nlink << " links\n" << context;
    auto a = accepted.find(rel);
    if (a == accepted.end()) {
      ADD_FAILURE() << "--output-dir holds " << rel << ", which the record does not list as accepted\n" << context;
    } else {
      EXPECT_EQ(static_cast<uint64_t>(st.st_size), a->second) << rel << " size differs from the record\n" << context;
    }
    if (st.st_size < (64 << 20)) {
      std::string content = read_file(p);
      for (const auto& f : forbidden)
        EXPECT_EQ(content.find(f), std::string::npos) << rel << " in --output-dir contains '" << f << "'\n" << context;
    }
  }
  if (succeeded) {
    for (const auto& [name, size] : accepted)
      EXPECT_TRUE(seen.count(name)) << "accepted output " << name << " is missing from --output-dir\n" << context;
  }
}

std::string host_hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// "{host_hostname}" in a forbid-record value stands for this machine's name.
std::string expand(std::string value) {
  const std::string token = "{host_hostname}";
  if (size_t at = value.find(token); at != std::string::npos) value.replace(at, token.size(), host_hostname());
  return value;
}

// ---------------------------------------------------------------- checks

json run_and_check(const Case& c) {
  HostSetup setup;
  for (const auto& s : c.all("setup")) {
    if (s == "tcp-listener")
      setup.tcp_listener();
    else if (s == "abstract-socket")
      setup.abstract_socket();
    else if (s == "canary")
      setup.start_canary();
    else if (s == "pipe-core-pattern")
      setup.pipe_core_pattern();
    else
      ADD_FAILURE() << c.file << ": unknown setup '" << s << "'";
  }
  if (testing::Test::HasFatalFailure()) return json();

  TempDir out_dir;
  EXPECT_FALSE(out_dir.path.empty()) << "mkdtemp: " << strerror(errno);
  std::vector<std::string> command;
  if (auto cmd = c.one("command")) {
    for (const auto& w : split_words(*cmd)) command.push_back(w);
  } else {
    command.push_back(fs::path(c.file).extension() == ".sh" ? "sh" : "python3");
    command.push_back("/inputs/" + c.file);
  }
  std::string mode = start_mode(), want_start;
  if (!mode.empty()) {
    bool python_env = false;
    for (const auto& a : c.all("args")) python_env |= a.find("PYTHON") != std::string::npos;
    want_start = mode == "preloaded" && command[0] == "python3" && !python_env ? "preloaded" : "warm";
  }
  std::string state = mode.empty() ? (out_dir.path / "state").string() : g_pool_state;
  std::vector<std::string> argv = {AIRLOCK_BINARY, "run", "--json", "--state-dir", state,
                                   "--output-dir", (out_dir.path / "out").string(),
                                   "--input", (kCasesDir / c.file).string()};
  if (!want_start.empty()) {
    argv.push_back("--start");
    argv.push_back(want_start);
  }
  if (!profile_name().empty()) {
    argv.push_back("--profile");
    argv.push_back(profile_name());
  }
  if (!hostile_image().empty()) argv.insert(argv.end(), {"--image", hostile_image(), "--image-dir", test_image_dir()});
  for (const auto& in : c.all("input")) {
    argv.push_back("--input");
    argv.push_back((kDataDir / in).string());
  }
  for (const auto& a : c.all("args"))
    for (const auto& w : split_words(a)) argv.push_back(w);
  for (const auto& e : setup.env) {
    argv.push_back("--env");
    argv.push_back(e);
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());

  // A secret in airlock's own environment: must reach neither the code nor the record.
  std::string secret = "hostile-secret-" + random_hex(12);
  auto mounts_before = airlock_mounts();
  RunResult run = run_process(argv, {"AIRLOCK_HOSTILE_SECRET=" + secret});

  std::string cmdline;
  for (const auto& a : argv) cmdline += a + " ";
  EXPECT_FALSE(run.killed_at_deadline) << "airlock still running after " << kAirlockDeadlineSeconds
                                       << " s; killed\n  " << cmdline;
  json record = json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object()) {
    ADD_FAILURE() << c.file << ": airlock did not print a JSON record (wait status " << run.wait_status << ")\n  "
                  << cmdline << "\n  stdout: " << excerpt(run.out) << "\n  stderr: " << excerpt(run.err);
    return json();
  }
  std::string context = c.file + "\n" + describe(record, run);
  if (!want_start.empty() && c.one("expect-outcome") != "input_rejected") {  // rejected: no sandbox taken
    EXPECT_EQ(record.value("sandbox", json::object()).value("start", ""), want_start)
        << "the case did not run on the " << want_start << " path\n" << context;
    if (want_start == "preloaded" && !interpreter_mode().empty()) {
      EXPECT_EQ(record["sandbox"].value("interpreter", ""), interpreter_mode())
          << "the case did not fork from the " << interpreter_mode() << " interpreter\n" << context;
    }
  }
  if (!profile_name().empty()) {
    EXPECT_EQ(record.value("profile", json::object()).value("name", ""), profile_name())
        << "the case did not run under profile " << profile_name() << "\n" << context;
  }
  if (!hostile_image().empty()) {
    EXPECT_EQ(record["image"].value("name", ""), hostile_image()) << "the case did not run on the image\n" << context;
  }
  if (getenv("HOSTILE_VERBOSE")) std::cout << context;  // the evidence, also for passing cases
  std::string dump = record.dump();
  std::string out_text = text_of(record, "stdout"), err_text = text_of(record, "stderr");

  // Exit status as the contract maps the outcome.
  if (auto want = expected_exit_status(record)) {
    EXPECT_TRUE(WIFEXITED(run.wait_status) && WEXITSTATUS(run.wait_status) == *want)
        << "airlock's exit status " << (WIFEXITED(run.wait_status) ? WEXITSTATUS(run.wait_status) : -1)
        << " does not match the outcome (want " << *want << ")\n" << context;
  }

  expect_verdict(c, record, context);
  std::vector<std::string> forbidden;
  for (const auto& f : c.all("forbid-record")) forbidden.push_back(expand(f));
  for (const auto& f : forbidden)
    EXPECT_TRUE(dump.find(f) == std::string::npos && out_text.find(f) == std::string::npos &&
                err_text.find(f) == std::string::npos)  // streams may be base64 in the dump
        << "the record contains '" << f << "'\n" << context;
  for (const auto& name : c.all("expect-collected")) {
    std::error_code ec;
    EXPECT_TRUE(fs::is_regular_file(out_dir.path / "out" / name, ec)) << name << " was not copied to --output-dir\n" << context;
  }
  expect_output_dir_matches(out_dir.path / "out", record, forbidden, context);

  // Stream caps: the record keeps at most the cap (allowing for escaping).
  uint64_t cap = record.contains("policy") ? record["policy"].value("stdout_cap_bytes", uint64_t{0}) : 0;
  if (cap > 0) {
    EXPECT_LE(out_text.size(), 4 * cap) << "stdout.text exceeds the cap\n" << context;
    EXPECT_LE(err_text.size(), 4 * cap) << "stderr.text exceeds the cap\n" << context;
  }

  // Always: nothing of the host's environment in the record; the job cleaned up.
  EXPECT_EQ(dump.find(secret), std::string::npos) << "airlock's own environment leaked into the record\n" << context;
  if (c.one("expect-outcome") != "sandbox_error") {
    EXPECT_NE(record.value("outcome", ""), "sandbox_error") << context;
  }
  if (record.contains("cleanup") && record["cleanup"].is_object()) {
    EXPECT_EQ(record["cleanup"].value("ok", false), true) << "cleanup " << record["cleanup"].dump() << "\n" << context;
  } else {
    ADD_FAILURE() << "record has no cleanup\n" << context;
  }
  setup.expect_untouched(context);
  setup.expect_no_dump(record, context);
  expect_nothing_left(record, mounts_before, context);
  return record;
}

class HostileTest : public testing::TestWithParam<Case> {};

TEST_P(HostileTest, Contained) {
  const Case& c = GetParam();
  if (!hostile_image().empty() && !fs::exists(test_image_dir() + "/names/" + hostile_image()))
    GTEST_SKIP() << "the image '" << hostile_image() << "' is not built in " << test_image_dir()
                 << " (scripts/test-setup/20-images.sh builds it)";
  ASSERT_TRUE(c.one("case").has_value()) << c.file << ": no '# case:' header";
  ASSERT_TRUE(c.one("expect-outcome").has_value()) << c.file << ": no '# expect-outcome:' header";
  for (const auto& need : c.all("requires"))
    if (auto missing = unmet_requirement(need)) GTEST_SKIP() << c.file << ": " << *missing;
  // "# after: other_case.py": run that case first (with its own checks), then this one.
  for (const auto& before : c.all("after")) {
    SCOPED_TRACE("prerequisite " + before);
    ASSERT_TRUE(fs::exists(kCasesDir / before)) << before;
    run_and_check(parse_case(kCasesDir / before));
    ASSERT_FALSE(HasFailure()) << "prerequisite " << before << " failed";
  }
  run_and_check(c);
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileTest, testing::ValuesIn(load_cases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.test_name; });

}  // namespace
