// The pure parts of `airlock session`: arguments, bodies, exit statuses,
// output de-duplication on resume, SSE parsing, URLs.
#include <gtest/gtest.h>

#include "http/routing.h"
#include "http/sse.h"
#include "http/url.h"
#include "cli/session_args.h"

namespace airlock::cli {
namespace {

using json = nlohmann::json;

SessionArgs parse_ok(const std::vector<std::string>& args) {
  auto a = parse_session_args(args);
  EXPECT_TRUE(a.has_value()) << (a ? "" : a.error().message());
  return a ? *a : SessionArgs{};
}

std::string parse_error(const std::vector<std::string>& args) {
  auto a = parse_session_args(args);
  return a ? "" : a.error().message();
}

TEST(SessionArgs, CreateTakesLimitsSeveralInputsAndASnapshot) {
  auto a = parse_ok({"create", "--idle-timeout", "60", "--max-lifetime=600", "--memory", "256", "--timeout", "2.5",
                     "--input", "f1", "f2", "--snapshot", "sha256:ab", "--server", "http://127.0.0.1:1"});
  EXPECT_EQ(a.verb, "create");
  EXPECT_EQ(a.inputs, (std::vector<std::string>{"f1", "f2"}));
  EXPECT_EQ(*a.server, "http://127.0.0.1:1");
  EXPECT_EQ(create_body(a), json::parse(R"({"idle_timeout_s": 60, "max_lifetime_s": 600, "inputs": ["f1", "f2"],
      "snapshot": "sha256:ab", "policy": {"memory_mb": 256, "timeout_s": 2.5}})"));
  EXPECT_EQ(create_body(parse_ok({"create"})), json::object());
}

TEST(SessionArgs, ExecCodeComesFromWordsAFileOrStdin) {
  auto words = parse_ok({"exec", "s1", "--shell", "--timeout", "3", "--", "ls", "-la"});
  EXPECT_EQ(code_source(words), CodeSource::kArgument);
  EXPECT_EQ(code_argument(words), "ls -la");
  EXPECT_EQ(exec_body(words, "ls -la"), json::parse(R"({"code": "ls -la", "kind": "shell", "timeout_s": 3.0})"));
  EXPECT_EQ(code_source(parse_ok({"exec", "s1", "-f", "x.py"})), CodeSource::kFile);
  EXPECT_EQ(code_source(parse_ok({"exec", "s1", "-"})), CodeSource::kStdin);
  EXPECT_EQ(exec_body(parse_ok({"exec", "s1", "1+1"}), "1+1"), json::parse(R"({"code": "1+1", "kind": "python"})"));
}

TEST(SessionArgs, ACallAnswersDataRequestsAndARefusalTakesItsReason) {
  auto answered = parse_ok({"exec", "s1", "--answer", "r1", "--answer=r2", "df.shape"});
  EXPECT_EQ(exec_body(answered, "df.shape"),
            json::parse(R"({"code": "df.shape", "kind": "python", "answers": ["r1", "r2"]})"));
  auto refused = parse_ok({"refuse", "s1", "r3", "not", "for", "this", "assistant"});
  EXPECT_EQ(refused.verb, "refuse");
  EXPECT_EQ(refused.positional, (std::vector<std::string>{"s1", "r3", "not", "for", "this", "assistant"}));
  EXPECT_FALSE(parse_session_args({"refuse", "s1", "r3"}));  // a refusal needs its reason
  EXPECT_FALSE(parse_session_args({"create", "--answer", "r1"}));  // only a call answers
}

TEST(SessionArgs, MistakesAreNamed) {
  EXPECT_EQ(parse_error({}), "session needs a command");
  EXPECT_EQ(parse_error({"frobnicate"}), "unknown session command 'frobnicate'");
  EXPECT_EQ(parse_error({"files"}), "files needs upload, ls, download or rm");
  EXPECT_EQ(parse_error({"list", "--shell"}), "--shell is not an option of session list");
  EXPECT_EQ(parse_error({"get"}), "wrong number of arguments to session get");
  EXPECT_EQ(parse_error({"files", "rm", "s1"}), "wrong number of arguments to session files rm");
  EXPECT_EQ(parse_error({"exec", "s1"}), "exec needs the code: CODE, -f FILE, or - (standard input)");
  EXPECT_EQ(parse_error({"exec", "s1", "x", "-f", "y"}), "exec needs the code: CODE, -f FILE, or - (standard input)");
  EXPECT_EQ(parse_error({"create", "--memory", "lots"}), "--memory: a whole number of MB, not \"lots\"");
  EXPECT_EQ(parse_error({"exec", "s1", "--timeout", "-1", "x"}), "--timeout: a number of seconds more than 0, not \"-1\"");
  EXPECT_EQ(parse_error({"list", "--server"}), "--server needs a value");
  EXPECT_EQ(parse_error({"list", "--key", "secret"}), "unknown option --key");
}

TEST(SessionArgs, ServerComesFromTheFlagThenTheEnvironment) {
  EXPECT_EQ(server_url(parse_ok({"list", "--server", "http://[::1]:9"}), "http://127.0.0.1:7"), "http://[::1]:9");
  EXPECT_EQ(server_url(parse_ok({"list"}), "http://127.0.0.1:7"), "http://127.0.0.1:7");
  EXPECT_EQ(server_url(parse_ok({"list"}), nullptr), "http://127.0.0.1:8470");
  EXPECT_EQ(server_url(parse_ok({"list"}), ""), "http://127.0.0.1:8470");
}

TEST(SessionExit, StatusesMapToExitCodes) {
  EXPECT_EQ(exec_exit_status(json{{"result", {{"status", "ok"}}}}, false), 0);
  EXPECT_EQ(exec_exit_status(json{{"result", {{"status", "error"}}}}, false), 1);
  EXPECT_EQ(exec_exit_status(json{{"result", {{"status", "interrupted"}}}}, false), 130);
  EXPECT_EQ(exec_exit_status(json{{"result", {{"status", "timed_out"}}}}, true), 124);
  EXPECT_EQ(exec_exit_status(json{{"result", {{"status", "kernel_died"}}}}, false), 2);
  EXPECT_EQ(exec_exit_status(json{{"result", {{"status", "input_requested"}, {"exit_code", 0}}}}, true), 3);  // asked, even from a shell call that exited 0
  EXPECT_EQ(exec_exit_status(json{{"result", {{"status", "error"}, {"exit_code", 3}}}}, true), 3);
  EXPECT_EQ(exec_exit_status(json{{"result", {{"status", "ok"}, {"exit_code", 0}}}}, true), 0);
  EXPECT_EQ(exec_exit_status(json{{"status", "ok"}}, false), 0);  // a view without its result
}

TEST(SessionExit, ResumedOutputIsNeverPrintedTwice) {
  EXPECT_EQ(unseen_part(0, 0, "hello"), "hello");
  EXPECT_EQ(unseen_part(5, 5, "world"), "world");
  EXPECT_EQ(unseen_part(7, 5, "world"), "rld");
  EXPECT_EQ(unseen_part(10, 5, "world"), "");
  EXPECT_EQ(unseen_part(12, 5, "world"), "");
}

TEST(SessionExit, HttpErrorsAreOneLineWithAHint) {
  EXPECT_EQ(describe_http_error(409, R"j({"error": {"code": "session_closed", "message": "session s1 is closed (idle)"}})j"),
            "HTTP 409 session_closed: session s1 is closed (idle)");
  EXPECT_EQ(describe_http_error(401, R"({"error": {"code": "unauthenticated", "message": "unknown or revoked API key"}})"),
            "HTTP 401 unauthenticated: unknown or revoked API key (check $AIRLOCK_API_KEY or --key-file)");
  EXPECT_EQ(describe_http_error(502, "bad\ngateway"), "HTTP 502: bad gateway");
  EXPECT_EQ(describe_http_error(429, ""), "HTTP 429 (the service is at its limit; try again later)");
}

TEST(SessionExit, Base64) {
  EXPECT_EQ(decode_base64("aGVsbG8="), "hello");
  EXPECT_EQ(decode_base64("aGk="), "hi");
  EXPECT_EQ(decode_base64("YWJj"), "abc");
  EXPECT_EQ(decode_base64(""), "");
  EXPECT_EQ(decode_base64("abc"), std::nullopt);
  EXPECT_EQ(decode_base64("a*c="), std::nullopt);
}

TEST(Sse, EventsSplitAcrossPiecesComeOutWhole) {
  api::SseParser p;
  std::string wire = ": comment\n\nid: 5\nevent: stdout\ndata: {\"a\":\ndata: 1}\n\nid: done\r\nevent: result\r\ndata: x\r\n\r\n";
  std::vector<api::Event> got;
  for (char c : wire) {  // one byte at a time
    p.feed(std::string_view(&c, 1));
    while (auto ev = p.next()) got.push_back(*ev);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, "5");
  EXPECT_EQ(got[0].event, "stdout");
  EXPECT_EQ(got[0].data, "{\"a\":\n1}");
  EXPECT_EQ(got[1].id, "done");
  EXPECT_EQ(got[1].event, "result");
  EXPECT_EQ(got[1].data, "x");
  p.feed("id: 9\ndata: half");
  EXPECT_FALSE(p.next());
}

TEST(Url, PercentEncodingRoundTrips) {
  EXPECT_EQ(api::percent_encode("a b/c?d&e=f%g"), "a%20b%2Fc%3Fd%26e%3Df%25g");
  EXPECT_EQ(api::percent_encode("plain-._~AZ09"), "plain-._~AZ09");
  std::string odd = "dir/ä ö+x#\x01";
  EXPECT_EQ(api::percent_decode(api::percent_encode(odd), true), odd);
}

TEST(Url, OnlyLoopbackPlainHttp) {
  auto a = api::parse_server_url("http://127.0.0.1:8470");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8470);
  auto b = api::parse_server_url("http://localhost:9/");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "127.0.0.1");
  auto c = api::parse_server_url("http://[::1]:10");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, 10);
  EXPECT_EQ(api::parse_server_url("http://127.1.2.3")->port, 80);
  EXPECT_FALSE(api::parse_server_url("https://127.0.0.1:1"));
  EXPECT_FALSE(api::parse_server_url("http://10.0.0.1:1"));
  EXPECT_FALSE(api::parse_server_url("http://example.com:1"));
  EXPECT_FALSE(api::parse_server_url("http://127.0.0.1:99999"));
  EXPECT_FALSE(api::parse_server_url("http://127.0.0.1:"));
  EXPECT_FALSE(api::parse_server_url("http://127.0.0.1:1/v1"));
  EXPECT_FALSE(api::parse_server_url("http://user@127.0.0.1:1"));
}

}  // namespace
}  // namespace airlock::cli
