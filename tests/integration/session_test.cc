// Sessions (engine of issue 6): one sandbox, a Python kernel whose state
// persists across calls; output streams while a call runs; shell calls keep
// their cwd and environment; figures come back as PNG, data frames as HTML; a
// runaway call is interrupted (or its kernel restarted) without losing the
// session; a dying kernel is replaced; closing leaves nothing, not even a
// process the code left running.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <thread>

#include "sessions/session.h"
#include "cli/session_args.h"
#include "sessions/session_kernel.h"
#include "run_helpers.h"
#include "sandbox/cgroup.h"
#include "session_zygote.h"

namespace airlock::testing {
namespace {

using Clock = std::chrono::steady_clock;


bool pid_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// The host pid of a process of `uid` whose command line contains `word`,
// looking for up to `wait_ms`; 0 if none.
pid_t host_pid_of(uid_t uid, const std::string& word, int wait_ms = 0) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  do {
    for (pid_t pid : processes_of_uid(uid)) {
      std::string cmd = read_text("/proc/" + std::to_string(pid) + "/cmdline");
      for (char& c : cmd)
        if (c == '\0') c = ' ';
      if (cmd.find(word) != std::string::npos) return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < until);
  return 0;
}

struct Chunk {
  bool is_stderr;
  std::string text;
  Clock::time_point at;
};

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = sandbox::detect_cgroup_backend();
    ASSERT_TRUE(backend) << backend.error().message();
    cgroups_ = std::move(*backend);
    auto s = jobs::Session::open(options());
    ASSERT_TRUE(s) << s.error().message();
    session_ = std::move(*s);
    // SESSION_START=preloaded: every test of the suite on a preloaded session.
    EXPECT_EQ(session_->start_kind(),
              sessions_preloaded() ? jobs::StartKind::kPreloaded : jobs::StartKind::kCold)
        << session_->start_note();
  }
  jobs::Session::Options options() {
    jobs::Session::Options o{jobs::JobPolicy{}, dir_.state(), cgroups_.get(), {}, {}};
    if (sessions_preloaded()) o.zygote = session_zygote();
    return o;
  }
  jobs::CallResult call(const std::string& code, int timeout_ms = 30'000, const std::string& kind = "python") {
    chunks_.clear();
    auto sink = [this](bool is_stderr, std::string_view text) {
      chunks_.push_back({is_stderr, std::string(text), Clock::now()});
    };
    auto r = session_->exec("exec-" + std::to_string(++calls_), {kind, code, timeout_ms}, sink);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    if (r) {
      EXPECT_EQ(r->id, "exec-" + std::to_string(calls_)) << "the caller's id comes back";
    }
    return r ? *r : jobs::CallResult{};
  }
  jobs::CallResult shell(const std::string& code, int timeout_ms = 30'000) { return call(code, timeout_ms, "shell"); }
  // Runs `action` on another thread `after_ms` into the next call.
  std::jthread later(int after_ms, std::function<void()> action) {
    return std::jthread([after_ms, action = std::move(action)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(after_ms));
      action();
    });
  }

  TempDir dir_;
  std::unique_ptr<sandbox::CgroupBackend> cgroups_;
  std::unique_ptr<jobs::Session> session_;
  std::vector<Chunk> chunks_;
  int calls_ = 0;
};

