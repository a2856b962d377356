// Sessions started from the preloaded interpreter (issue 14): the data stack
// is imported before the first call; each session (and each preloaded job) is
// a fork of the same untouched interpreter, so nothing one of them does -
// files, /tmp, processes, RNG state, module globals - reaches another; the
// session's limits hold as for any session. The whole session suite runs on
// preloaded sessions too (SessionSuite.preloaded in tests/CMakeLists.txt).
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pool/prepared.h"
#include "run_helpers.h"
#include "sandbox/cgroup.h"
#include "session_zygote.h"
#include "sessions/session.h"

namespace airlock::testing {
namespace {

class SessionPreloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = sandbox::detect_cgroup_backend();
    ASSERT_TRUE(backend) << backend.error().message();
    cgroups_ = std::move(*backend);
    zygote_ = session_zygote();
    ASSERT_NE(zygote_, nullptr);
  }
  std::unique_ptr<jobs::Session> open(jobs::JobPolicy policy = {}) {
    jobs::Session::Options o{policy, dir_.state(), cgroups_.get(), {}, {}};
    o.zygote = zygote_;
    auto s = jobs::Session::open(o);
    EXPECT_TRUE(s) << s.error().message();
    if (!s) return nullptr;
    EXPECT_EQ((*s)->start_kind(), jobs::StartKind::kPreloaded) << (*s)->start_note();
    return std::move(*s);
  }
  jobs::CallResult call(jobs::Session& s, const std::string& code, const std::string& kind = "python") {
    auto r = s.exec("c" + std::to_string(++calls_), {kind, code, 60'000}, nullptr);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? *r : jobs::CallResult{};
  }
  // A preloaded job from the same interpreter: `code` as `python3 -c`, its stdout.
  std::string preloaded_job(const std::string& code) {
    jobs::PrepareContext ctx{dir_.state(), cgroups_.get(), zygote_};
    auto sb = jobs::prepare_sandbox(jobs::JobPolicy{}, ctx);
    EXPECT_TRUE(sb) << sb.error().message();
    if (!sb) return "";
    EXPECT_TRUE(sb->preloaded.has_value());
    sandbox::Command command;
    command.argv = {"python3", "-c", code};
    command.env = jobs::job_environment(jobs::JobPolicy{});
    command.exec_candidates = {"/usr/bin/python3"};
    auto st = sb->process->start(command);
    EXPECT_TRUE(st) << st.error().message();
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(sb->stdout_r.get(), buf, sizeof(buf))) > 0;) out.append(buf, static_cast<size_t>(n));
    return out;  // the sandbox goes with `sb`: init, cgroup, mounts, directory
  }

  TempDir dir_;
  std::unique_ptr<sandbox::CgroupBackend> cgroups_;
  sandbox::Zygote* zygote_ = nullptr;
  int calls_ = 0;
};

TEST_F(SessionPreloadTest, TheFirstCallFindsPandasAndPyplotImportedAlready) {
  auto s = open();
  ASSERT_TRUE(s);
  // Nothing imported by the call itself: sys is there in any interpreter.
  auto r = call(*s, "import sys\n(sorted(m for m in ('numpy', 'pandas', 'matplotlib.pyplot') if m in sys.modules), "
                    "sys.modules['matplotlib'].get_backend().lower())");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result, "(['matplotlib.pyplot', 'numpy', 'pandas'], 'agg')");
  // And they work: a data frame and a figure.
  r = call(*s, "import pandas as pd, matplotlib.pyplot as plt\ndf = pd.DataFrame({'a': [1, 2, 3]})\n"
               "df.plot()\nint(df['a'].sum())");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result, "6");
  EXPECT_EQ(r.figures_png_base64.size(), 1u);
}

TEST_F(SessionPreloadTest, ARestartedKernelIsPreloadedAgainAndEmpty) {
  auto s = open();
  ASSERT_TRUE(s);
  call(*s, "import pandas\npandas.airlock_mark = 'set by the first kernel'\nx = 1");
  ASSERT_TRUE(s->restart());
  auto r = call(*s, "import sys\n('pandas' in sys.modules, hasattr(sys.modules['pandas'], 'airlock_mark'), "
                    "'x' in globals())");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result, "(True, False, False)") << "a fresh kernel, forked from the untouched keeper";
}

