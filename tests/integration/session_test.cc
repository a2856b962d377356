// Sessions (engine groundwork of issue 6): one sandbox, a Python kernel whose
// state persists across calls; figures come back as PNG, data frames as HTML;
// a runaway call is interrupted without losing the session; closing it
// leaves nothing, not even a process the code left running.
#include <gtest/gtest.h>

#include <memory>

#include "jobs/session.h"
#include "run_helpers.h"
#include "sandbox/cgroup.h"

namespace airlock::testing {
namespace {

std::string b64decode(const std::string& in) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    auto pos = chars.find(c);
    if (pos == std::string::npos) break;
    val = (val << 6) + static_cast<int>(pos);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = sandbox::detect_cgroup_backend();
    ASSERT_TRUE(backend) << backend.error().message();
    cgroups_ = std::move(*backend);
    auto s = jobs::Session::open({jobs::JobPolicy{}, dir_.state(), cgroups_.get()});
    ASSERT_TRUE(s) << s.error().message();
    session_ = std::move(*s);
  }
  jobs::CallResult call(const std::string& code, int timeout_ms = 30'000) {
    auto r = session_->exec(code, timeout_ms);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? *r : jobs::CallResult{};
  }
  TempDir dir_;
  std::unique_ptr<sandbox::CgroupBackend> cgroups_;
  std::unique_ptr<jobs::Session> session_;
};

TEST_F(SessionTest, StatePersistsAcrossTurnsAndFiguresComeBackAsPng) {
  auto load = call("import io, pandas as pd\n"
                   "df = pd.read_csv(io.StringIO('region,revenue\\nEast,10\\nWest,5\\nEast,7\\n'))\n"
                   "print('rows', len(df))\ndf");
  EXPECT_EQ(load.status, "ok") << load.error;
  EXPECT_EQ(load.stdout_text, "rows 3\n");
  EXPECT_NE(load.result.find("East"), std::string::npos) << load.result;
  EXPECT_NE(load.html.find("<table"), std::string::npos);

  auto transform = call("total = df.groupby('region')['revenue'].sum()\nint(total['East'])");
  EXPECT_EQ(transform.status, "ok") << transform.error;
  EXPECT_EQ(transform.result, "17");

  auto chart = call("import matplotlib.pyplot as plt\ntotal.plot.bar()\nplt.title('by region')\nNone");
  EXPECT_EQ(chart.status, "ok") << chart.error;
  ASSERT_EQ(chart.figures_png_base64.size(), 1u);
  EXPECT_EQ(b64decode(chart.figures_png_base64[0]).substr(0, 8), "\x89PNG\r\n\x1a\n");
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

TEST_F(SessionTest, ARunawayCallIsInterruptedAtItsTimeoutAndTheSessionGoesOn) {
  call("n = 5");
  auto spin = call("while True:\n    n += 1", 500);
  EXPECT_EQ(spin.status, "timed_out") << spin.error;
  EXPECT_NE(spin.error.find("KeyboardInterrupt"), std::string::npos);
  auto after = call("n > 5");
  EXPECT_EQ(after.status, "ok");
  EXPECT_EQ(after.result, "True");
  EXPECT_TRUE(session_->alive());
}

TEST_F(SessionTest, ClosingRemovesEverythingEvenProcessesTheCodeLeftRunning) {
  auto bg = call("import subprocess\np = subprocess.Popen(['sleep', '300'], start_new_session=True)\np.pid > 0");
  EXPECT_EQ(bg.result, "True") << bg.error;
  std::string id = session_->id();
  uid_t uid = session_->host_uid();
  EXPECT_FALSE(processes_of_uid(uid).empty());
  session_.reset();
  EXPECT_TRUE(no_processes_of_uid(uid, 3000));
  EXPECT_TRUE(cgroups_named(id).empty());
}

TEST_F(SessionTest, ASessionDoesNotSeeAnotherSession) {
  auto other = jobs::Session::open({jobs::JobPolicy{}, dir_.state(), cgroups_.get()});
  ASSERT_TRUE(other) << other.error().message();
  call("secret = 'only-in-the-first'\nopen('/workspace/mine', 'w').write('1')");
  auto look = (*other)->exec("import os\n(os.listdir('/workspace'), 'secret' in globals(), "
                             "sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))",
                             30'000);
  ASSERT_TRUE(look);
  EXPECT_EQ(look->status, "ok") << look->error;
  EXPECT_EQ(look->result.substr(0, 11), "([], False,") << look->result;
  EXPECT_NE((*other)->host_uid(), session_->host_uid());
}

}  // namespace
}  // namespace airlock::testing