TEST_F(SessionTest, StatePersistsAcrossTurnsAndFiguresComeBackAsPng) {
  auto load = call("import io, pandas as pd\n"
                   "df = pd.read_csv(io.StringIO('region,revenue\\nEast,10\\nWest,5\\nEast,7\\n'))\n"
                   "print('rows', len(df))\ndf");
  EXPECT_EQ(load.status, "ok") << load.error;
  EXPECT_EQ(load.stdout_text, "rows 3\n");
  EXPECT_NE(load.result.find("East"), std::string::npos) << load.result;
  EXPECT_NE(load.html.find("<table"), std::string::npos);

  auto other = call("unrelated = 1");
  EXPECT_EQ(other.status, "ok") << other.error;

  auto transform = call("total = df.groupby('region')['revenue'].sum()\nint(total['East'])");
  EXPECT_EQ(transform.status, "ok") << transform.error;
  EXPECT_EQ(transform.result, "17") << "call 3 uses the frame call 1 made";

  auto chart = call("import matplotlib.pyplot as plt\ntotal.plot.bar()\nplt.title('by region')\nNone");
  EXPECT_EQ(chart.status, "ok") << chart.error;
  ASSERT_EQ(chart.figures_png_base64.size(), 1u);
  EXPECT_EQ(airlock::cli::decode_base64(chart.figures_png_base64[0]).value_or("").substr(0, 8), "\x89PNG\r\n\x1a\n");
  EXPECT_TRUE(call("len(plt.get_fignums())").result == "0") << "figures are closed once returned";
}

TEST_F(SessionTest, AnErrorReturnsItsTracebackAndTheStateSurvives) {
  call("x = 41");
  auto err = call("y = 1\nx / 0");
  EXPECT_EQ(err.status, "error");
  EXPECT_NE(err.error.find("ZeroDivisionError"), std::string::npos) << err.error;
  EXPECT_NE(err.error.find("File \"<cell>\", line 2"), std::string::npos) << err.error;
  EXPECT_EQ(err.error.find("airlock"), std::string::npos) << "the kernel's own frames are trimmed";
  EXPECT_EQ(call("x + y").result, "42");
  auto exit = call("import sys; sys.exit(3)");
  EXPECT_EQ(exit.status, "error") << "a call cannot end the kernel";
  EXPECT_EQ(call("x").result, "41");
}

TEST_F(SessionTest, OutputStreamsWhileTheCallRuns) {
  auto r = call("import os, sys, time\n"
                "print('first')\n"
                "time.sleep(0.8)\n"
                "print('partial', end='')\n"
                "time.sleep(0.8)\n"
                "print(' line', file=sys.stderr)\n"
                "os.system('echo from-a-subprocess')\n"
                "print('last')");
  auto ended = Clock::now();
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.stdout_text, "first\npartialfrom-a-subprocess\nlast\n");
  EXPECT_EQ(r.stderr_text, " line\n");
  auto arrival = [&](const std::string& text) {
    for (const auto& c : chunks_)
      if (c.text.find(text) != std::string::npos) return c.at;
    ADD_FAILURE() << "never delivered: " << text;
    return ended;
  };
  using std::chrono::milliseconds;
  EXPECT_GT(ended - arrival("first"), milliseconds(1200)) << "a line arrives as it is printed";
  EXPECT_GT(ended - arrival("partial"), milliseconds(500)) << "so does text without a newline";
  EXPECT_LT(arrival("partial") - arrival("first"), milliseconds(1100));
  // stderr arrives as stderr (in one chunk or several: a chunk is whatever one
  // read of the pipe got; it failed once on a quiet machine when it came split).
  std::string streamed_stderr;
  for (const auto& c : chunks_)
    if (c.is_stderr) streamed_stderr += c.text;
  EXPECT_EQ(streamed_stderr, " line\n");
}

TEST_F(SessionTest, OutputBeyondTheCapIsCutWithANote) {
  auto r = call("import sys\nfor _ in range(3):\n    sys.stdout.write('x' * (1 << 20))\n'done'");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result, "'done'");
  EXPECT_LT(r.stdout_text.size(), (1u << 20) + 200);
  EXPECT_NE(r.stdout_text.find("[airlock: output cut at 1048576 bytes; 2097152 more bytes"), std::string::npos);
  size_t streamed = 0;
  for (const auto& c : chunks_) streamed += c.text.size();
  EXPECT_EQ(streamed, 3u << 20) << "the sink gets all of it";
}