TEST_F(SessionPreloadTest, TwoSessionsAndAPreloadedJobShareNothing) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  // The first session changes everything it can reach: a module global, the
  // RNGs' state (by drawing), its workspace, /tmp, /dev/shm, a process left running.
  const std::string draw = "import random, numpy\n(random.random(), float(numpy.random.random()))";
  auto drawn_a = call(*a, draw);
  ASSERT_EQ(drawn_a.status, "ok") << drawn_a.error;
  auto mark = call(*a, "import pandas, numpy, subprocess\npandas.airlock_mark = 'a'\nnumpy.airlock_mark = 'a'\n"
                       "open('/workspace/a-file', 'w').write('a')\nopen('/tmp/a-file', 'w').write('a')\n"
                       "open('/dev/shm/a-file', 'w').write('a')\n"
                       "subprocess.Popen(['sleep', '300'], start_new_session=True).pid");
  ASSERT_EQ(mark.status, "ok") << mark.error;
  const std::string look =
      "import os, sys\n"
      "(hasattr(sys.modules['pandas'], 'airlock_mark'), hasattr(sys.modules['numpy'], 'airlock_mark'), "
      "os.listdir('/workspace'), [p for p in ('/tmp/a-file', '/dev/shm/a-file') if os.path.exists(p)], "
      "any(b'sleep' in open('/proc/%s/cmdline' % p, 'rb').read() for p in os.listdir('/proc') if p.isdigit()))";
  auto seen = call(*b, look);
  EXPECT_EQ(seen.status, "ok") << seen.error;
  EXPECT_EQ(seen.result, "(False, False, [], [], False)") << "the second session sees the first one's state";
  auto drawn_b = call(*b, draw);
  EXPECT_EQ(drawn_b.status, "ok") << drawn_b.error;
  EXPECT_NE(drawn_a.result, drawn_b.result) << "two sessions drew the same random numbers";
  // A preloaded job forked from the same interpreter after all this.
  std::string job = preloaded_job(
      "import os, sys, random, numpy\n"
      "print((hasattr(sys.modules['pandas'], 'airlock_mark'), os.listdir('/workspace'), "
      "os.path.exists('/tmp/a-file'), (random.random(), float(numpy.random.random()))))");
  ASSERT_FALSE(job.empty());
  EXPECT_EQ(job.rfind("(False, [], False, (", 0), 0u) << job;
  EXPECT_EQ(job.find(drawn_a.result), std::string::npos) << "the job drew the first session's numbers: " << job;
  EXPECT_EQ(job.find(drawn_b.result), std::string::npos) << job;
  EXPECT_NE(a->host_uid(), b->host_uid());
  // And the first session still has its own.
  auto own = call(*a, "import pandas\n(pandas.airlock_mark, open('/tmp/a-file').read())");
  EXPECT_EQ(own.result, "('a', 'a')");
}

TEST_F(SessionPreloadTest, TheMemoryLimitHoldsAndTheSessionGoesOn) {
  jobs::JobPolicy policy;
  policy.memory_bytes = 256ull << 20;
  auto s = open(policy);
  ASSERT_TRUE(s);
  auto r = call(*s, "b = bytearray(600 << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\nlen(b)");
  EXPECT_EQ(r.status, "kernel_died") << r.result << r.error;
  r = call(*s, "import sys\n'pandas' in sys.modules");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result, "True");
}

TEST_F(SessionPreloadTest, ThePidsLimitHolds) {
  jobs::JobPolicy policy;
  policy.pids = 24;
  auto s = open(policy);
  ASSERT_TRUE(s);
  auto r = call(*s,
                "import subprocess\nprocs, refused = [], None\n"
                "for i in range(60):\n"
                "    try:\n"
                "        procs.append(subprocess.Popen(['sleep', '30']))\n"
                "    except OSError as e:\n"
                "        refused = e.errno\n"
                "        break\n"
                "for p in procs:\n    p.kill()\n    p.wait()\n"
                "(len(procs) < 24, refused)");
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.result, "(True, 11)") << "the 24-pid limit refuses a fork with EAGAIN";
}

}  // namespace
}  // namespace airlock::testing
