// The host reads a session kernel's protocol lines as untrusted input.
#include <gtest/gtest.h>

#include "sessions/session_protocol.h"

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

TEST(KernelStream, SplitsProtocolLinesFromRawOutputAsTheyArrive) {
  KernelStream stream("\x1eM ", 64);
  std::vector<KernelStream::Piece> out;
  stream.feed("raw text", out);
  stream.feed(" more\n\x1eM {\"a\"", out);
  stream.feed(": 1}\n\x1e", out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, KernelStream::Piece::Kind::kRaw);
  EXPECT_EQ(out[0].text, "raw text") << "raw output goes on at once, without waiting for a newline";
  EXPECT_EQ(out[1].text, " more\n");
  EXPECT_EQ(out[2].kind, KernelStream::Piece::Kind::kLine);
  EXPECT_EQ(out[2].text, "{\"a\": 1}");
  EXPECT_EQ(stream.pending(), 1u) << "a byte that may begin a mark waits for the next";
  stream.feed("x\n", out);
  EXPECT_EQ(out.back().kind, KernelStream::Piece::Kind::kRaw);
  EXPECT_EQ(out.back().text, "\x1ex\n");
}

TEST(KernelStream, ALineCutShortByADeadWriterIsDroppedAndTheNextLineKept) {
  // A kernel killed in the middle of a line: the keeper's kernel_exited line
  // follows the cut one on the same pipe, with no newline between them.
  KernelStream stream("\x1eM ", 1024);
  std::vector<KernelStream::Piece> out;
  stream.feed("\x1eM {\"event\": \"output\", \"text\": \"by", out);
  stream.feed("\x1eM {\"event\": \"kernel_exited\"}\n\x1eM {\"event\": \"ready\"}\n", out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, KernelStream::Piece::Kind::kDropped);
  EXPECT_EQ(out[0].text, "a protocol line cut short");
  EXPECT_EQ(out[1].kind, KernelStream::Piece::Kind::kLine);
  EXPECT_EQ(out[1].text, "{\"event\": \"kernel_exited\"}");
  EXPECT_EQ(out[2].text, "{\"event\": \"ready\"}");
  // Two cut lines in a row: only the last whole one is a line.
  stream.feed("\x1eM {\"a\x1eM {\"b\x1eM {\"c\": 1}\n", out);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[3].kind, KernelStream::Piece::Kind::kDropped);
  EXPECT_EQ(out[4].text, "{\"c\": 1}");
}

TEST(KernelStream, AHugeProtocolLineIsDroppedWhileItStreamsNeverHeldWhole) {
  // A kernel (or code writing to its channel) that sends one 30 MB line: the
  // host holds at most the line limit plus one piece, drops the line as one
  // kDropped piece, and reads the next line normally.
  KernelStream stream("\x1eM ", 1024);
  std::vector<KernelStream::Piece> out;
  stream.feed("\x1eM {\"event\": \"answer\", \"result\": \"", out);
  std::string chunk(65536, 'x');
  size_t most = 0;
  for (int i = 0; i < 480; ++i) {
    stream.feed(chunk, out);
    most = std::max(most, stream.pending());
  }
  EXPECT_LE(most, 1024u + chunk.size()) << "never more than the limit and one piece";
  stream.feed("\"}\n\x1eM {\"event\": \"ready\"}\n", out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, KernelStream::Piece::Kind::kDropped);
  EXPECT_NE(out[0].text.find("over 1024 bytes"), std::string::npos) << out[0].text;
  EXPECT_EQ(out[1].kind, KernelStream::Piece::Kind::kLine);
  EXPECT_EQ(out[1].text, "{\"event\": \"ready\"}") << "the stream goes on after the dropped line";
  EXPECT_EQ(stream.pending(), 0u);
}

KernelEvent part(const std::string& field, const std::string& text, int64_t index = 0) {
  KernelEvent e;
  e.kind = Kind::kPart;
  e.field = field;
  e.text = text;
  e.index = index;
  return e;
}