TEST_F(SessionTest, ShellCallsKeepTheirWorkingDirectoryAndEnvironment) {
  auto first = shell("mkdir -p data && cd data\nexport GREETING='hello world'\nPLAIN=1\necho here");
  EXPECT_EQ(first.status, "ok") << first.error << first.stderr_text;
  EXPECT_EQ(first.stdout_text, "here\n");
  EXPECT_EQ(first.cwd, "/workspace/data");
  auto second = shell("pwd; echo \"$GREETING\"; echo \"plain=$PLAIN\"");
  EXPECT_EQ(second.stdout_text, "/workspace/data\nhello world\nplain=\n") << "exported variables persist, others do not";
  auto unset = shell("unset GREETING; cd ..");
  EXPECT_EQ(unset.cwd, "/workspace");
  EXPECT_EQ(shell("echo \"[$GREETING]\"").stdout_text, "[]\n");
  auto failing = shell("echo oops >&2; false");
  EXPECT_EQ(failing.status, "error");
  EXPECT_EQ(failing.exit_code, 1);
  EXPECT_EQ(failing.stderr_text, "oops\n");
  auto exited = shell("exit 7");
  EXPECT_EQ(exited.status, "error");
  EXPECT_EQ(exited.exit_code, 7);
  EXPECT_EQ(call("import os\nos.getcwd()").result, "'/workspace'") << "Python's cwd is its own";
}

TEST_F(SessionTest, AShellCommandStreamsItsOutput) {
  auto r = shell("echo one; sleep 1; echo two");
  auto ended = Clock::now();
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.stdout_text, "one\ntwo\n");
  ASSERT_FALSE(chunks_.empty());
  EXPECT_EQ(chunks_[0].text, "one\n");
  EXPECT_GT(ended - chunks_[0].at, std::chrono::milliseconds(700));
}

TEST_F(SessionTest, ARunawayCallIsInterruptedAtItsTimeoutAndTheSessionGoesOn) {
  call("n = 5");
  auto spin = call("while True:\n    n += 1", 500);
  EXPECT_EQ(spin.status, "timed_out") << spin.error;
  EXPECT_NE(spin.error.find("KeyboardInterrupt"), std::string::npos);
  auto after = call("n > 5");
  EXPECT_EQ(after.status, "ok");
  EXPECT_EQ(after.result, "True") << "the state is kept";
  EXPECT_TRUE(session_->alive());
}

TEST_F(SessionTest, InterruptStopsABusyLoopASleepAndAShellCommand) {
  call("n = 0");
  {
    auto t = later(500, [this] { ASSERT_TRUE(session_->interrupt()); });
    auto spin = call("while True:\n    n += 1");
    EXPECT_EQ(spin.status, "interrupted") << spin.error;
    EXPECT_NE(spin.error.find("KeyboardInterrupt"), std::string::npos);
  }
  {
    auto t = later(500, [this] { ASSERT_TRUE(session_->interrupt()); });
    auto start = Clock::now();
    auto nap = call("import time\ntime.sleep(60)");
    EXPECT_EQ(nap.status, "interrupted") << nap.error;
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  }
  {
    auto t = later(500, [this] { ASSERT_TRUE(session_->interrupt()); });
    auto cmd = shell("trap '' INT; sleep 300 & sleep 301; echo not-reached");
    EXPECT_EQ(cmd.status, "interrupted") << cmd.error;
    EXPECT_EQ(cmd.stdout_text.find("not-reached"), std::string::npos);
    EXPECT_EQ(host_pid_of(session_->host_uid(), "sleep 30"), 0) << "the command's whole process group is killed";
  }
  EXPECT_TRUE(session_->interrupt()) << "idle: nothing happens";
  auto after = call("n > 0");
  EXPECT_EQ(after.result, "True") << "the state is kept; " << after.status << ": " << after.error;
  EXPECT_TRUE(session_->alive());
}

TEST_F(SessionTest, ACallThatIgnoresInterruptsIsEndedByARestartAtItsTimeout) {
  call("kept = 1");
  auto start = Clock::now();
  auto stuck = call("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", 500);
  EXPECT_EQ(stuck.status, "timed_out") << stuck.error;
  EXPECT_NE(stuck.error.find("restarted"), std::string::npos) << stuck.error;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(8));
  auto next = call("'kept' in globals(), 6 * 7");
  EXPECT_EQ(next.status, "ok") << next.error;
  EXPECT_EQ(next.result, "(False, 42)") << "a fresh kernel answers";
}

