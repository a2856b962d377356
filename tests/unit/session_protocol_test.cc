// The host reads a session kernel's protocol lines as untrusted input.
#include <gtest/gtest.h>

#include "jobs/session_protocol.h"

namespace airlock::jobs {
namespace {

using Kind = KernelEvent::Kind;

TEST(KernelEvent, ReadsEveryFieldOfAWellFormedAnswer) {
  auto e = parse_kernel_event(R"({"event": "answer", "id": "call-1", "status": "ok", "result": "42",
      "html": "<table></table>", "error": null, "figures": ["iVBO"], "ms": 1.5, "exit_code": 3, "cwd": "/workspace/d"})");
  ASSERT_TRUE(e) << e.error().what;
  EXPECT_EQ(e->kind, Kind::kAnswer);
  EXPECT_EQ(e->id, "call-1");
  EXPECT_EQ(e->answer.id, "call-1");
  EXPECT_EQ(e->answer.status, "ok");
  EXPECT_EQ(e->answer.result, "42");
  EXPECT_EQ(e->answer.html, "<table></table>");
  EXPECT_EQ(e->answer.error, "");
  EXPECT_EQ(e->answer.figures_png_base64, std::vector<std::string>{"iVBO"});
  EXPECT_DOUBLE_EQ(e->answer.ms, 1.5);
  EXPECT_EQ(e->answer.exit_code, 3);
  EXPECT_EQ(e->answer.cwd, "/workspace/d");
}

TEST(KernelEvent, ReadsOutputStartedReadyAndKernelExited) {
  auto out = parse_kernel_event(R"({"event": "output", "id": "call-2", "stream": "stderr", "text": "x\u001e\n"})");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->kind, Kind::kOutput);
  EXPECT_TRUE(out->is_stderr);
  EXPECT_EQ(out->text, "x\x1e\n");
  auto between = parse_kernel_event(R"({"event": "output", "id": null, "stream": "stdout", "text": "late"})");
  ASSERT_TRUE(between);
  EXPECT_EQ(between->id, "") << "output between calls belongs to no call";
  EXPECT_FALSE(between->is_stderr);
  EXPECT_EQ(parse_kernel_event(R"({"event": "started", "id": "call-2"})")->kind, Kind::kStarted);
  EXPECT_EQ(parse_kernel_event(R"({"event": "ready"})")->kind, Kind::kReady);
  auto exited = parse_kernel_event(R"({"event": "kernel_exited", "reason": "killed by signal 9"})");
  EXPECT_EQ(exited->kind, Kind::kKernelExited);
  EXPECT_EQ(exited->text, "killed by signal 9");
}

TEST(KernelEvent, WrongTypesReadAsEmptyAndNonObjectsAreRefused) {
  auto e = parse_kernel_event(R"({"event": "answer", "id": 7, "status": ["ok"], "figures": [1, "x", null],
      "ms": "slow", "exit_code": 99999})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, Kind::kAnswer);
  EXPECT_EQ(e->id, "");
  EXPECT_EQ(e->answer.status, "");
  EXPECT_EQ(e->answer.figures_png_base64, std::vector<std::string>{"x"});
  EXPECT_EQ(e->answer.ms, 0);
  EXPECT_EQ(e->answer.exit_code, 255) << "an exit status is 0..255";
  EXPECT_EQ(parse_kernel_event(R"({"event": ["answer"], "id": "call-1"})")->kind, Kind::kOther);
  EXPECT_EQ(parse_kernel_event(R"({"id": "call-1", "status": "ok"})")->kind, Kind::kOther)
      << "an answer must say it is one";
  EXPECT_FALSE(parse_kernel_event("[1, 2]"));
  EXPECT_FALSE(parse_kernel_event("{\"id\": "));
  EXPECT_FALSE(parse_kernel_event(""));
}

TEST(OutputCollector, KeepsUpToTheCapAndSaysHowMuchWasCut) {
  OutputCollector c(10);
  c.append("hello ");
  c.append("world, again");
  std::string text = c.take();
  EXPECT_EQ(text.substr(0, 10), "hello worl");
  EXPECT_NE(text.find("cut at 10 bytes; 8 more bytes"), std::string::npos) << text;
  c.append("short");
  EXPECT_EQ(c.take(), "short") << "take() starts over";
}

}  // namespace
}  // namespace airlock::jobs