TEST(AnswerAssembler, KeepsEachFieldWithinItsCapAndSaysWhatWasCut) {
  CallCaps caps{.value_bytes = 10, .html_bytes = 4, .error_bytes = 100, .figures_bytes = 8};
  AnswerAssembler a(caps);
  for (int i = 0; i < 1000; ++i) a.part(part("value", "0123456789"));  // a kernel that ignores the caps
  a.part(part("html", "ab\xc3\xa9\xc3\xa9"));                          // "abéé": cut inside no character
  a.part(part("figure", "AAAA", 0));
  a.part(part("figure", "BBBB", 1));
  a.part(part("figure", "CC", 2));  // over the 8 bytes: left out whole
  a.part(part("figure", "CC", 2));
  auto line = parse_kernel_event(R"({"event": "answer", "id": "call-1", "tag": "n", "status": "ok",
      "error": "E", "result": "more", "truncated": ["error"]})");
  ASSERT_TRUE(line);
  auto r = a.finish(*line);
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.result, "0123456789");
  EXPECT_TRUE(r.truncated.value) << "the host cut it, whatever the kernel said";
  EXPECT_EQ(r.html, "ab\xc3\xa9");
  EXPECT_TRUE(r.truncated.html);
  EXPECT_EQ(r.error, "E");
  EXPECT_TRUE(r.truncated.error) << "the kernel's own claim is kept";
  EXPECT_EQ(r.figures_png_base64, (std::vector<std::string>{"AAAA", "BBBB"}));
  EXPECT_TRUE(r.truncated.figures);
}

TEST(KernelProtocol, DataRequestLinesAndTheCountOfTheRestArriveAsSent) {
  auto kept = parse_kernel_event(R"({"event": "request", "id": "call-1", "tag": "n", "line": "{\"name\": \"a\"}", "bytes": 13})");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->kind, Kind::kRequest);
  EXPECT_EQ(kept->request.line, std::optional<std::string>(R"({"name": "a"})"));
  EXPECT_EQ(kept->request.bytes, 13u);
  // Over the size: no line, only its size; a size of the wrong type reads as 0.
  auto measured = parse_kernel_event(R"({"event": "request", "id": "call-1", "tag": "n", "line": null, "bytes": 9000000})");
  ASSERT_TRUE(measured);
  EXPECT_FALSE(measured->request.line);
  EXPECT_EQ(measured->request.bytes, 9000000u);
  auto odd = parse_kernel_event(R"({"event": "request", "line": 5, "bytes": -3})");
  ASSERT_TRUE(odd);
  EXPECT_FALSE(odd->request.line);
  EXPECT_EQ(odd->request.bytes, 0u);
  // The lines past the limit, as counted by the kernel, survive the assembly of the answer.
  AnswerAssembler a(CallCaps{});
  auto line = parse_kernel_event(R"({"event": "answer", "id": "call-1", "status": "input_requested",
      "requests_over": {"lines": 99996, "bytes": 2399904}})");
  ASSERT_TRUE(line);
  auto r = a.finish(*line);
  EXPECT_EQ(r.status, "input_requested");
  EXPECT_EQ(r.requests_over_lines, 99996u);
  EXPECT_EQ(r.requests_over_bytes, 2399904u);
}

TEST(AnswerAssembler, FieldsWithinTheCapsAreWholeAndUnflagged) {
  AnswerAssembler a(CallCaps{});
  a.part(part("value", "4"));
  a.part(part("value", "2"));
  a.part(part("figure", "iVBO", 0));
  auto line = parse_kernel_event(R"({"event": "answer", "id": "call-1", "status": "error", "exit_code": 2})");
  auto r = a.finish(*line);
  EXPECT_EQ(r.result, "42");
  EXPECT_EQ(r.figures_png_base64, std::vector<std::string>{"iVBO"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.truncated.value || r.truncated.html || r.truncated.error || r.truncated.figures);
}

TEST(ProtocolTag, IsFreshEachTime) {
  auto a = new_protocol_tag(), b = new_protocol_tag();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace airlock::jobs