TEST_F(SessionTest, RestartEmptiesTheNamespaceAndKeepsTheFiles) {
  call("x = 1\nopen('/workspace/kept.txt', 'w').write('still here')");
  shell("cd /tmp; export FOO=bar");
  ASSERT_TRUE(session_->restart());
  auto after = call("'x' in globals(), open('/workspace/kept.txt').read()");
  EXPECT_EQ(after.status, "ok") << after.error;
  EXPECT_EQ(after.result, "(False, 'still here')");
  EXPECT_EQ(shell("pwd; echo \"[$FOO]\"").stdout_text, "/workspace\n[]\n") << "the shell starts over too";

  // A call running in C code (a blocking sleep with SIGINT ignored) ends as restarted.
  call("y = 2");
  auto t = later(500, [this] { ASSERT_TRUE(session_->restart()); });
  auto stuck = call("import ctypes, signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                    "ctypes.CDLL(None).sleep(120)");
  EXPECT_EQ(stuck.status, "restarted") << stuck.error;
  EXPECT_EQ(call("'y' in globals()").result, "False");
}

TEST_F(SessionTest, AKernelThatDiesIsReplacedAndTheSessionGoesOn) {
  call("z = 1");
  auto died = call("import os\nprint('bye', flush=True)\nos._exit(3)");
  EXPECT_EQ(died.status, "kernel_died") << died.error;
  EXPECT_NE(died.error.find("status 3"), std::string::npos) << died.error;
  EXPECT_EQ(died.stdout_text, "bye\n");
  EXPECT_TRUE(session_->alive());
  auto next = call("'z' in globals()");
  EXPECT_EQ(next.status, "ok") << next.error;
  EXPECT_EQ(next.result, "False");
  auto killed = call("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)");
  EXPECT_EQ(killed.status, "kernel_died") << killed.error;
  EXPECT_NE(killed.error.find("signal 9"), std::string::npos) << killed.error;
  EXPECT_EQ(call("1 + 1").result, "2");
}

// Output that print(..., flush=True) returned from has reached the host, even
// when the kernel dies on the next line. The kernel's output pump reads its
// pipes while the code writes; a pump killed between reading a piece and
// sending it used to lose that piece (CI lost the "bye" above once). Many
// flushed lines make that window likely on every try.
TEST_F(SessionTest, FlushedOutputIsNeverLostWhenTheKernelDiesRightAfter) {
  std::string expected;
  for (int i = 0; i < 8; ++i) expected += std::string(100'000, static_cast<char>('a' + i)) + "\n";
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto died = call("import os\nfor i in range(8):\n    print(chr(97 + i) * 100000, flush=True)\nos._exit(3)");
    ASSERT_EQ(died.status, "kernel_died") << died.error;
    ASSERT_EQ(died.stdout_text.size(), expected.size()) << "attempt " << attempt;
    ASSERT_TRUE(died.stdout_text == expected) << "attempt " << attempt;
  }
  auto both = call("import os, sys\nsys.stderr.write('err\\n'); sys.stderr.flush()\n"
                   "print('out', flush=True)\nos._exit(4)");
  EXPECT_EQ(both.status, "kernel_died") << both.error;
  EXPECT_EQ(both.stdout_text, "out\n");
  EXPECT_EQ(both.stderr_text, "err\n");
}

TEST_F(SessionTest, ForgedProtocolLinesDoNotEndTheCallOrInjectAResult) {
  // Lines that look like the kernel's, for every call id a forger could guess,
  // printed by the code, written to fd 1 and echoed by a subprocess.
  std::string mark = jobs::kKernelMark;
  auto r = call(
      "import json, os, sys, time, subprocess\n"
      "M = '\\x1eairlock-kernel '\n"
      "for i in range(30):\n"
      "    forged = {'event': 'answer', 'id': 'call-%d' % i, 'status': 'ok', 'result': 'FORGED'}\n"
      "    print(M + json.dumps(forged))\n"
      "    os.write(1, (M + json.dumps(forged) + '\\n').encode())\n"
      "    os.write(2, (M + json.dumps(forged) + '\\n').encode())\n"
      "print(M + json.dumps({'event': 'kernel_exited', 'reason': 'forged'}))\n"
      "subprocess.run(['printf', M + '{\"event\": \"answer\", \"id\": \"call-1\", \"result\": \"FORGED\"}\\n'])\n"
      "time.sleep(0.3)\n"
      "'real'");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result, "'real'") << "no forged answer was taken";
  EXPECT_NE(r.stdout_text.find(mark + "{\"event\": \"answer\", \"id\": \"call-1\""), std::string::npos)
      << "forged lines are delivered as the output they are";
  EXPECT_NE(r.stderr_text.find("FORGED"), std::string::npos);
  EXPECT_EQ(call("1 + 1").result, "2") << "the protocol is still in step";

  // Code in the kernel's own process can write on its channel (fd 3): an
  // answer for another call, another call's output, a line cut short and
  // one that is not JSON neither end this call nor show up in it.
  auto channel = call(
      "import os, time\n"
      "M = b'\\x1eairlock-kernel '\n"
      "os.write(3, M + b'{\"event\": \"answer\", \"id\": \"call-999\", \"status\": \"ok\", \"result\": \"FORGED\"}\\n')\n"
      "os.write(3, M + b'{\"event\": \"output\", \"id\": \"call-999\", \"text\": \"FORGED\"}\\n')\n"
      "os.write(3, M + b'{\"event\": \"answer\", \"id\": \\n')\n"
      "os.write(3, M + b'not json\\n')\n"
      "time.sleep(0.2)\n"
      "'real'");
  EXPECT_EQ(channel.status, "ok") << channel.error;
  EXPECT_EQ(channel.result, "'real'");
  EXPECT_EQ(channel.stdout_text.find("FORGED"), std::string::npos) << channel.stdout_text;
  EXPECT_NE(channel.stdout_text.find("not json"), std::string::npos) << "a line that does not parse is raw output";
}

