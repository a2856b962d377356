// `airlock session ...` run as a user would, against a real `airlock serve`:
// live output, exit statuses, files, snapshots, closing, and the errors a
// user sees for a missing key or an unreachable server.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "service_fixture.h"

namespace airlock::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct CliRun {
  int status = -1;
  std::string out, err;
  double first_out_s = -1;  // when the first stdout byte arrived, since the start
  double exit_s = -1;       // when it exited
};

// Runs `airlock session ARGS` with only `env` in its environment, `input` on
// its stdin; reads stdout as it comes. `on_output` sees stdout so far and
// may return a signal to send (0: none).
CliRun run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env,
               const std::string& input = "", std::function<int(const std::string&)> on_output = {}) {
  std::vector<std::string> argv = {AIRLOCK_BINARY, "session"};
  argv.insert(argv.end(), args.begin(), args.end());
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) throw std::runtime_error("pipe");
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    for (auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    e.push_back(nullptr);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  (void)!::write(in[1], input.data(), input.size());
  ::close(in[1]);
  CliRun r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_count = 2;
  bool signalled = false;
  char buf[65536];
  while (open_count > 0) {
    if (::poll(fds, 2, 60'000) <= 0) break;
    for (int i = 0; i < 2; ++i) {
      if (!fds[i].revents) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      if (i == 0 && r.first_out_s < 0)
        r.first_out_s = std::chrono::duration<double>(Clock::now() - start).count();
      (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      if (i == 0 && on_output && !signalled) {
        if (int sig = on_output(r.out)) {
          ::kill(pid, sig);
          signalled = true;
        }
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_s = std::chrono::duration<double>(Clock::now() - start).count();
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// A loopback port nothing listens on (bound, then closed).
uint16_t unused_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class SessionCli : public ::testing::Test {
 protected:
  std::vector<std::string> env() const {
    return {"AIRLOCK_SERVER=http://127.0.0.1:" + std::to_string(svc.port()), "AIRLOCK_API_KEY=" + svc.alpha.secret};
  }
  CliRun cli(const std::vector<std::string>& args, const std::string& input = "") { return run_cli(args, env(), input); }

  std::string create() {
    CliRun r = cli({"create", "--idle-timeout", "300"});
    EXPECT_EQ(r.status, 0) << r.err;
    std::string id = r.out.substr(0, r.out.find('\n'));
    if (!id.empty()) open_ids.push_back(id);
    return id;
  }

  void TearDown() override {
    for (const auto& id : open_ids) run_cli({"close", id}, env());
  }

  ServiceProcess svc;
  TempDir dir;
  std::vector<std::string> open_ids;
};

TEST_F(SessionCli, AWholeSessionFromTheCommandLine) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());

  // Output is printed while the call runs, then the value.
  CliRun live = cli({"exec", sid,
                     "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(1)\n41 + 1"});
  EXPECT_EQ(live.status, 0) << live.err;
  EXPECT_EQ(live.out, "tick 0\ntick 1\ntick 2\n42\n");
  EXPECT_LT(live.first_out_s, live.exit_s - 1.5) << "the first line came only at the end";

  // State stays between calls; code from stdin; stderr to stderr.
  CliRun state = cli({"exec", sid, "-"}, "import sys\nprint(i, file=sys.stderr)\nprint('from stdin')");
  EXPECT_EQ(state.status, 0) << state.err;
  EXPECT_EQ(state.out, "from stdin\n");
  EXPECT_EQ(state.err, "2\n");

  // A shell call exits with the command's status.
  CliRun shell = cli({"exec", sid, "--shell", "--", "echo hi; echo oops >&2; exit 3"});
  EXPECT_EQ(shell.status, 3) << shell.err;
  EXPECT_EQ(shell.out, "hi\n");
  EXPECT_NE(shell.err.find("oops"), std::string::npos);

  // Files: upload, list, download with the same sha256.
  std::string local = dir.sub("sales.csv");
  std::string content = "region,units\n";
  for (int i = 0; i < 2000; ++i) content += "north," + std::to_string(i) + "\n";
  { std::ofstream(local) << content; }
  CliRun up = cli({"files", "upload", sid, local, "data/my sales.csv"});
  EXPECT_EQ(up.status, 0) << up.err;
  EXPECT_NE(up.out.find(Sha256::of(content)), std::string::npos) << up.out;
  CliRun ls = cli({"files", "ls", sid, "data"});
  EXPECT_EQ(ls.status, 0) << ls.err;
  EXPECT_NE(ls.out.find("my sales.csv"), std::string::npos) << ls.out;
  std::string back = dir.sub("back.csv");
  CliRun down = cli({"files", "download", sid, "data/my sales.csv", back});
  EXPECT_EQ(down.status, 0) << down.err;
  EXPECT_EQ(Sha256::of(read_text(back)), Sha256::of(content));
  CliRun to_stdout = cli({"files", "download", sid, "data/my sales.csv", "-"});
  EXPECT_EQ(to_stdout.out, content);
  CliRun seen = cli({"exec", sid, "--shell", "wc -l < 'data/my sales.csv'"});
  EXPECT_EQ(seen.out, "2001\n");

  // A figure is saved where --figures says.
  CliRun fig = cli({"exec", sid, "--figures", dir.sub("figs"), "import matplotlib.pyplot as plt\nplt.plot([1, 2])"});
  EXPECT_EQ(fig.status, 0) << fig.err;
  EXPECT_NE(fig.err.find("figure saved to " + dir.sub("figs") + "/"), std::string::npos) << fig.err;

  // A snapshot, listed, then removed.
  CliRun snap = cli({"snapshot", sid});
  EXPECT_EQ(snap.status, 0) << snap.err;
  std::string digest = snap.out.substr(0, snap.out.find('\n'));
  EXPECT_EQ(digest.rfind("sha256:", 0), 0u) << snap.out;
  EXPECT_NE(cli({"snapshots"}).out.find(digest), std::string::npos);
  EXPECT_EQ(cli({"snapshot-rm", digest}).status, 0);

  CliRun listed = cli({"list"});
  EXPECT_NE(listed.out.find(sid), std::string::npos);
  CliRun got = cli({"get", sid, "--json"});
  EXPECT_EQ(nlohmann::json::parse(got.out)["id"], sid);

  CliRun closed = cli({"close", sid});
  EXPECT_EQ(closed.status, 0) << closed.err;
  EXPECT_EQ(closed.out, "closed " + sid + " (closed), 5 calls\n");
  open_ids.clear();
  // A closed session says so, with its reason.
  CliRun late = cli({"exec", sid, "1"});
  EXPECT_EQ(late.status, 2);
  EXPECT_NE(late.err.find("HTTP 409 session_closed"), std::string::npos) << late.err;
  EXPECT_NE(late.err.find("(closed)"), std::string::npos) << late.err;
}

// A call's live output, its value and the names `files ls` shows reach the
// user's terminal inert: no ESC or C1 byte, the escaped forms instead.
TEST_F(SessionCli, WhatACallPrintsIsInertOnATerminal) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  std::vector<std::string> exec = {AIRLOCK_BINARY, "session", "exec", sid, "--shell", "--",
                                   "printf '\\033]52;c;eA==\\007live\\n'; printf '\\302\\2332J\\n' >&2; "
                                   "mkdir -p d; touch \"d/$(printf 'x\\033[2Jy')\""};
  OnTerminal shell = run_on_terminal(exec, env());
  EXPECT_EQ(shell.status, 0) << shell.seen;
  // The error of a call quotes the exception's message as it is.
  OnTerminal value = run_on_terminal(
      {AIRLOCK_BINARY, "session", "exec", sid, "raise ValueError('\\x1b]0;owned\\x07' + 'v')"}, env());
  EXPECT_NE(value.status, 0) << value.seen;
  OnTerminal ls = run_on_terminal({AIRLOCK_BINARY, "session", "files", "ls", sid, "d"}, env());
  EXPECT_EQ(ls.status, 0) << ls.seen;
  for (const OnTerminal* t : {&shell, &value, &ls}) {
    EXPECT_EQ(t->seen.find('\x1b'), std::string::npos) << "an ESC byte reached the terminal: " << t->seen;
    EXPECT_EQ(t->seen.find("\xc2\x9b"), std::string::npos) << t->seen;
  }
  EXPECT_NE(shell.seen.find("\\x1b]52;c;eA==\\x07live\n"), std::string::npos) << shell.seen;
  EXPECT_NE(shell.seen.find("\\u009b2J\n"), std::string::npos) << shell.seen;
  EXPECT_NE(value.seen.find("ValueError: \\x1b]0;owned\\x07v"), std::string::npos) << value.seen;
  EXPECT_NE(ls.seen.find("x\\x1b[2Jy"), std::string::npos) << ls.seen;
}

TEST_F(SessionCli, ExitStatusesOfCallsThatFailTimeOutOrAreInterrupted) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  CliRun error = cli({"exec", sid, "1 / 0"});
  EXPECT_EQ(error.status, 1);
  EXPECT_NE(error.err.find("ZeroDivisionError"), std::string::npos) << error.err;

  CliRun slow = cli({"exec", sid, "--timeout", "1", "import time\ntime.sleep(30)"});
  EXPECT_EQ(slow.status, 124) << slow.err;
  EXPECT_NE(slow.err.find("timed_out"), std::string::npos) << slow.err;

  // Ctrl-C once: the call is interrupted, the CLI reports it.
  CliRun interrupted = run_cli({"exec", sid, "import time\nprint('started', flush=True)\ntime.sleep(30)"}, env(), "",
                               [](const std::string& out) { return out.find("started") != std::string::npos ? SIGINT : 0; });
  EXPECT_EQ(interrupted.status, 130) << interrupted.err;
  EXPECT_NE(interrupted.err.find("interrupting exec"), std::string::npos) << interrupted.err;
  EXPECT_LT(interrupted.exit_s, 20);
  // The session goes on.
  EXPECT_EQ(cli({"exec", sid, "print('still here')"}).out, "still here\n");
}

TEST_F(SessionCli, ACallThatAsksForDataExitsThreeAndIsAnsweredOrRefused) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  CliRun plain = cli({"exec", sid, "import airlock_request\nn = 2\nairlock_request.ask('more.csv', 'one more export')"});
  EXPECT_EQ(plain.status, 3) << plain.err;
  EXPECT_NE(plain.err.find("asks for data: r1 more.csv: one more export"), std::string::npos) << plain.err;
  std::string local = dir.sub("more.csv");
  std::ofstream(local) << "n\n40\n";
  ASSERT_EQ(cli({"files", "upload", sid, local}).status, 0);
  CliRun answered = cli({"exec", sid, "--answer", "r1", "n + int(open('more.csv').read().split()[1])"});
  EXPECT_EQ(answered.status, 0) << answered.err;
  EXPECT_EQ(answered.out, "42\n");
  CliRun again = cli({"exec", sid, "airlock_request.ask('other.csv', 'why not')"});
  EXPECT_EQ(again.status, 3) << again.err;
  CliRun refused = cli({"refuse", sid, "r2", "not", "for", "you"});
  EXPECT_EQ(refused.status, 0) << refused.err;
  EXPECT_EQ(refused.out, "refused r2 of " + sid + "\n");
  EXPECT_EQ(cli({"refuse", sid, "r2", "twice"}).status, 2);  // 409: refused already
  EXPECT_EQ(cli({"exec", sid, "airlock_request.answer('r2')['reason']"}).out, "'not for you'\n");
}

// A request's why is the sandbox's text: with a newline in it, it still
// prints as one line, inert, so it cannot add a line that reads like
// airlock's own (here: that the call ended well).
TEST_F(SessionCli, AWhyWithANewlineIsPrintedOnOneInertLine) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  CliRun asked = cli({"exec", sid, "import airlock_request\n"
                                   "airlock_request.ask('more.csv', 'one more export\\nended: ok')"});
  EXPECT_EQ(asked.status, 3) << asked.err;
  EXPECT_NE(asked.err.find("airlock: the call asks for data: r1 more.csv: one more export\\x0aended: ok\n"),
            std::string::npos)
      << asked.err;
  EXPECT_EQ(asked.err.find("\nended: ok"), std::string::npos) << "a line of the why's own: " << asked.err;
}

TEST_F(SessionCli, MissingKeyBadServerAndUnknownIdsAreClear) {
  std::string server = "AIRLOCK_SERVER=http://127.0.0.1:" + std::to_string(svc.port());
  CliRun no_key = run_cli({"list"}, {server});
  EXPECT_EQ(no_key.status, 2);
  EXPECT_NE(no_key.err.find("no API key"), std::string::npos) << no_key.err;

  CliRun bad_key = run_cli({"list"}, {server, "AIRLOCK_API_KEY=not-a-key"});
  EXPECT_EQ(bad_key.status, 2);
  EXPECT_NE(bad_key.err.find("HTTP 401"), std::string::npos) << bad_key.err;

  std::string key_file = dir.sub("key");
  { std::ofstream(key_file) << svc.alpha.secret << "\n"; }
  EXPECT_EQ(run_cli({"list", "--key-file", key_file}, {server}).status, 0);

  std::string nowhere = "http://127.0.0.1:" + std::to_string(unused_port());
  CliRun unreachable = run_cli({"list", "--server", nowhere}, env());
  EXPECT_EQ(unreachable.status, 2);
  EXPECT_NE(unreachable.err.find("cannot reach the airlock service at " + nowhere), std::string::npos)
      << unreachable.err;

  CliRun remote = run_cli({"list", "--server", "http://sandbox.invalid:8470"}, env());
  EXPECT_EQ(remote.status, 2);
  EXPECT_NE(remote.err.find("loopback"), std::string::npos) << remote.err;

  CliRun unknown = cli({"get", "no-such-session"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("HTTP 404"), std::string::npos) << unknown.err;

  CliRun usage = cli({"exec"});
  EXPECT_EQ(usage.status, 125);
  CliRun help = cli({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("files upload ID LOCAL_FILE"), std::string::npos);
}

// A loopback proxy in front of the service that breaks the first event
// stream after `cut_after` bytes of its response, as a flaky network would;
// every other request passes whole.
class CuttingProxy {
 public:
  CuttingProxy(uint16_t upstream, size_t cut_after) : upstream_(upstream), cut_after_(cut_after) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listener_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~CuttingProxy() {
    stop_ = true;
    acceptor_.join();
    for (auto& t : handlers_) t.join();
    ::close(listener_);
  }
  uint16_t port() const { return port_; }
  int cuts() const { return cuts_; }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) handlers_.emplace_back([this, client] { relay(client); });
    }
  }
  void relay(int client) {
    int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(upstream_);
    if (::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      bool cutting = false;  // this connection carries the stream to break
      size_t sent = 0;
      char buf[4096];
      while (!stop_) {
        pollfd p[2] = {{client, POLLIN, 0}, {up, POLLIN, 0}};
        if (::poll(p, 2, 50) < 0) break;
        if (p[0].revents) {
          ssize_t n = ::read(client, buf, sizeof buf);
          if (n <= 0) break;
          if (std::string(buf, static_cast<size_t>(n)).find("/events") != std::string::npos && cuts_ == 0)
            cutting = true;
          if (::write(up, buf, static_cast<size_t>(n)) != n) break;
        }
        if (p[1].revents) {
          ssize_t n = ::read(up, buf, sizeof buf);
          if (n <= 0) break;
          size_t give = static_cast<size_t>(n);
          if (cutting && sent + give > cut_after_) give = cut_after_ - sent;
          if (::write(client, buf, give) != static_cast<ssize_t>(give)) break;
          sent += give;
          if (cutting && sent >= cut_after_) {
            ++cuts_;
            break;
          }
        }
      }
    }
    ::close(up);
    ::close(client);
  }

  uint16_t upstream_;
  size_t cut_after_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_ = false;
  std::atomic<int> cuts_ = 0;
  std::thread acceptor_;
  std::vector<std::thread> handlers_;  // only the acceptor adds; joined after it
};

TEST_F(SessionCli, ABrokenEventStreamIsResumedWithoutPrintingAnythingTwice) {
  std::string sid = create();
  ASSERT_FALSE(sid.empty());
  // The stream breaks after its headers and the first few events.
  CuttingProxy proxy(svc.port(), 400);
  std::vector<std::string> through = {"AIRLOCK_SERVER=http://127.0.0.1:" + std::to_string(proxy.port()),
                                      "AIRLOCK_API_KEY=" + svc.alpha.secret};
  CliRun r = run_cli({"exec", sid, "import time\nfor i in range(8):\n    print('line', i, flush=True)\n"
                                   "    time.sleep(0.2)\n'end'"},
                     through);
  EXPECT_EQ(proxy.cuts(), 1) << "the stream was not broken: the test proves nothing";
  EXPECT_EQ(r.status, 0) << r.err;
  std::string expected;
  for (int i = 0; i < 8; ++i) expected += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(r.out, expected + "'end'\n") << r.err;
}

}  // namespace
}  // namespace airlock::testing
