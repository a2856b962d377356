// The gateway on loopback sockets (no root, no namespaces): what it forwards,
// what it refuses and how fast, what the upstream sees, and that stop() ends
// every connection.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

#include "egress/gateway.h"
#include "egress/scrub.h"

using namespace airlock;
using namespace airlock::egress;

namespace {

UniqueFd listen_loopback(uint16_t& port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(::listen(fd.get(), 16), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

UniqueFd dial(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  timeval tv{5, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

std::string read_to_eof(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

void send_text(int fd, const std::string& s) { ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), ssize_t(s.size())); }

// An upstream that answers each connection with everything it received
// (up to the end of the head plus 5 body bytes) as the response body.
class EchoUpstream {
 public:
  EchoUpstream() : fd_(listen_loopback(port_)) {
    thread_ = std::thread([this] {
      for (;;) {
        UniqueFd c(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!c || stop_) return;
        timeval tv{0, 300000};
        ::setsockopt(c.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        std::string got;
        char buf[4096];
        for (ssize_t n; (n = ::read(c.get(), buf, sizeof(buf))) > 0;) got.append(buf, static_cast<size_t>(n));
        {
          std::lock_guard lock(mu_);
          seen_ += got;
        }
        std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(got.size()) + "\r\n\r\n" + got;
        (void)!::send(c.get(), reply.data(), reply.size(), MSG_NOSIGNAL);
      }
    });
  }
  ~EchoUpstream() {
    stop_ = true;
    UniqueFd wake = dial(port_);
    thread_.join();
  }
  uint16_t port() const { return port_; }
  std::string seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  uint16_t port_ = 0;
  UniqueFd fd_;
  std::thread thread_;
  std::mutex mu_;
  std::string seen_;
  std::atomic<bool> stop_{false};
};

// An upstream that answers what the test scripts: for each connection, it
// reads the request head and sends the pieces `respond` makes of it, each
// with its own send() and a short pause, so they arrive in separate reads.
class ScriptedUpstream {
 public:
  using Respond = std::function<std::vector<std::string>(const std::string& head)>;
  explicit ScriptedUpstream(Respond respond)
      : fd_(listen_loopback(port_)), respond_(std::move(respond)) {
    thread_ = std::thread([this] {
      for (;;) {
        UniqueFd c(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!c || stop_) return;
        int one = 1;
        ::setsockopt(c.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        std::string head;
        char buf[4096];
        while (head.find("\r\n\r\n") == std::string::npos) {
          ssize_t n = ::read(c.get(), buf, sizeof(buf));
          if (n <= 0) break;
          head.append(buf, static_cast<size_t>(n));
        }
        for (const auto& piece : respond_(head)) {
          (void)!::send(c.get(), piece.data(), piece.size(), MSG_NOSIGNAL);
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      }
    });
  }
  ~ScriptedUpstream() {
    stop_ = true;
    UniqueFd wake = dial(port_);
    thread_.join();
  }
  uint16_t port() const { return port_; }

 private:
  uint16_t port_ = 0;
  UniqueFd fd_;
  Respond respond_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

// The value of header `name` in a request head.
std::string header_in(const std::string& head, const std::string& name) {
  auto at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  at += name.size() + 4;
  return head.substr(at, head.find("\r\n", at) - at);
}

// A rule for the upstream that allows paths under /ok only.
Rule only_ok_path(uint16_t port) {
  Rule paths{"up.test", port};
  paths.allow_private = true;
  paths.path_prefixes = {"/ok"};
  return paths;
}

struct Running {
  uint16_t port = 0;
  std::unique_ptr<Gateway> gateway;
};

Running start_gateway(GatewayConfig config) {
  Running r;
  UniqueFd l = listen_loopback(r.port);
  ::fcntl(l.get(), F_SETFL, O_NONBLOCK);
  auto g = Gateway::start(std::move(l), std::move(config));
  EXPECT_TRUE(g) << g.error().message();
  r.gateway = std::move(*g);
  return r;
}

GatewayConfig config_for(uint16_t upstream_port, Rule extra = {}) {
  GatewayConfig c;
  c.hosts = {{"up.test", {"127.0.0.1"}}, {"sneaky.test", {"127.0.0.1"}}};
  Rule r{"up.test", upstream_port};
  r.allow_private = true;
  c.policy.rules.push_back(r);
  c.policy.rules.push_back(Rule{"sneaky.test", upstream_port});  // no allow_private
  if (!extra.host.empty()) c.policy.rules.insert(c.policy.rules.begin(), extra);
  return c;
}

}  // namespace

TEST(EgressGateway, ForwardsAllowedPlainHttpAndRecordsIt) {
  EchoUpstream up;
  auto gw = start_gateway(config_for(up.port()));
  UniqueFd c = dial(gw.port);
  send_text(c.get(), "GET http://up.test:" + std::to_string(up.port()) + "/hello HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string answer = read_to_eof(c.get());
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK", 0), 0u) << answer;
  EXPECT_NE(answer.find("GET /hello HTTP/1.1\r\nHost: up.test:"), std::string::npos) << answer;
  gw.gateway->stop();
  auto attempts = gw.gateway->take_attempts();
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_TRUE(attempts[0].allowed);
  EXPECT_EQ(attempts[0].address, "127.0.0.1");
  EXPECT_EQ(attempts[0].path, "/hello");
  EXPECT_EQ(attempts[0].bytes_down, answer.size());
  EXPECT_GT(attempts[0].bytes_up, 0u);
}

TEST(EgressGateway, TunnelsConnect) {
  EchoUpstream up;
  auto gw = start_gateway(config_for(up.port()));
  UniqueFd c = dial(gw.port);
  send_text(c.get(), "CONNECT up.test:" + std::to_string(up.port()) + " HTTP/1.1\r\n\r\nraw bytes");
  std::string answer = read_to_eof(c.get());
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 Connection established\r\n\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("raw bytes"), std::string::npos);
}

TEST(EgressGateway, RefusesAtOnceWithTheReason) {
  EchoUpstream up;
  auto gw = start_gateway(config_for(up.port()));
  std::string port = std::to_string(up.port());
  struct Case {
    std::string request, status, reason;
  } cases[] = {
      {"CONNECT other.test:" + port + " HTTP/1.1\r\n\r\n", "403", "not in the job's network policy"},
      {"CONNECT up.test:1 HTTP/1.1\r\n\r\n", "403", "not in the job's network policy"},  // another port
      {"GET http://sneaky.test:" + port + "/ HTTP/1.1\r\n\r\n", "403", "resolved to 127.0.0.1 (loopback)"},
      {"GET http://127.0.0.1:" + port + "/ HTTP/1.1\r\n\r\n", "403", "not in the job's network policy"},
      {"GET /origin-form HTTP/1.1\r\n\r\n", "400", "full URL"},
      {"GET http://up.test:" + port + "/a/../b HTTP/1.1\r\n\r\n", "400", "dot segments"},
  };
  for (const auto& k : cases) {
    auto t0 = std::chrono::steady_clock::now();
    UniqueFd c = dial(gw.port);
    send_text(c.get(), k.request);
    std::string answer = read_to_eof(c.get());
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(answer.substr(9, 3), k.status) << k.request << answer;
    EXPECT_NE(answer.find("airlock egress: "), std::string::npos);
    EXPECT_NE(answer.find(k.reason), std::string::npos) << answer;
    EXPECT_LT(ms, 500) << k.request;  // a refusal, never a hang
  }
  gw.gateway->stop();
  auto attempts = gw.gateway->take_attempts();
  ASSERT_EQ(attempts.size(), std::size(cases));
  for (const auto& a : attempts) EXPECT_FALSE(a.allowed);
  EXPECT_TRUE(up.seen().empty());  // nothing reached the upstream
}

TEST(EgressGateway, ForwardsOnlyTheDeclaredBodySoNothingIsSmuggled) {
  EchoUpstream up;
  auto gw = start_gateway(config_for(up.port(), only_ok_path(up.port())));
  UniqueFd c = dial(gw.port);
  send_text(c.get(), "POST http://up.test:" + std::to_string(up.port()) +
                         "/ok HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /admin HTTP/1.1\r\nHost: up.test\r\n\r\n");
  std::string answer = read_to_eof(c.get());
  EXPECT_NE(answer.find("hello"), std::string::npos) << answer;
  EXPECT_EQ(up.seen().find("/admin"), std::string::npos) << up.seen();
}

TEST(EgressGateway, AddsTheCredentialAndKeepsItOutOfTheResponse) {
  EchoUpstream up;
  Rule secret{"up.test", up.port()};
  secret.allow_private = true;
  secret.secret = "api";
  GatewayConfig config = config_for(up.port(), secret);
  config.secrets = {{"api", {"Authorization", "Bearer top-secret-value"}}};
  auto gw = start_gateway(std::move(config));
  UniqueFd c = dial(gw.port);
  send_text(c.get(), "GET http://up.test:" + std::to_string(up.port()) +
                         "/v1 HTTP/1.1\r\nAuthorization: Bearer forged\r\n\r\n");
  std::string answer = read_to_eof(c.get());
  EXPECT_NE(up.seen().find("Authorization: Bearer top-secret-value\r\n"), std::string::npos) << up.seen();
  EXPECT_EQ(up.seen().find("forged"), std::string::npos);
  EXPECT_EQ(answer.find("top-secret-value"), std::string::npos) << answer;  // echoed back, scrubbed
  EXPECT_NE(answer.find("Authorization: " + std::string(23, '*') + "\r\n"), std::string::npos) << answer;
  gw.gateway->stop();
  auto attempts = gw.gateway->take_attempts();
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].secret, "api");
  EXPECT_EQ(to_json(attempts[0]).dump().find("top-secret"), std::string::npos);
}

TEST(EgressGateway, RefusesToStartWithoutTheNamedSecret) {
  GatewayConfig config;
  Rule r{"api.test", 443};
  r.secret = "missing";
  config.policy.rules.push_back(r);
  uint16_t port = 0;
  auto g = Gateway::start(listen_loopback(port), std::move(config));
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().what.find("'missing'"), std::string::npos);
}

TEST(EgressGateway, StopEndsOpenTunnelsAtOnce) {
  EchoUpstream up;
  auto gw = start_gateway(config_for(up.port()));
  UniqueFd c = dial(gw.port);
  send_text(c.get(), "CONNECT up.test:" + std::to_string(up.port()) + " HTTP/1.1\r\n\r\n");
  char buf[64];
  ASSERT_GT(::read(c.get(), buf, sizeof(buf)), 0);  // established; the tunnel stays open
  UniqueFd idle = dial(gw.port);                     // and one that never sends a request
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto t0 = std::chrono::steady_clock::now();
  gw.gateway->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

// Request smuggling through Connection: a request whose Connection header
// names Content-Length would reach the upstream without it, and its body
// would be read as a second request the policy never judged.
TEST(EgressGateway, ConnectionCannotDropTheFramingOfTheRequest) {
  EchoUpstream up;
  auto gw = start_gateway(config_for(up.port(), only_ok_path(up.port())));
  std::string smuggled = "GET /admin HTTP/1.1\r\nHost: up.test\r\n\r\n";
  for (std::string connection : {"Content-Length", "close, content-length", "Content_Length"}) {
    UniqueFd c = dial(gw.port);
    send_text(c.get(), "POST http://up.test:" + std::to_string(up.port()) +
                           "/ok HTTP/1.1\r\nContent-Length: " + std::to_string(smuggled.size()) +
                           "\r\nConnection: " + connection + "\r\n\r\n" + smuggled);
    std::string answer = read_to_eof(c.get());
    EXPECT_EQ(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << answer;
    EXPECT_NE(answer.find("X-Airlock-Reason: Connection names " +
                          connection.substr(connection.rfind(' ') + 1) +
                          ", which frames the request: refused"),
              std::string::npos)
        << answer;
  }
  gw.gateway->stop();
  EXPECT_EQ(up.seen(), "");  // nothing reached the upstream, least of all /admin
  for (const auto& a : gw.gateway->take_attempts()) {
    EXPECT_FALSE(a.allowed);
    EXPECT_EQ(a.status, 400);
  }
}

// Expect: 100-continue, a pipelined request after the body and headers that
// Connection names: the upstream receives exactly the request that was
// judged, byte for byte, and the client gets its 100 Continue from the gateway.
TEST(EgressGateway, TheUpstreamReceivesExactlyTheJudgedRequest) {
  EchoUpstream up;
  auto gw = start_gateway(config_for(up.port(), only_ok_path(up.port())));
  std::string port = std::to_string(up.port());
  UniqueFd c = dial(gw.port);
  send_text(c.get(),
            "POST http://up.test:" + port +
                "/ok HTTP/1.1\r\nHost: up.test\r\nUser-Agent: t\r\nContent-Length: 5\r\n"
                "Expect: 100-continue\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n\r\n");
  std::string interim(25, '\0');
  ASSERT_EQ(::recv(c.get(), interim.data(), interim.size(), MSG_WAITALL), 25);
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  send_text(c.get(), "helloGET /admin HTTP/1.1\r\nHost: up.test:" + port + "\r\n\r\n");
  std::string answer = read_to_eof(c.get());
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK", 0), 0u) << answer;
  gw.gateway->stop();
  EXPECT_EQ(up.seen(),
            "POST /ok HTTP/1.1\r\nHost: up.test:" + port +
                "\r\nContent-Length: 5\r\nUser-Agent: t\r\nConnection: close\r\n\r\nhello");
}

TEST(EgressGateway, ABareLineFeedIsRefusedAtOnce) {
  EchoUpstream up;
  auto gw = start_gateway(config_for(up.port()));
  auto t0 = std::chrono::steady_clock::now();
  UniqueFd c = dial(gw.port);
  send_text(c.get(), "GET http://up.test:" + std::to_string(up.port()) + "/ HTTP/1.1\nHost: x\n\n");
  std::string answer = read_to_eof(c.get());
  EXPECT_NE(answer.find("400 Bad Request"), std::string::npos) << answer;
  EXPECT_NE(answer.find("a bare LF in the request head"), std::string::npos) << answer;
  EXPECT_LT(std::chrono::steady_clock::now() - t0,
            std::chrono::seconds(5));  // not the 10 s head timeout
  gw.gateway->stop();
  EXPECT_EQ(up.seen(), "");
}

namespace {

const std::string kToken = "tok-9c1f3e5a7b2d4c6e8f0a1b3c";
const std::string kSecret = "Bearer " + kToken;

// A gateway whose rule for the upstream adds kSecret.
Running gateway_with_secret(uint16_t upstream_port) {
  Rule secret{"up.test", upstream_port};
  secret.allow_private = true;
  secret.secret = "api";
  GatewayConfig config = config_for(upstream_port, secret);
  config.secrets = {{"api", {"Authorization", kSecret}}};
  return start_gateway(std::move(config));
}

std::string fetch(uint16_t gateway, uint16_t upstream, const std::string& path) {
  UniqueFd c = dial(gateway);
  send_text(c.get(), "GET http://up.test:" + std::to_string(upstream) + path + " HTTP/1.1\r\n\r\n");
  return read_to_eof(c.get());
}

std::string leaked_piece(const std::string& text) {
  for (size_t at = 0; at + kMinFragment <= kToken.size(); ++at)
    if (text.find(kToken.substr(at, kMinFragment)) != std::string::npos)
      return kToken.substr(at, kMinFragment);
  return "";
}

std::string chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return size + data + "\r\n";
}

}  // namespace

// The upstream echoes the credential it got in a chunked response, split
// across two chunks (and two reads) at every offset: the client never sees it.
TEST(EgressGateway, AChunkedEchoOfTheCredentialIsScrubbedAtEverySplit) {
  ScriptedUpstream up([](const std::string& head) {
    std::string value = header_in(head, "Authorization");
    size_t k = std::stoul(head.substr(head.find("/split/") + 7));
    std::string body = "you sent " + value + ".";
    size_t cut = std::min(body.size(), body.find(value) + k);
    return std::vector<std::string>{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                                    chunk(body.substr(0, cut)), chunk(body.substr(cut)),
                                    "0\r\n\r\n"};
  });
  auto gw = gateway_with_secret(up.port());
  for (size_t k = 0; k <= kSecret.size(); ++k) {
    std::string answer = fetch(gw.port, up.port(), "/split/" + std::to_string(k));
    EXPECT_EQ(leaked_piece(answer), "") << "split " << k << ": " << answer;
    EXPECT_NE(answer.find("you sent "), std::string::npos) << answer;
    std::string starred(kSecret.size(), '*');
    // Re-chunked by the gateway: the stars may be split, but all of them arrive.
    EXPECT_EQ(std::count(answer.begin(), answer.end(), '*'), static_cast<long>(kSecret.size()))
        << answer;
    EXPECT_NE(answer.find("0\r\n\r\n"), std::string::npos) << "a complete chunked body: " << answer;
  }
}

TEST(EgressGateway, ABareTokenOrAHeaderEchoIsScrubbedToo) {
  ScriptedUpstream up([](const std::string& head) {
    std::string token = header_in(head, "Authorization").substr(7);  // without "Bearer "
    std::string body = "token=" + token + "\nprefix=" + token.substr(0, 10) + "...\n";
    return std::vector<std::string>{
        "HTTP/1.1 200 OK\r\nX-Token: " + token + "\r\nX-Auth: Bearer " + token +
            "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 9),
        body.substr(9)};
  });
  auto gw = gateway_with_secret(up.port());
  std::string answer = fetch(gw.port, up.port(), "/token");
  EXPECT_EQ(leaked_piece(answer), "") << answer;
  std::string bare(kToken.size(), '*');
  EXPECT_NE(answer.find("\r\nX-Token: " + bare + "\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("\r\nX-Auth: " + std::string(kSecret.size(), '*') + "\r\n"),
            std::string::npos)
      << answer;
  EXPECT_NE(answer.find("token=" + bare + "\nprefix=**********...\n"), std::string::npos) << answer;
}

TEST(EgressGateway, AResponseTheScrubberCannotReadIsRefused) {
  ScriptedUpstream up([](const std::string&) {
    return std::vector<std::string>{
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\n\x1f\x8b\x08\x00"};
  });
  auto gw = gateway_with_secret(up.port());
  std::string answer = fetch(gw.port, up.port(), "/gzip");
  EXPECT_EQ(answer.rfind("HTTP/1.1 502 Bad Gateway\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("Content-Encoding gzip although the gateway asked for identity"),
            std::string::npos)
      << answer;
  gw.gateway->stop();
  auto attempts = gw.gateway->take_attempts();
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_FALSE(attempts[0].allowed);
  EXPECT_EQ(attempts[0].status, 502);
}