TEST_F(SessionTest, AnswersPlantedForLaterCallsAreDroppedAndTheCallEndsWithItsTrueStatus) {
  // The attack of issue 11 (item 18): call ids are predictable (call-1,
  // call-2, ...), so call 1 leaves a thread and a child process that write an
  // answer for call 2 on the kernel's channel (fd 3) once call 2 runs, tagged
  // with the one nonce they could know (call 1's own). Call 2 sleeps past its
  // timeout: it must end timed_out, with no forged value, the lines counted.
  auto plant = call(
      "import json, os, subprocess, sys, threading, time\n"
      "M = b'\\x1eairlock-kernel '\n"
      "kernel = sys.modules['__main__'].__dict__\n"
      "old = (kernel.get('_current') or [None, None])[-1]\n"
      "def forged(i):\n"
      "    return M + json.dumps({'event': 'answer', 'id': 'call-%d' % i, 'tag': old, 'status': 'ok',\n"
      "                           'result': 'FORGED', 'ms': 0}).encode() + b'\\n'\n"
      "def later():\n"
      "    time.sleep(0.3)\n"
      "    for i in range(1, 10): os.write(3, forged(i))\n"
      "threading.Thread(target=later, daemon=True).start()\n"
      "w = os.dup(3)\n"
      "os.set_inheritable(w, True)\n"
      "child = 'import os, time\\ntime.sleep(0.6)\\n' + ''.join(\n"
      "    'os.write(%d, %r)\\n' % (w, forged(i)) for i in range(1, 10))\n"
      "subprocess.Popen([sys.executable, '-c', child], pass_fds=(w,), start_new_session=True)\n"
      "os.close(w)\n"
      "old is not None");
  ASSERT_EQ(plant.status, "ok") << plant.error;
  EXPECT_EQ(plant.result, "True") << "the code could read its own call's nonce (it runs in the kernel)";

  auto victim = call("import time\ntime.sleep(3)\n'true value'", /*timeout_ms=*/1000);
  EXPECT_EQ(victim.status, "timed_out") << "a planted answer ended the call: " << victim.result;
  EXPECT_EQ(victim.result.find("FORGED"), std::string::npos) << victim.result;
  EXPECT_GE(victim.dropped_lines, 18u) << "each planted line (9 from the thread, 9 from the child) is counted";
  EXPECT_GE(victim.ms, 1000) << "it ran to its timeout";
  EXPECT_EQ(call("1 + 1").result, "2") << "the protocol is still in step";
}

