// The selftest's pure half: what it concludes from job views and probe
// lines, its exit status, and a report whose hostile text stays inert.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "selftest/judge.h"
#include "selftest/probes.h"
#include "selftest/report.h"

namespace airlock::selftest {
namespace {

using json = nlohmann::json;

json view(const std::string& outcome, const std::string& out, json extra = json::object()) {
  json rec = {{"id", "rec1"}, {"outcome", outcome}, {"stdout", {{"text", out}, {"encoding", "utf-8"}}}};
  for (auto& [k, v] : extra.items()) rec[k] = v;
  return {{"id", "job1"}, {"state", "finished"}, {"outcome", outcome}, {"record", rec}};
}

TEST(SelftestJudge, ProbesHoldOnlyWhenEveryOneAnsweredBlockedOrClean) {
  std::string out = "noise\nPROBE shadow BLOCKED /etc/shadow Permission denied\nPROBE env CLEAN 7 variables\n";
  EXPECT_TRUE(judge_probes(view("succeeded", out), {"shadow", "env"}).held);
  auto missing = judge_probes(view("succeeded", out), {"shadow", "env", "ssh_keys"});
  EXPECT_FALSE(missing.held);
  EXPECT_NE(missing.why.find("ssh_keys: no answer"), std::string::npos) << missing.why;
  auto open = judge_probes(view("succeeded", out + "PROBE ssh_keys OPEN listed /root/.ssh\n"), {"shadow", "ssh_keys"});
  EXPECT_FALSE(open.held);
  EXPECT_NE(open.why.find("ssh_keys OPEN"), std::string::npos) << open.why;
  // A probe job that did not end as it should proves nothing, whatever it printed.
  auto died = judge_probes(view("memory_limit", out), {"shadow"});
  EXPECT_FALSE(died.held);
  EXPECT_NE(died.why.find("memory_limit"), std::string::npos) << died.why;
}

TEST(SelftestJudge, ReadsBase64Stdout) {
  json v = view("succeeded", "");
  v["record"]["stdout"] = {{"text", base64_encode("PROBE x BLOCKED \x01\n")}, {"encoding", "base64"}};
  EXPECT_TRUE(judge_probes(v, {"x"}).held);
}

TEST(SelftestJudge, AValidJobNeedsItsChecksPassedAndOutputsAccepted) {
  json good = view("succeeded", "", {{"checks", {{{"label", "sum"}, {"passed", true}}}},
                                     {"outputs", {{{"name", "s.csv"}, {"verdict", "accepted"}}}}});
  EXPECT_TRUE(judge_valid_job(good).held);
  json no_checks = view("succeeded", "", {{"outputs", {{{"name", "s.csv"}, {"verdict", "accepted"}}}}});
  EXPECT_FALSE(judge_valid_job(no_checks).held);
  json failed = view("output_rejected", "", {{"checks", {{{"label", "sum"}, {"passed", false}, {"detail", "off"}}}}});
  auto j = judge_valid_job(failed);
  EXPECT_FALSE(j.held);
  EXPECT_NE(j.why.find("check sum failed: off"), std::string::npos) << j.why;
}

TEST(SelftestJudge, ARejectedOutputMustBeRejectedByACheck) {
  json rejected = view("output_rejected", "", {{"checks", {{{"label", "sum"}, {"passed", false}}}}});
  EXPECT_TRUE(judge_rejected_output(rejected).held);
  json passed = view("succeeded", "", {{"checks", {{{"label", "sum"}, {"passed", true}}}}});
  auto j = judge_rejected_output(passed);
  EXPECT_FALSE(j.held);
  EXPECT_NE(j.why.find("was not rejected"), std::string::npos);
  // Rejected, but for another reason (the output policy), not the check.
  EXPECT_FALSE(judge_rejected_output(view("output_rejected", "", {{"checks", {{{"label", "sum"}, {"passed", true}}}}})).held);
}

TEST(SelftestJudge, CancelCleanupAndRefusals) {
  EXPECT_TRUE(judge_cancelled(view("cancelled", "")).held);
  EXPECT_FALSE(judge_cancelled(view("succeeded", "")).held);
  EXPECT_TRUE(judge_record_cleanup(view("succeeded", "", {{"cleanup", {{"ok", true}, {"removed", {"cgroup"}}, {"failed", json::array()}}}})).held);
  EXPECT_FALSE(judge_record_cleanup(view("succeeded", "", {{"cleanup", {{"ok", false}, {"failed", {"mounts"}}}}})).held);
  EXPECT_FALSE(judge_record_cleanup(view("succeeded", "")).held);
  auto r = judge_refused(404, R"({"error":{"code":"not_found","message":"job x"}})", {404});
  EXPECT_TRUE(r.held);
  EXPECT_EQ(r.answer, "HTTP 404 not_found: job x");
  EXPECT_FALSE(judge_refused(200, "{}", {404}).held);
}

TEST(SelftestReport, ExitStatusIsNonZeroWhenAnythingBrokeOrNothingRan) {
  Report r;
  EXPECT_EQ(exit_status(r), 1);
  r.items.push_back({"a", "", "", Verdict::kHeld, "", {}});
  r.items.push_back({"b", "", "", Verdict::kSkipped, "no key", {}});
  EXPECT_EQ(exit_status(r), 0);
  r.items.push_back({"c", "", "", Verdict::kBroken, "x", {}});
  EXPECT_EQ(exit_status(r), 1);
  json j = to_json(r);
  EXPECT_FALSE(j["passed"].get<bool>());
  EXPECT_EQ(j["items"][2]["verdict"], "broken");
}

TEST(SelftestReport, HostileTextIsInertInHtmlAndOnTheTerminal) {
  Report r;
  r.target = "local";
  std::string hostile = "<script>alert(1)</script><img src=x onerror=alert(2)> \"'&\x1b]52;c;ZXZpbA==\x07\xff\u202e";
  r.items.push_back({hostile, hostile, hostile, Verdict::kBroken, hostile, {hostile}});
  std::string html = render_html(r);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&quot;&#39;&amp;"), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_NE(html.find("\\x1b]52"), std::string::npos);
  EXPECT_NE(html.find("\\xff"), std::string::npos);
  EXPECT_NE(html.find("\\u202e"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);  // no script could run anyway
  std::string text = render_text(r);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  EXPECT_NE(text.find("BROKEN"), std::string::npos);
  EXPECT_NE(text.find("FAIL"), std::string::npos);
}

TEST(SelftestProbes, EveryProbeIsEmbeddedAndTakesItsConstants) {
  for (const char* name : {"analyst", "files", "network", "egress", "secrets", "cancel"})
    EXPECT_NE(probe_source(name).find("import"), std::string::npos) << name;
  std::string code = with_constants("print(PORT)\n", {{"PORT", "4242"}, {"NAME", "\"x\""}});
  EXPECT_EQ(code, "NAME = \"x\"\nPORT = 4242\nprint(PORT)\n");
}

}  // namespace
}  // namespace airlock::selftest