TEST_F(SessionTest, AForgedKernelExitDoesNotEndTheCall) {
  // kernel_exited is the keeper's line; the kernel's code cannot know the
  // keeper's secret (it is not in the kernel's memory, and the keeper is not
  // dumpable, so /proc/KEEPER/mem cannot be read).
  auto r = call(
      "import os, time\n"
      "M = b'\\x1eairlock-kernel '\n"
      "os.write(3, M + b'{\"event\": \"kernel_exited\", \"reason\": \"forged\"}\\n')\n"
      "keeper = os.getppid()\n"
      "try:\n"
      "    open('/proc/%d/mem' % keeper, 'rb')\n"
      "    readable = 'readable'\n"
      "except OSError:\n"
      "    readable = 'refused'\n"
      "time.sleep(0.3)\n"
      "readable");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result, "'refused'") << "the keeper's memory is out of the code's reach";
  EXPECT_EQ(r.dropped_lines, 1u);
}

TEST_F(SessionTest, AKernelThatIgnoresTheCapsIsCutByTheHost) {
  // The code runs in the kernel and can write on its channel with the
  // running call's own nonce: a 30 MB answer line (dropped unread: over the
  // line limit) and 3 MB of value parts (kept up to the value cap).
  auto r = call(
      "import json, os, sys\n"
      "cid, nonce = sys.modules['__main__'].__dict__['_current']\n"
      "M = b'\\x1eairlock-kernel '\n"
      "line = {'event': 'answer', 'id': cid, 'tag': nonce, 'status': 'ok', 'result': 'x' * (30 << 20)}\n"
      "os.write(3, M + json.dumps(line).encode() + b'\\n')\n"
      "part = {'event': 'part', 'id': cid, 'tag': nonce, 'field': 'value', 'text': 'p' * 30000}\n"
      "for i in range(100):\n"
      "    os.write(3, M + json.dumps(part).encode() + b'\\n')\n"
      "'real'");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result.size(), jobs::CallCaps{}.value_bytes) << "the host cut the value at its cap";
  EXPECT_EQ(r.result.substr(0, 4), "pppp");
  EXPECT_TRUE(r.truncated.value);
  EXPECT_EQ(r.dropped_lines, 1u) << "the 30 MB line";
  EXPECT_EQ(call("1 + 1").result, "2") << "the protocol is still in step";
}

TEST_F(SessionTest, UsageIsMeasuredPerCall) {
  auto busy = call("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4:\n    pass\n"
                   "b = bytearray(64 << 20)");
  EXPECT_EQ(busy.status, "ok") << busy.error;
  EXPECT_GE(busy.usage.cpu_ms, 350u);
  EXPECT_LT(busy.usage.cpu_ms, 5000u);
  EXPECT_GE(busy.usage.peak_memory_bytes, 64ull << 20);
  auto idle = call("import time\ntime.sleep(0.2)");
  EXPECT_LT(idle.usage.cpu_ms, 150u) << "cpu is counted per call, not since the start";
  EXPECT_GE(idle.ms, 200);
}

TEST_F(SessionTest, InputsAreAdmittedAndTheWorkspaceIsFilledBeforeTheKernelStarts) {
  std::string input = dir_.sub("sales.csv");
  write_text(input, "region,revenue\nEast,10\n");
  auto o = options();
  o.inputs = {input};
  uid_t filled_uid = 0;
  o.fill_workspace = [&](int fd, uid_t uid, gid_t gid) -> Status {
    filled_uid = uid;
    int f = ::openat(fd, "restored.txt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (f < 0) return fail_errno("create restored.txt");
    bool ok = ::write(f, "from a snapshot", 15) == 15 && ::fchown(f, uid, gid) == 0;
    ::close(f);
    return ok ? Status{} : fail_errno("fill restored.txt");
  };
  auto s = jobs::Session::open(o);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(filled_uid, (*s)->sandbox_uid());
  ASSERT_EQ((*s)->inputs().size(), 1u);
  auto r = (*s)->exec("look",
                      {"python", "import os\n(open('/inputs/sales.csv').read(), open('restored.txt').read(), "
                                 "os.access('/inputs/sales.csv', os.W_OK), os.stat('restored.txt').st_uid)"},
                      nullptr);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->status, "ok") << r->error;
  EXPECT_EQ(r->result, "('region,revenue\\nEast,10\\n', 'from a snapshot', False, 1000)");

  auto bad = options();
  bad.inputs = {dir_.sub("missing.csv")};
  auto refused = jobs::Session::open(bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::kRefused) << refused.error().what;
  EXPECT_NE(refused.error().what.find("input rejected"), std::string::npos) << refused.error().what;
}

TEST_F(SessionTest, ClosingRemovesEverythingEvenProcessesTheCodeLeftRunning) {
  auto bg = call("import os, subprocess\np = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
                 "q = subprocess.Popen(['sleep', '301'])\nNone");
  EXPECT_EQ(bg.status, "ok") << bg.error;
  std::string id = session_->id();
  uid_t uid = session_->host_uid();
  pid_t detached = host_pid_of(uid, "sleep 300", 2000), child = host_pid_of(uid, "sleep 301", 2000);
  ASSERT_NE(detached, 0);
  ASSERT_NE(child, 0);
  for (pid_t pid : {detached, child})
    EXPECT_NE(read_text("/proc/" + std::to_string(pid) + "/cgroup").find(id), std::string::npos)
        << "a process left running stays in the session's cgroup";
  EXPECT_EQ(call("1").result, "1") << "a later call does not wait for them";
  session_.reset();
  EXPECT_TRUE(no_processes_of_uid(uid, 3000));
  EXPECT_FALSE(pid_exists(detached));
  EXPECT_FALSE(pid_exists(child));
  EXPECT_TRUE(cgroups_named(id).empty());
}

TEST_F(SessionTest, ASandboxKilledFromOutsideEndsTheCallAsSandboxDied) {
  uid_t uid = session_->host_uid();
  auto t = later(500, [uid] {
    for (uid_t u : {uid - 1, uid})
      for (pid_t pid : processes_of_uid(u)) ::kill(pid, SIGKILL);
  });
  auto r = call("import time\ntime.sleep(60)");
  EXPECT_EQ(r.status, "sandbox_died") << r.error;
  EXPECT_FALSE(session_->alive());
  auto next = call("1");
  EXPECT_EQ(next.status, "sandbox_died");
  EXPECT_FALSE(session_->restart());
}

TEST_F(SessionTest, ASessionDoesNotSeeAnotherSession) {
  auto other = jobs::Session::open(options());
  ASSERT_TRUE(other) << other.error().message();
  call("secret = 'only-in-the-first'\nopen('/workspace/mine', 'w').write('1')");
  auto look = (*other)->exec("look",
                             {"python", "import os\n(os.listdir('/workspace'), 'secret' in globals(), "
                                        "sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"},
                             nullptr);
  ASSERT_TRUE(look);
  EXPECT_EQ(look->status, "ok") << look->error;
  EXPECT_EQ(look->result.substr(0, 11), "([], False,") << look->result;
  EXPECT_NE((*other)->host_uid(), session_->host_uid());
}

}  // namespace
}  // namespace airlock::testing
